"""Repeated-call detection: the third identical call in a row, or the third try of a failing call."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from frogtui.agent.repeats import RepeatTracker, call_key


def test_third_identical_call_in_a_row_is_a_repeat_and_says_whether_results_matched() -> None:
    tracker = RepeatTracker()
    args = {"command": "ls", "description": "list"}
    assert tracker.check("Bash", args) is None
    tracker.record("Bash", args, "Exit code: 0\na", ok=True)
    assert tracker.check("Bash", args) is None
    tracker.record("Bash", dict(reversed(args.items())), "Exit code: 0\na", ok=True)
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.describe() == "this exact call ran twice already in a row, with the same result"
    tracker.record("Bash", args, "Exit code: 0\nb", ok=True)
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.describe() == "this exact call ran twice already in a row, with different results"


def test_a_different_call_in_between_breaks_the_row_but_failures_are_counted_in_the_session() -> None:
    tracker = RepeatTracker()
    failing = {"command": "pytest -q"}
    for _ in range(2):
        tracker.record("Bash", failing, "Exit code: 1", ok=False)
        tracker.record("Read", {"file_path": "a.py"}, "a.py\n1. x", ok=True)
    repeat = tracker.check("Bash", failing)
    assert repeat is not None and repeat.failing and repeat.describe() == "this exact call already failed twice in this conversation"
    assert tracker.check("Read", {"file_path": "b.py"}) is None
    tracker.reset()
    assert tracker.check("Bash", failing) is None


def test_the_threshold_is_configurable() -> None:
    tracker = RepeatTracker(threshold=2)
    tracker.record("Glob", {"pattern": "*"}, "a", ok=True)
    assert tracker.check("Glob", {"pattern": "*"}) is not None
    assert RepeatTracker(threshold=0).threshold == 2


@given(st.lists(st.tuples(st.sampled_from(["ls", "pwd", "true"]), st.booleans()), max_size=30))
def test_a_repeat_is_reported_exactly_when_the_history_says_so(history: list[tuple[str, bool]]) -> None:
    tracker = RepeatTracker()
    for i, (command, ok) in enumerate(history):
        before = history[:i]
        in_a_row = len(before) >= 2 and all(c == command for c, _ in before[-2:])
        failures = sum(1 for c, o in before if c == command and not o)
        repeat = tracker.check("Bash", {"command": command})
        assert (repeat is not None) == (in_a_row or failures >= 2)
        if repeat is not None and not in_a_row:
            assert repeat.failing and repeat.times == failures
        tracker.record("Bash", {"command": command}, f"out {ok}", ok=ok)
    assert call_key("Bash", {"a": 1, "b": 2}) == call_key("Bash", {"b": 2, "a": 1})
