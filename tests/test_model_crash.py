"""The model's process crashes (SIGSEGV) while it generates, in each front end: ``frogtui run``
ends by itself with one line and a readable trajectory, the app stays open with a notice and the
next message works, ``frogtui acp`` answers the prompt with the error and keeps the connection.

The crash is a real SIGSEGV in the real model process (SmolLM2, Q4_1), raised there after a few
pieces of text by ``FROGTUI_RUNNER_FAULT`` (``models/runner.py``), once."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from acp.helpers import text_block

from frogtui import headless
from frogtui.config import Config, LlamaSettings
from frogtui.models import buffers
from frogtui.models.gguf_spec import read_gguf_header
from frogtui.ui.app import FrogApp
from frogtui.ui.chat import Notice
from tests.acp.support import ScriptedClient, acp_agent
from tests.models.conftest import smollm2_gguf  # noqa: F401 (the fixture)
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for

CRASH_LINE = "the model's process (llama.cpp) was killed by SIGSEGV while generating"


@pytest.fixture
def crash_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The next model process crashes after 3 pieces of text; the one after it runs clean."""
    marker = tmp_path / "crashed"
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "segv-after-pieces:3")
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT_ONCE", str(marker))
    return marker


def small_model_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[sampling]\nseed = 3\n[llama]\nn_ctx = 2048\n[limits]\nmax_tokens_per_turn = 64\n")
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["this machine's", "one whose extra weight buffers crash"])
def test_headless_ends_by_itself_with_one_line_and_a_trajectory(
    py_repo: Path, smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str], crash_once: Path, cpu: str,
) -> None:
    """On either path a first load takes (the extra weight buffers kept, or their probe crashing
    first, as on AMX: simulated in the second case) the turn's crash is one line."""
    if cpu != "this machine's":
        monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "extra-buffers-probe,segv-after-pieces:3")
    small_model_config(tmp_path, monkeypatch)
    trajectory = tmp_path / "t.json"
    code = headless.main(["Tell me a story.", "--repo", str(py_repo), "--model", str(smollm2_gguf), "--trajectory", str(trajectory)])
    out, err = capsys.readouterr()
    assert crash_once.exists() and code == 1
    (said,) = [line for line in err.splitlines() if CRASH_LINE in line]  # one line says it
    assert said.startswith("exit_reason=llm_query_error")
    kept = buffers.remembered(buffers.machine_key(read_gguf_header(smollm2_gguf, {"general.file_type"})["general.file_type"]))
    assert kept is not None and (kept is False or cpu == "this machine's")
    probe = [line for line in err.splitlines() if "crashed while trying its extra weight buffers" in line]
    assert len(probe) == (0 if kept else 1), err  # the probe's crash, where it crashed, is said once, as itself
    assert all("SIGSEGV" in line for line in probe) and not any(CRASH_LINE in line for line in probe)
    data = json.loads(trajectory.read_text())
    assert data["exit_reason"] == "llm_query_error" and CRASH_LINE in data["error"]


@pytest.mark.slow
async def test_the_app_stays_open_says_so_and_the_next_message_works(
    py_repo: Path, smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_once: Path,  # noqa: F811
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    config = Config(repo=py_repo, model_spec=str(smollm2_gguf), llama=LlamaSettings(n_ctx=2048), rules_file=rules_file(tmp_path))
    config = config.replace(limits=config.limits.__class__(max_tokens_per_turn=48))
    app = FrogApp(config, clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "Tell me a story.")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, timeout=60, what="the crashed run to end")
        assert app.last_exit_reason == "llm_query_error" and crash_once.exists()
        notices = [n.render().plain for n in app.query(Notice)]
        assert any(CRASH_LINE in n and "the model starts again when it is next asked" in n for n in notices), notices
        await submit(pilot, "Shorter, please.")
        await wait_for(pilot, lambda: app.last_exit_reason != "llm_query_error" and not app.busy, timeout=60, what="the next run")
        assert app.last_exit_reason in ("agent", "max_tokens_per_turn")
        assert app.is_running


@pytest.mark.slow
async def test_acp_answers_the_prompt_with_the_error_and_keeps_the_connection(
    py_repo: Path, smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_once: Path,  # noqa: F811
) -> None:
    small_model_config(tmp_path, monkeypatch)
    client = ScriptedClient()
    async with acp_agent(client, "--model", str(smollm2_gguf), cwd=py_repo, stderr=tmp_path / "stderr", env=dict(os.environ),
                         process=True) as conn:
        new = await conn.new_session(cwd=str(py_repo))
        first = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("Tell me a story.")]), 120)
        crashed_text = client.text("agent_message_chunk")
        assert crash_once.exists() and CRASH_LINE in crashed_text, crashed_text[-500:]
        second = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("Shorter.")]), 120)
        assert second.stop_reason in ("end_turn", "max_tokens")
        assert first.stop_reason in ("end_turn", "refusal")
        assert len(client.text("agent_message_chunk")) > len(crashed_text)
