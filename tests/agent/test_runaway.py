"""The text guard: a turn repeating itself is ended and the model told why (``agent/runaway.py``)."""
from __future__ import annotations

from pathlib import Path

from frogtui.agent import events as ev
from frogtui.agent.runaway import RepeatedText
from frogtui.config import Limits
from tests.agent.test_loop import make_agent
from tests.support import turn, xml_call

SENTENCE = "I will now look at the test file to understand the problem. "


def test_a_turn_repeating_one_sentence_is_ended_and_the_model_told_why(py_repo: Path, tmp_path: Path) -> None:
    runaway = turn(SENTENCE * 400)  # ~2,000 pieces: without the guard the whole turn is generated
    agent, sink = make_agent(py_repo, tmp_path, [runaway, turn("", answer="sorry, done")], limits=Limits(repeat_text=8))
    result = agent.run("fix it")
    assert result.exit_reason == "agent" and result.final_message == "sorry, done"
    (repeated,) = sink.of(ev.TextRepeated)
    assert "[limits] repeat_text = 8" in repeated.note and "the test file" in repeated.note
    step = result.trajectory["steps"][0]
    assert step["finish_reason"] == "repeat_text"
    assert len(step["raw_output"]) < len(runaway) // 10, "the model stopped writing soon after the repetition"
    told = [m for m in result.trajectory["messages"] if m["role"] == "user"]
    assert told[-1]["content"] == repeated.note, "the model sees the reason with the next message"


def test_a_repeating_line_after_a_call_still_runs_the_call(py_repo: Path, tmp_path: Path) -> None:
    looping = turn("", xml_call("Read", file_path="calc.py")) + "\nWaiting for the result.\n" * 60
    agent, sink = make_agent(py_repo, tmp_path, [looping, turn("", answer="done")], limits=Limits(repeat_text=8))
    result = agent.run("read calc")
    assert [f.call.name for f in sink.of(ev.ToolFinished)] == ["Read"]
    assert len(sink.of(ev.TextRepeated)) == 1
    messages = result.trajectory["messages"]
    assert [m["role"] for m in messages[2:5]] == ["assistant", "tool", "user"]


def test_off_at_zero_and_quiet_on_ordinary_text() -> None:
    off = RepeatedText(0)
    for _ in range(200):
        off.feed(SENTENCE)
    assert off.found is None
    code = RepeatedText(8)
    for i in range(300):  # many similar lines, none the same: a file being written
        code.feed(f"    assert add({i}, {i + 1}) == {2 * i + 1}\n")
    assert code.found is None
    zeros = RepeatedText(8)
    for _ in range(100):  # a short piece needs far more copies than a sentence
        zeros.feed("0, ")
    assert zeros.found is None
    for _ in range(200):
        zeros.feed("0, ")
    assert zeros.found is not None and zeros.found.piece.strip() in ("0,", ", 0", "0, ")
