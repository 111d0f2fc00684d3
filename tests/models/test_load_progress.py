"""Load progress reaches the caller (the app shows it) instead of stderr."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.models import load_model
from frogtui.models.gguf_spec import progress_reporter
from tests.models.conftest import make_config


@pytest.mark.slow
def test_load_model_reports_loading_and_the_settings_chosen(hybrid_gguf: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines: list[str] = []
    model = load_model(str(hybrid_gguf), make_config(n_ctx=2048), report=lines.append)
    try:
        assert lines[0].startswith(f"loading {hybrid_gguf.name} (") and lines[0].endswith(" GB)…")
        assert lines[-1].startswith(f"{hybrid_gguf.name}: qwen35, n_ctx 2048")
        assert "frogtui:" not in capsys.readouterr().err, "with a report callable nothing goes to stderr"
    finally:
        model.close()


def test_download_progress_is_reported_in_megabytes() -> None:
    lines: list[str] = []
    bar_class = progress_reporter(lines.append)
    bar = bar_class(total=3_000_000, desc="model.gguf", mininterval=0)
    for _ in range(3):
        bar.update(1_000_000)
    bar.close()
    assert lines[-1] == "downloading model.gguf: 3/3 MB"
    assert all(line.startswith("downloading model.gguf: ") for line in lines)


@pytest.mark.slow
def test_a_template_without_tools_is_reported(smollm2_gguf: Path, hybrid_gguf: Path) -> None:
    lines: list[str] = []
    load_model(str(smollm2_gguf), make_config(n_ctx=2048), report=lines.append).close()
    assert "its chat template does not show the tools to the model" in lines[-1]
    lines.clear()
    load_model(str(hybrid_gguf), make_config(n_ctx=2048), report=lines.append).close()
    assert "warning" not in lines[-1]
