"""Repeated-call detection: the third identical call in a row, or the third try of a failing call."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frogtui.agent.repeats import RepeatTracker, call_key, outcome_key
from frogtui.tools import ToolOutcome


def test_third_identical_call_in_a_row_is_a_repeat_and_says_whether_results_matched() -> None:
    tracker = RepeatTracker()
    args = {"command": "ls", "description": "list"}
    assert tracker.check("Bash", args) is None
    tracker.record("Bash", args, ToolOutcome("Exit code: 0\na", ok=True))
    assert tracker.check("Bash", args) is None
    tracker.record("Bash", dict(reversed(args.items())), ToolOutcome("Exit code: 0\na", ok=True))
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.describe() == "this exact call ran twice already in a row, with the same result"
    tracker.record("Bash", args, ToolOutcome("Exit code: 0\nb", ok=True))
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.describe() == "this exact call ran twice already in a row, with different results"


def test_a_different_call_in_between_breaks_the_row_but_failures_are_counted_in_the_session() -> None:
    tracker = RepeatTracker()
    failing = {"command": "pytest -q"}
    for _ in range(2):
        tracker.record("Bash", failing, ToolOutcome("Exit code: 1", ok=False))
        tracker.record("Read", {"file_path": "a.py"}, ToolOutcome("a.py\n1. x", ok=True))
    repeat = tracker.check("Bash", failing)
    assert repeat is not None and repeat.failing and repeat.describe() == "this exact call already failed twice in this conversation"
    assert tracker.check("Read", {"file_path": "b.py"}) is None
    tracker.reset()
    assert tracker.check("Bash", failing) is None


def test_the_threshold_is_configurable() -> None:
    tracker = RepeatTracker(threshold=2)
    tracker.record("Glob", {"pattern": "*"}, ToolOutcome("a", ok=True))
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
        tracker.record("Bash", {"command": command}, ToolOutcome(f"out {ok}", ok=ok))
    assert call_key("Bash", {"a": 1, "b": 2}) == call_key("Bash", {"b": 2, "a": 1})


# issue 24 item 7: outcomes, not raw text --------------------------------------------------------
def pytest_run(seconds: str, *, passed: int = 4, exit_code: int = 0) -> str:
    return f"Exit code: {exit_code}\nSTDOUT:\n{'.' * passed}{' ' * 20}[100%]\n{passed} passed in {seconds}s\n\nSTDERR:\n"


def test_four_identical_passing_runs_whose_timing_differs_are_the_same_result() -> None:
    tracker = RepeatTracker(threshold=4)
    args = {"command": "pytest -q"}
    for seconds in ("0.03", "0.05", "1.27"):
        tracker.record("Bash", args, ToolOutcome(pytest_run(seconds), ok=True, exit_code=0))
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.describe() == "this exact call ran 3 times already in a row, with the same result"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Finished in 12ms at 2026-12-02T07:03:07Z", "Finished in 340 ms at 2026-12-02 08:15:59.123+01:00"),
        ("<Foo object at 0x7f3a2c1b9e50>", "<Foo object at 0x55d0c0ffee10>"),
        ("took 1m2.5s, pid 4242, build 3f9a2c1d7e", "took 0m59.1s, pid 77, build 0a9b8c7d6e"),
        ("Wed Dec  2 07:03:07 UTC 2026", "Wed Dec  2 07:04:11 UTC 2026"),
        ("real\t0m0.004s\nuser\t0m0.001s", "real\t0m0.012s\nuser\t0m0.002s"),
    ],
)
def test_numbers_durations_timestamps_and_addresses_do_not_make_a_different_result(first: str, second: str) -> None:
    assert outcome_key(ToolOutcome(first, ok=True, exit_code=0)) == outcome_key(ToolOutcome(second, ok=True, exit_code=0))


def test_a_different_exit_code_or_different_words_are_a_different_result() -> None:
    passing = ToolOutcome(pytest_run("0.1"), ok=True, exit_code=0)
    failing = ToolOutcome(pytest_run("0.1", exit_code=1), ok=False, exit_code=1)
    assert outcome_key(passing) != outcome_key(failing)
    assert outcome_key(ToolOutcome("1 passed", ok=True, exit_code=0)) != outcome_key(ToolOutcome("1 failed", ok=True, exit_code=0))
    assert outcome_key(ToolOutcome("a.py\n1. x", ok=True)) != outcome_key(ToolOutcome("a.py\n1. y", ok=True))
    tracker = RepeatTracker()
    tracker.record("Bash", {"command": "make"}, ToolOutcome("Exit code: 0\nSTDOUT:\nbuilt\n", ok=True, exit_code=0))
    tracker.record("Bash", {"command": "make"}, ToolOutcome("Exit code: 2\nSTDOUT:\nbuilt\n", ok=False, exit_code=2))
    repeat = tracker.check("Bash", {"command": "make"})
    assert repeat is not None and not repeat.same_result


def test_a_refused_call_in_the_row_has_no_result_to_compare() -> None:
    tracker = RepeatTracker()
    args = {"command": "git push"}
    tracker.record("Bash", args, ToolOutcome("PermissionError: denied", ok=False, ran=False))
    tracker.record("Bash", args, ToolOutcome("PermissionError: denied again", ok=False, ran=False))
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.describe() == "this exact call was refused twice already in a row"
    tracker = RepeatTracker(threshold=4)
    history = [("Exit code: 1\n2 failed in 0.31s", True), ("PermissionError: no", False), ("Exit code: 1\n2 failed in 0.35s", True)]
    for observation, ran in history:
        tracker.record("Bash", args, ToolOutcome(observation, ok=False, exit_code=1 if ran else None, ran=ran))
    repeat = tracker.check("Bash", args)
    assert repeat is not None
    assert repeat.describe() == "this exact call came 3 times already in a row, 1 of them refused; the 2 that ran gave the same result"


# issue 22 item 5: the tracker reads how a call ended from the outcome's data, never its text ------
def test_the_tracker_reads_failure_and_refusal_from_the_outcome_not_its_text() -> None:
    tracker = RepeatTracker()
    args = {"command": "make check"}
    looks_fine = "Exit code: 0\nSTDOUT:\nok\n\nSTDERR:\n"
    for _ in range(2):  # the text says exit 0; the data says it failed (a failure is counted from the data)
        tracker.record("Bash", args, ToolOutcome(looks_fine, ok=False, exit_code=2))
        tracker.record("Read", {"file_path": "Makefile"}, ToolOutcome("Makefile\n1. check:"))
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.failing and repeat.times == 2
    tracker = RepeatTracker()
    for _ in range(2):  # text that reads like an error, from a call that did not run: refused, no result
        tracker.record("Bash", args, ToolOutcome.not_run("The user denied this tool call.", denied=True))
    repeat = tracker.check("Bash", args)
    assert repeat is not None and repeat.refused == 2


def test_the_same_text_ending_differently_is_a_different_result() -> None:
    text = "Interrupted by the user\nSTDOUT:\n\nSTDERR:\n"
    assert outcome_key(ToolOutcome(text, ok=False, cancelled=True)) != outcome_key(ToolOutcome(text, ok=False, timed_out=True))
    tracker = RepeatTracker()
    tracker.record("Bash", {"command": "sleep 9"}, ToolOutcome(text, ok=False, cancelled=True))
    tracker.record("Bash", {"command": "sleep 9"}, ToolOutcome(text, ok=False, timed_out=True))
    repeat = tracker.check("Bash", {"command": "sleep 9"})
    assert repeat is not None and not repeat.same_result
