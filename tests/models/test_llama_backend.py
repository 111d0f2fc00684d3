"""The llama.cpp backend on tiny GGUFs built by the suite: no re-prefill, template fidelity,
exact mode with hybrid checkpoints, cancel, telemetry, UTF-8 streaming."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import jinja2
import pytest

from frogtui.config import Sampling
from frogtui.models.local import LocalModel
from frogtui.protocol import TurnEnd, Usage
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS
from tests.models.conftest import load_local
from tests.models.tiny_gguf import TEMPLATE_PATH


def reference_render(messages: list[dict[str, Any]], *, add_generation_prompt: bool) -> str:
    """An independent render of the Qwen3.5 template (plain Jinja2, arguments as dicts)."""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda v, **kw: json.dumps(v, ensure_ascii=False)
    converted = []
    for m in messages:
        if m.get("tool_calls"):
            calls = [{**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}} for c in m["tool_calls"]]
            m = {**m, "tool_calls": calls}
        converted.append(m)
    return env.from_string(TEMPLATE_PATH.read_text()).render(
        messages=converted, tools=TOOL_SCHEMAS, add_generation_prompt=add_generation_prompt, enable_thinking=True
    )


def read_observation(step: int, lines: int = 12) -> str:
    body = "\n".join(f"{i}. def function_{step}_{i}(value):  # naïve → {i * step}" for i in range(1, lines + 1))
    return f"src/module_{step}.py\n{body}"


def assistant(step: int, *, calls: int = 1) -> dict[str, Any]:
    tool_calls = [
        {"id": f"call_{step}_{n}", "type": "function",
         "function": {"name": "Read", "arguments": json.dumps({"file_path": f"src/module_{step}.py", "limit": 40 + n})}}
        for n in range(calls)
    ]
    return {"role": "assistant", "content": "" if step % 2 else f"Looking at step {step}.",
            "reasoning_content": f"I should read module {step} next.", "tool_calls": tool_calls}


def generated_text(messages: list[dict[str, Any]], message: dict[str, Any]) -> str:
    """What the model would have generated for ``message``: the template's own text for it."""
    before = reference_render(messages, add_generation_prompt=True)
    after = reference_render(messages + [message], add_generation_prompt=False)
    assert after.startswith(before)
    return after[len(before):].rstrip("\n")


