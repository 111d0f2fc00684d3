"""Repeated calls: a small model's loops, caught before the call runs again.

A call repeats when it is the same tool with the same arguments as the ``threshold - 1`` calls just
before it (the model is going round in circles), or when the same call has already failed
``threshold - 1`` times in this conversation (it keeps retrying what does not work). The loop asks
``RepeatTracker.check`` before approval and tells it each call's ``ToolOutcome`` with ``record``:
whether it ran and worked, and its exit code, are read from the outcome's data, never from its text.

Whether earlier runs gave "the same result" compares outcomes, not raw text (``outcome_key``): how
each ended (worked, exit code, kind) and its output with what changes from run to run on its own
(numbers, durations, timestamps, hex addresses and ids, the width of padding) normalised, so four
identical passing ``pytest -q`` runs whose timing line differs are the same result.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from frogtui.tools import ToolOutcome

DEFAULT_THRESHOLD = 3
"""The third identical call in a row (or the third try of a failing one) is a repeat."""

Key = tuple[str, str]
OutcomeKey = tuple[bool, "int | None", str, str]

_UNIT = r"(?:ns|us|µs|ms|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)"
_VOLATILE = (
    (re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|\s?[+-]\d{2}:?\d{2})?)?"), "<time>"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\b"), "<time>"),
    (re.compile(r"\b0[xX][0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}\b"), "<hex>"),
    (re.compile(rf"\b\d+(?:\.\d+)?\s?{_UNIT}(?:\d+(?:\.\d+)?\s?{_UNIT})*\b"), "<duration>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
    (re.compile(r"[ \t]+"), " "),
)
"""What varies between two runs of the same call that did the same thing, in the order it is
replaced (a timestamp before its numbers)."""


def normalise_output(text: str) -> str:
    """``text`` with numbers, durations, timestamps, hex addresses and ids, and padding replaced
    by placeholders."""
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def outcome_key(outcome: ToolOutcome) -> OutcomeKey:
    """What two runs must share to have given the same result: whether each worked, the exit
    code, how it ended, and the normalised output."""
    return outcome.ok, outcome.exit_code, outcome.kind, normalise_output(outcome.observation)


def call_key(name: str, arguments: dict[str, Any]) -> Key:
    """Two calls are the same when their tool and arguments are (key order does not matter)."""
    return name, json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Repeat:
    """Why a call counts as a repeat, in words for the person and the model."""

    times: int
    """How many times the same call already ran (or failed)."""
    same_result: bool
    """Whether every earlier run gave the same outcome (``outcome_key``)."""
    failing: bool
    """True when it is counted as a retried failure rather than a run in a row."""
    refused: int = 0
    """How many of the calls in a row did not run (denied, interrupted): they have no result."""

    def describe(self) -> str:
        times = {1: "once", 2: "twice"}.get(self.times, f"{self.times} times")
        if self.failing:
            return f"this exact call already failed {times} in this conversation"
        result = "with the same result" if self.same_result else "with different results"
        if not self.refused:
            return f"this exact call ran {times} already in a row, {result}"
        if self.refused == self.times:
            return f"this exact call was refused {times} already in a row"
        ran = self.times - self.refused
        runs = f"; the {ran} that ran {'gave the same result' if self.same_result else 'gave different results'}" if ran > 1 else ""
        return f"this exact call came {times} already in a row, {self.refused} of them refused{runs}"


class RepeatTracker:
    """Remembers the conversation's calls and their outcomes (not thread-safe: the loop's thread)."""

    def __init__(self, threshold: int = DEFAULT_THRESHOLD) -> None:
        self.threshold = max(2, threshold)
        self._recent: list[tuple[Key, OutcomeKey | None]] = []
        """The last calls, each with its outcome (None: it did not run)."""
        self._failures: Counter[Key] = Counter()

    def check(self, name: str, arguments: dict[str, Any]) -> Repeat | None:
        """Whether running this call now would be a repeat."""
        key = call_key(name, arguments)
        need = self.threshold - 1
        tail = self._recent[-need:]
        if len(tail) == need and all(k == key for k, _ in tail):
            outcomes = [o for _, o in tail if o is not None]
            return Repeat(times=need, same_result=len(set(outcomes)) <= 1, failing=False, refused=need - len(outcomes))
        if self._failures[key] >= need:
            return Repeat(times=self._failures[key], same_result=False, failing=True)
        return None

    def record(self, name: str, arguments: dict[str, Any], outcome: ToolOutcome) -> None:
        """A call ended: remember it, its outcome (a call that did not run has none to compare)
        and whether it failed."""
        key = call_key(name, arguments)
        self._recent.append((key, outcome_key(outcome) if outcome.ran else None))
        del self._recent[: -self.threshold]
        if not outcome.ok:
            self._failures[key] += 1

    def reset(self) -> None:
        """A new conversation (hand-off) starts with no history."""
        self._recent.clear()
        self._failures.clear()
