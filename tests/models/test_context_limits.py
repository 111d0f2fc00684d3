"""The loop's context limits with a real local model whose context is small, and the context meter and
the hand-off with a local model and a server."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from frogtui.agent.events import StepUsage
from frogtui.agent.loop import Agent
from frogtui.config import Limits
from frogtui.models import load_model
from frogtui.protocol import Model, TurnEnd
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS, ToolRunner, Workspace
from tests.models.conftest import load_local, make_config


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


class Events:
    def __init__(self) -> None:
        self.usage: list[StepUsage] = []

    def emit(self, event: object) -> None:
        if isinstance(event, StepUsage):
            self.usage.append(event)


def prompt_of(model: Model, messages: list[dict[str, Any]]) -> int:
    items = model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=1, cancel=threading.Event())
    return [i for i in items if isinstance(i, TurnEnd)][0].usage.prompt_tokens


def meter_and_handoff(model: Model, repo: Path, budget: int) -> None:
    """Run a turn, hand off, run again: the meter's figures are the model's own counts."""
    events = Events()
    agent = Agent(model, ToolRunner(Workspace(repo)), NoPerson(), events, limits=Limits(max_tokens_per_turn=4, max_context_tokens=50_000))
    agent.run("Say something.")
    first = events.usage[-1]
    assert first.budget == budget and first.context_tokens == first.usage.prompt_tokens + first.usage.generated_tokens > 0
    handoff = "# Hand-off\nThis continues an earlier conversation.\n\n## Task\nSay something.\n"
    agent.hand_off(handoff)
    second = events.usage[-1]
    fresh = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": handoff}]
    assert second.usage.prompt_tokens == prompt_of(model, fresh)  # a fresh conversation, nothing of the first one
    assert second.session_tokens == first.context_tokens + second.context_tokens


@pytest.mark.slow
def test_the_meter_and_a_handoff_with_a_local_model(hybrid_gguf: Path, tmp_path: Path) -> None:
    model = load_local(hybrid_gguf, n_ctx=4096)
    try:
        meter_and_handoff(model, tmp_path, budget=4096)  # the model's context is smaller than the configured budget
    finally:
        model.close()


@pytest.mark.slow
def test_the_meter_and_a_handoff_with_a_server(llama_server: str, tmp_path: Path) -> None:
    model = load_model(llama_server, make_config())
    try:
        meter_and_handoff(model, tmp_path, budget=min(50_000, model.context_size or 50_000))
    finally:
        model.close()