def run_task(model: LocalModel, steps: int) -> tuple[list[dict[str, Any]], list[tuple[int, Usage]]]:
    """Drive ``steps`` agent steps with assistant turns fed as if generated; returns (messages, [(added, usage)])."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "Fix the failing test in src/"},
    ]
    record: list[tuple[int, Usage]] = []
    previous_end = 0
    for step in range(1, steps + 1):
        message = assistant(step, calls=1 + step % 2)
        usage = model.feed_assistant_turn(messages, TOOL_SCHEMAS, generated_text(messages, message))
        record.append((usage.prompt_tokens - previous_end, usage))
        previous_end = usage.prompt_tokens + usage.generated_tokens
        messages.append(message)
        for call in message["tool_calls"]:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": read_observation(step)})
    return messages, record


@pytest.mark.parametrize("kind", ["hybrid", "dense"])
@pytest.mark.slow
def test_each_step_evaluates_only_what_was_added(kind: str, hybrid_gguf: Path, dense_gguf: Path) -> None:
    model = load_local(hybrid_gguf if kind == "hybrid" else dense_gguf)
    assert model.info is not None and model.info.recurrent is (kind == "hybrid")
    messages, record = run_task(model, steps=6)
    first_added, first = record[0]
    assert first.cached_tokens == 0 and first.evaluated_tokens == first.prompt_tokens == first_added
    for added, usage in record[1:]:
        assert added > 100  # tool observations of realistic size
        assert added <= usage.evaluated_tokens <= added + 1  # + the sampled <|im_end|>, evaluated now
        assert usage.cached_tokens == usage.prompt_tokens - usage.evaluated_tokens
    # a follow-up user message (default append mode) costs only its own tokens
    before = model.rendered_transcript()
    end = record[-1][1].prompt_tokens + record[-1][1].generated_tokens
    messages += [assistant(99, calls=0) | {"tool_calls": [], "content": "Done."}]
    model.feed_assistant_turn(messages[:-1], TOOL_SCHEMAS, "Done.")
    end = len(model.inspect()["tokens"])
    before = model.rendered_transcript()
    messages.append({"role": "user", "content": "Now also add a test for it, please."})
    usage = model.feed_assistant_turn(messages, TOOL_SCHEMAS, "ok")
    added = usage.prompt_tokens - end
    assert 10 < added <= usage.evaluated_tokens <= added + 1
    assert model.rendered_transcript().startswith(before)
    model.close()


@pytest.mark.slow
def test_transcript_text_equals_the_template_render(hybrid_gguf: Path) -> None:
    model = load_local(hybrid_gguf)
    messages, _ = run_task(model, steps=4)
    model.feed_assistant_turn(messages, TOOL_SCHEMAS, generated_text(messages, assistant(5)))
    messages.append(assistant(5))
    messages.append({"role": "tool", "tool_call_id": "call_5_0", "content": "  ünïcode 🐸 output with <b>tags</b>\n\n"})
    model.feed_assistant_turn(messages, TOOL_SCHEMAS, "x")
    text = model.rendered_transcript()
    expected = reference_render(messages, add_generation_prompt=True)
    assert text[: len(expected)] == expected
    assert expected.endswith("<|im_start|>assistant\n<think>\n")
    assert model.opens_reasoning is True
    model.close()


@pytest.mark.slow
def test_append_mode_keeps_reasoning_and_exact_mode_matches_the_template(hybrid_gguf: Path) -> None:
    greedy = Sampling(temperature=0.0, seed=1)
    append = load_local(hybrid_gguf, sampling=greedy)
    exact = load_local(hybrid_gguf, sampling=greedy, prompt_mode="exact")
    for model in (append, exact):
        messages, _ = run_task(model, steps=3)
        final = {"role": "assistant", "content": "All tests pass.", "reasoning_content": "Done."}
        model.feed_assistant_turn(messages, TOOL_SCHEMAS, generated_text(messages, final))
        messages += [final, {"role": "user", "content": "Thanks. Now rename the module."}]
        task_prompt_end = len(model.inspect()["tokens"])
        usage = model.feed_assistant_turn(messages, TOOL_SCHEMAS, "ok")
        expected = reference_render(messages, add_generation_prompt=True)
        if model is append:
            assert usage.evaluated_tokens <= usage.prompt_tokens - task_prompt_end + 1
            assert "I should read module 1 next." in model.rendered_transcript()
        else:
            assert model.rendered_transcript().startswith(expected)
            assert "I should read module 1 next." not in model.rendered_transcript()
            assert model.inspect()["checkpoints"], "a checkpoint was saved after the task message"
            assert 0 < usage.cached_tokens < usage.prompt_tokens  # restored from the checkpoint, not from zero
    # exact mode after a checkpoint restore samples what a fresh evaluation of the same prompt samples
    tail = messages + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "Go on."}]
    restored = [x for x in exact.stream_turn(tail, TOOL_SCHEMAS, max_tokens=24, cancel=threading.Event()) if isinstance(x, str)]
    fresh = load_local(hybrid_gguf, sampling=greedy, prompt_mode="exact")
    cold = [x for x in fresh.stream_turn(tail, TOOL_SCHEMAS, max_tokens=24, cancel=threading.Event()) if isinstance(x, str)]
    assert "".join(restored) == "".join(cold) and restored
    for model in (append, exact, fresh):
        model.close()


@pytest.mark.slow
def test_generation_streams_with_telemetry_and_next_step_reuses_it(dense_gguf: Path) -> None:
    model = load_local(dense_gguf)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "List the files."}]
    items = list(model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=30, cancel=threading.Event()))
    end = items[-1]
    assert isinstance(end, TurnEnd) and end.finish_reason in ("stop", "length")
    assert all(isinstance(x, str) for x in items[:-1]) and "<|im_end|>" not in "".join(items[:-1])
    u = end.usage
    assert u.prompt_tokens == u.evaluated_tokens > 1000 and u.cached_tokens == 0
    assert 0 < u.generated_tokens <= 30 and u.ttft_s > 0
    assert u.gen_tok_s > 0 or u.generated_tokens == 1
    messages += [{"role": "assistant", "content": "whatever was parsed"}, {"role": "tool", "tool_call_id": "x", "content": "a.py\nb.py"}]
    nxt = list(model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=5, cancel=threading.Event()))[-1].usage
    added = nxt.prompt_tokens - (u.prompt_tokens + u.generated_tokens)
    assert nxt.cached_tokens == u.prompt_tokens + u.generated_tokens - 1
    assert nxt.evaluated_tokens == added + 1
    model.close()


@pytest.mark.slow
def test_max_tokens_and_context_overflow(dense_gguf: Path) -> None:
    from frogtui.errors import ContextOverflowError

    model = load_local(dense_gguf, n_ctx=512)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "hi"}]
    with pytest.raises(ContextOverflowError, match="context holds 512"):
        list(model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=5, cancel=threading.Event()))
    model.close()


@pytest.mark.slow
def test_cancel_stops_generation_within_100ms(smollm2_gguf: Path) -> None:
    model = load_local(smollm2_gguf, n_ctx=2048)
    assert model.opens_reasoning is False
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Write a long story about a frog."},
    ]
    cancel = threading.Event()
    stream = model.stream_turn(messages, [], max_tokens=4000, cancel=cancel)
    first = next(stream)
    assert isinstance(first, str)
    set_at: list[float] = []

    def press_stop() -> None:
        set_at.append(time.perf_counter())
        cancel.set()

    threading.Timer(0.05, press_stop).start()
    items = list(stream)
    ended_at = time.perf_counter()
    end = items[-1]
    assert isinstance(end, TurnEnd) and end.finish_reason == "cancelled", end
    assert set_at and ended_at - set_at[0] < 0.1
    assert end.usage.generated_tokens > 1
    # cancelled before anything is evaluated: nothing generated, and the next turn still works
    cancel2 = threading.Event()
    cancel2.set()
    messages += [{"role": "assistant", "content": "Once upon"}, {"role": "user", "content": "Shorter, please."}]
    ended = list(model.stream_turn(messages, [], max_tokens=5, cancel=cancel2))
    assert ended[-1].finish_reason == "cancelled" and ended[-1].usage.generated_tokens == 0
    messages += [{"role": "assistant", "content": ""}, {"role": "user", "content": "Just one word."}]
    again = list(model.stream_turn(messages, [], max_tokens=5, cancel=threading.Event()))
    assert again[-1].finish_reason in ("stop", "length") and again[-1].usage.evaluated_tokens < 60
    model.close()


@pytest.mark.slow
def test_utf8_split_across_tokens_comes_out_whole(hybrid_gguf: Path) -> None:
    model = load_local(hybrid_gguf)
    text = "héllo 🐸 日本語 <think>x</think>"
    pieces = model.inspect("decode", text=text)["pieces"]  # tokenized, then decoded token by token in the model's process
    assert "" in pieces[:-1]  # byte-level vocabulary: a token that ends mid-character yields nothing yet
    assert "".join(pieces) == text
    assert all("\ufffd" not in p for p in pieces)
    assert "🐸" in pieces
    model.close()
