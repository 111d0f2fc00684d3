"""Repeated calls: a small model's loops, caught before the call runs again.

A call repeats when it is the same tool with the same arguments as the ``threshold - 1`` calls just
before it (the model is going round in circles), or when the same call has already failed
``threshold - 1`` times in this conversation (it keeps retrying what does not work). The loop asks
``RepeatTracker.check`` before approval and tells it each outcome with ``record``.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

DEFAULT_THRESHOLD = 3
"""The third identical call in a row (or the third try of a failing one) is a repeat."""

Key = tuple[str, str]


def call_key(name: str, arguments: dict[str, Any]) -> Key:
    """Two calls are the same when their tool and arguments are (key order does not matter)."""
    return name, json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Repeat:
    """Why a call counts as a repeat, in words for the person and the model."""

    times: int
    """How many times the same call already ran (or failed)."""
    same_result: bool
    """Whether every earlier run gave the same observation."""
    failing: bool
    """True when it is counted as a retried failure rather than a run in a row."""

    def describe(self) -> str:
        times = {1: "once", 2: "twice"}.get(self.times, f"{self.times} times")
        if self.failing:
            return f"this exact call already failed {times} in this conversation"
        result = "with the same result" if self.same_result else "with different results"
        return f"this exact call ran {times} already in a row, {result}"


class RepeatTracker:
    """Remembers the conversation's calls and their outcomes (not thread-safe: the loop's thread)."""

    def __init__(self, threshold: int = DEFAULT_THRESHOLD) -> None:
        self.threshold = max(2, threshold)
        self._recent: list[tuple[Key, str]] = []
        self._failures: Counter[Key] = Counter()

    def check(self, name: str, arguments: dict[str, Any]) -> Repeat | None:
        """Whether running this call now would be a repeat."""
        key = call_key(name, arguments)
        need = self.threshold - 1
        tail = self._recent[-need:]
        if len(tail) == need and all(k == key for k, _ in tail):
            return Repeat(times=need, same_result=len({o for _, o in tail}) == 1, failing=False)
        if self._failures[key] >= need:
            return Repeat(times=self._failures[key], same_result=False, failing=True)
        return None

    def record(self, name: str, arguments: dict[str, Any], observation: str, *, ok: bool) -> None:
        """A call ran (or was refused): remember it and whether it failed."""
        key = call_key(name, arguments)
        self._recent.append((key, observation))
        del self._recent[: -self.threshold]
        if not ok:
            self._failures[key] += 1

    def reset(self) -> None:
        """A new conversation (hand-off) starts with no history."""
        self._recent.clear()
        self._failures.clear()
