"""Resume without re-reading (issue 34, item 5): the model's state saved after each turn in the
session folder, and a fresh model process that continues the conversation evaluates only what
was added; a state for another model, other settings or another history is never used (said
once), and the folder stays within its budget."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from frogtui.models.local import LocalModel
from frogtui.models.saved_state import StateFolder
from frogtui.models.transcript import Transcript
from frogtui.protocol import TurnEnd
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS
from tests.models.conftest import make_config

TASK = "Fix the failing test in src/ and explain what was wrong with the function add."
FOLLOW_UPS = ["Now also add a test for negative numbers.", "Thanks. Is there anything else to fix?"]


def _load(path: Path, notes: list[str], **llama: object) -> LocalModel:
    return LocalModel.from_spec(str(path), make_config(n_ctx=8192, **llama), report=notes.append)


def _turn(model: LocalModel, messages: list[dict[str, Any]]) -> tuple[str, TurnEnd]:
    items = list(model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=8, cancel=threading.Event()))
    end = items[-1]
    assert isinstance(end, TurnEnd)
    return "".join(x for x in items if isinstance(x, str)), end


def _conversation(model: LocalModel) -> list[dict[str, Any]]:
    """A session of three turns; the messages as a resumed session would send them back."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": TASK}]
    for follow_up in [*FOLLOW_UPS, None]:
        text, _end = _turn(model, messages)
        messages.append({"role": "assistant", "content": text})
        if follow_up is not None:
            messages.append({"role": "user", "content": follow_up})
    return messages


@pytest.mark.slow
def test_a_resumed_hybrid_session_evaluates_only_the_new_message(hybrid_gguf: Path, tmp_path: Path) -> None:
    folder = tmp_path / "session" / "model-state"
    notes: list[str] = []
    model = _load(hybrid_gguf, notes)
    model.keep_state(folder)
    try:
        messages = _conversation(model)
        assert sorted(p.suffix for p in folder.iterdir()) == [".json"] * 3 + [".state"] * 3, "one save per turn"
        resumed = [*messages, {"role": "user", "content": "One more question about the tests."}]
        _text, live = _turn(model, resumed)  # what the same process, never closed, evaluates for it
    finally:
        model.close()

    fresh = _load(hybrid_gguf, notes)  # a resume without saved state: the whole conversation again
    try:
        _text, whole = _turn(fresh, resumed)
    finally:
        fresh.close()
    notes.clear()
    again = _load(hybrid_gguf, notes)
    again.keep_state(folder)
    try:
        _text, end = _turn(again, resumed)
    finally:
        again.close()
    assert whole.usage.evaluated_tokens == whole.usage.prompt_tokens > 1000
    assert end.usage.prompt_tokens == live.usage.prompt_tokens
    assert end.usage.evaluated_tokens <= live.usage.evaluated_tokens + 2, (end.usage, live.usage)
    assert end.usage.evaluated_tokens * 20 < whole.usage.evaluated_tokens
    assert any(n.startswith("resumed from the model's saved state") for n in notes), notes


@pytest.mark.slow
def test_a_state_for_other_settings_or_another_history_is_never_used_and_said_once(hybrid_gguf: Path, tmp_path: Path) -> None:
    folder = tmp_path / "model-state"
    notes: list[str] = []
    model = _load(hybrid_gguf, notes)
    model.keep_state(folder)
    try:
        messages = _conversation(model)
    finally:
        model.close()
    other_history = [messages[0], {"role": "user", "content": "A different task altogether."}]
    for llama, history in [({"cache_type_k": "q8_0"}, [*messages, {"role": "user", "content": "and?"}]), ({}, other_history)]:
        notes.clear()
        again = _load(hybrid_gguf, notes, **llama)
        again.keep_state(folder)
        try:
            _text, end = _turn(again, history)
            _turn(again, [*history, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}])
        finally:
            again.close()
        assert end.usage.evaluated_tokens == end.usage.prompt_tokens, "re-evaluated whole"
        mismatch = [n for n in notes if "does not fit this conversation" in n]
        assert len(mismatch) == 1, notes


def test_the_folder_keeps_the_newest_saves_within_its_budget(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "s", key="k", budget=2500)
    transcript = Transcript(tokens=[1, 2, 3], evaluated=2, consumed=1, digests=["d"], tools_digest="t", open_turn=True)
    for size in (1000, 1000, 1000):
        assert folder.save(transcript, lambda path, size=size: path.write_bytes(b"x" * size) > 0) is not None
    usable, other = folder.candidates()
    assert [s.state.name for s in usable] == ["3.state", "2.state"] and other == 0, "the oldest was dropped"
    assert not list((tmp_path / "s").glob(".*partial")), "no half-written save is left"
    assert folder.save(transcript, lambda path: False) is None, "a failed write saves nothing"
    assert [s.state.name for s in folder.candidates()[0]] == ["3.state", "2.state"]
    (tmp_path / "s" / "9.json").write_text("{not json")
    assert StateFolder(tmp_path / "s", key="other", budget=2500).candidates() == ([], 3)
