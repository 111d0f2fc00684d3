"""The OpenAI-compatible backend against a real ``python -m llama_cpp.server`` (SmolLM2), plus the
stream-chunk handling for the reasoning and tool-call shapes other servers send."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from frogtui import headless
from frogtui.agent.toolcalls import StreamParser
from frogtui.errors import ModelError, ModelLoadError
from frogtui.models import load_model
from frogtui.models.openai_compat import _TurnState
from frogtui.protocol import ToolCall, TurnEnd
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS
from tests.models.conftest import free_port, make_config


@pytest.mark.slow
def test_streams_a_turn_from_a_real_server(llama_server: str) -> None:
    model = load_model(llama_server, make_config())
    assert model.name.startswith("SmolLM2") and model.opens_reasoning is False
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "What is 2 + 2?"}]
    items = list(model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=12, cancel=threading.Event()))
    end = items[-1]
    assert isinstance(end, TurnEnd) and end.finish_reason in ("stop", "length")
    assert "".join(x for x in items if isinstance(x, str)).strip()
    assert 0 < end.usage.generated_tokens <= 12 and end.usage.ttft_s > 0
    model.close()


@pytest.mark.slow
def test_cancel_closes_the_stream(llama_server: str) -> None:
    model = load_model(llama_server, make_config())
    cancel = threading.Event()
    stream = model.stream_turn([{"role": "user", "content": "Tell a long story about frogs."}], [], max_tokens=500, cancel=cancel)
    assert isinstance(next(stream), str)
    cancel.set()
    started = time.perf_counter()
    end = list(stream)[-1]
    assert end.finish_reason == "cancelled" and time.perf_counter() - started < 0.5
    model.close()


@pytest.mark.slow
def test_frogtui_run_with_a_server_url(llama_server: str, py_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = headless.main(["What is the capital of France?", "--repo", str(py_repo), "--model", llama_server])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip() and "exit_reason=agent" in err


def test_unreachable_server_and_http_errors_are_clear() -> None:
    with pytest.raises(ModelLoadError, match=r"cannot reach the model server at http://127\.0\.0\.1:\d+/v1/models"):
        load_model(f"http://127.0.0.1:{free_port()}/v1", make_config())
    with pytest.raises(ModelLoadError, match="bad server URL"):
        load_model("http://", make_config())


@pytest.mark.slow
def test_server_side_error_is_a_model_error(llama_server: str) -> None:
    model = load_model(f"{llama_server}#SmolLM2", make_config())
    assert model.model == "SmolLM2"
    with pytest.raises(ModelError, match="HTTP 4|HTTP 5"):
        list(model.stream_turn([{"role": "nobody", "content": 3}], [], max_tokens=5, cancel=threading.Event()))
    model.close()


USAGE = {"prompt_tokens": 50, "completion_tokens": 9}


def sse(*deltas: dict[str, Any], finish: str = "stop") -> list[str]:
    lines = [f"data: {json.dumps({'choices': [{'delta': d}]})}" for d in deltas]
    return lines + [
        "data: " + json.dumps({"choices": [{"delta": {}, "finish_reason": finish}], "usage": USAGE}),
        "data: [DONE]",
    ]


def parse(lines: list[str], raw_reasoning: bool | None = None) -> tuple[StreamParser, list[Any], _TurnState]:
    turn = _TurnState(raw_reasoning)
    parser = StreamParser(opens_reasoning=False)
    calls = []
    for line in lines:
        for text in turn.take_line(line):
            parser.feed(text)
    for item in turn.finish():
        if isinstance(item, ToolCall):
            calls.append(item)
        else:
            parser.feed(item)
    parser.finish()
    return parser, calls, turn


def test_split_reasoning_and_structured_tool_calls() -> None:
    lines = sse(
        {"reasoning_content": "Let me "},
        {"reasoning_content": "look."},
        {"content": "Reading it."},
        {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "Read", "arguments": '{"file_'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'path": "a.py"}'}}]},
        finish="tool_calls",
    )
    parser, calls, turn = parse(lines)
    assert parser.reasoning.strip() == "Let me look." and parser.answer.strip() == "Reading it."
    assert calls == [ToolCall(id="c1", name="Read", arguments={"file_path": "a.py"}, raw='{"file_path": "a.py"}')]
    usage = turn.usage(time.perf_counter())
    assert usage.prompt_tokens == 50 and usage.generated_tokens == 9


def test_raw_reasoning_in_content_is_split_and_remembered() -> None:
    parser, _, turn = parse(sse({"content": "Thinking "}, {"content": "hard\n</think>\n\n"}, {"content": "Paris."}))
    assert parser.reasoning.strip() == "Thinking hard" and parser.answer.strip() == "Paris."
    assert turn.raw_reasoning is True
    parser, _, _ = parse(sse({"content": "More\n</thi"}, {"content": "nk>\n\nDone."}), raw_reasoning=True)
    assert parser.reasoning.strip() == "More" and parser.answer.strip() == "Done."
    parser, _, turn = parse(sse({"content": "Just an answer."}))
    assert parser.answer.strip() == "Just an answer." and turn.raw_reasoning is False


def test_bad_tool_call_arguments_become_a_call_error() -> None:
    _, calls, _ = parse(sse({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "Bash", "arguments": "{oops"}}]}))
    assert calls[0].error and calls[0].error.startswith("ValueError: tool-call arguments are not valid JSON")


@pytest.mark.parametrize("chunk", [
    {"choices": [{"delta": {"tool_calls": [{"index": "first", "function": {"name": "Read"}}]}}]},
    {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": ["Read"]}}]}}]},
    {"choices": [{"delta": {"tool_calls": ["Read"]}}]},
    {"choices": ["not a choice"]},
    {"choices": [{"delta": "text"}]},
    {"choices": [{"delta": {"content": 42}}]},
    ["not", "a", "chunk"],
])
def test_a_malformed_chunk_is_one_model_error(chunk: Any) -> None:
    """A server's chunk of the wrong shape is one clear ``ModelError`` (the run ends with
    llm_query_error and says why), never a ``ValueError`` or ``TypeError`` out of the parser."""
    with pytest.raises(ModelError, match="the model server sent a malformed chunk"):
        parse([f"data: {json.dumps(chunk)}", "data: [DONE]"])
