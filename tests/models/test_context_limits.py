"""The loop's context limits with a real local model whose context is small."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from frogtui.agent.loop import Agent
from frogtui.protocol import TurnEnd
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS, ToolRunner, Workspace
from tests.models.conftest import load_local


class Quiet:
    def emit(self, event: object) -> None:
        pass


class NoPerson:
    def approve(self, request):  # type: ignore[no-untyped-def]
        raise AssertionError("nothing should be asked")


@pytest.mark.slow
def test_context_filling_up_during_generation_is_max_context_len(hybrid_gguf: Path, tmp_path: Path) -> None:
    probe = load_local(hybrid_gguf)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "Say something long."}]
    prompt = [i for i in probe.stream_turn(messages, TOOL_SCHEMAS, max_tokens=1, cancel=threading.Event()) if isinstance(i, TurnEnd)][
        0
    ].usage.prompt_tokens
    probe.close()
    # room for two generated tokens, far fewer than max_tokens_per_turn
    model = load_local(hybrid_gguf, n_ctx=prompt + 2)
    try:
        assert model.context_size == prompt + 2
        repo = tmp_path / "repo"
        repo.mkdir()
        agent = Agent(model, ToolRunner(Workspace(repo)), NoPerson(), Quiet())
        result = agent.run("Say something long.")
    finally:
        model.close()
    assert result.exit_reason == "max_context_len", result.error
    assert "filled up" in result.error


@pytest.mark.slow
def test_a_prompt_larger_than_the_context_is_max_context_len(hybrid_gguf: Path, tmp_path: Path) -> None:
    model = load_local(hybrid_gguf, n_ctx=1024)
    try:
        repo = tmp_path / "repo"
        repo.mkdir()
        result = Agent(model, ToolRunner(Workspace(repo)), NoPerson(), Quiet()).run("hello")
    finally:
        model.close()
    assert result.exit_reason == "max_context_len"
    assert result.error.startswith("the prompt needs ") and "the context holds 1024" in result.error
