"""config.toml: defaults, overrides, bad files, and --help naming every key."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.config import SETTINGS_HELP, Limits, LlamaSettings, Sampling, config_dir, load_config
from frogtui.errors import ConfigError


def test_defaults_are_the_model_cards_evaluation_settings() -> None:
    config = load_config(Path("/nonexistent/config.toml"))
    assert (config.limits.max_steps, config.limits.max_tokens_per_turn, config.limits.max_context_tokens) == (100, 8192, 65536)
    s = config.sampling
    assert (s.temperature, s.top_p, s.top_k, s.min_p, s.repeat_penalty) == (0.6, 0.95, 20, 0.0, 1.0)
    assert config.llama.n_ctx == 65536


def test_file_then_flags(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "replay:x.jsonl"\ntheme = "frog-light"\n[limits]\nmax_steps = 7\n[llama]\nn_ctx = 32768\n')
    config = load_config(path, theme="frog-dark", model_spec=None)
    assert (config.model_spec, config.theme, config.limits.max_steps, config.llama.n_ctx) == ("replay:x.jsonl", "frog-dark", 7, 32768)
    assert config.limits.max_tokens_per_turn == 8192


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("model = ", "not valid TOML"),
        ("[limits]\nmax_stepz = 3\n", "unknown key(s) in [limits]: max_stepz"),
        ("colour = 1\n", "unknown key 'colour'"),
        ("[sampling]\ntemperature = 'hot'\n", "[sampling] temperature must be a number, not 'hot'"),
        ("[llama]\nflash_attn = 1\n", "[llama] flash_attn must be true or false, not 1"),
        ("[limits]\nmax_steps = 2.5\n", "[limits] max_steps must be an integer, not 2.5"),
    ],
)
def test_bad_files_are_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        load_config(path)


def test_help_names_every_setting() -> None:
    for cls in (Limits, Sampling, LlamaSettings):
        for field in dataclasses.fields(cls):
            assert field.name in SETTINGS_HELP, f"{cls.__name__}.{field.name} is missing from --help"
    out = subprocess.run([sys.executable, "-m", "frogtui", "run", "--help"], capture_output=True, text=True).stdout
    assert "config.toml" in out and "limits.max_steps" in out


def test_a_bad_config_file_stops_frogtui_run_with_one_line(tmp_path: Path, py_repo: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[sampling]\ntemperature = 'hot'\nfoo = 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", "replay:none.jsonl"],
        capture_output=True, text=True, env={**__import__("os").environ, "FROGTUI_CONFIG": str(config)},
    )
    assert proc.returncode == 2 and "unknown key(s) in [sampling]: foo" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(("value", "ok"), [('"auto"', "auto"), ("true", True), ("false", False), ('"maybe"', None), ("1", None)])
def test_extra_buffers_is_auto_true_or_false(value: str, ok: object, tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(f"[llama]\nextra_buffers = {value}\n")
    if ok is None:
        with pytest.raises(ConfigError, match=r'\[llama\] extra_buffers must be "auto", true or false'):
            load_config(path)
    else:
        assert load_config(path).llama.extra_buffers == ok


def test_a_config_file_named_but_not_there_is_one_line_and_exit_2(py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    replay = tmp_path / "r.jsonl"
    replay.write_text('{"content": "hi"}\n')
    env = {**os.environ, "FROGTUI_CONFIG": str(tmp_path / "missing.toml")}
    proc = subprocess.run([sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", f"replay:{replay}"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2 and proc.stderr == f"frogtui: config file not found: {tmp_path / 'missing.toml'} (FROGTUI_CONFIG)\n"
    monkeypatch.delenv("FROGTUI_CONFIG", raising=False)
    default = config_dir() / "config.toml"
    default.parent.mkdir(parents=True, exist_ok=True)
    default.symlink_to(tmp_path / "elsewhere.toml")  # a dangling link is not "no config"
    with pytest.raises(ConfigError, match="is a link to .*elsewhere.toml, which does not exist"):
        load_config()
    default.unlink()
    default.mkdir()
    with pytest.raises(ConfigError, match="is not a regular file"):
        load_config()
