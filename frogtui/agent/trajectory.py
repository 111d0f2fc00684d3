"""The Leaf trajectory record (``trajectory_format: leaf-function-calling``) plus frogtui's
per-step ``approvals`` and ``usage``, each observation's ``outcome`` (how its call ended, as data)
and the top-level ``model``."""
from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogtui.protocol import Approval, ToolCall, Usage
from frogtui.tools import ToolOutcome


@dataclass
class StepRecord:
    step: int
    assistant: dict[str, Any] = field(default_factory=dict)
    observations: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    raw_output: str = ""
    """The model's raw text for this turn (what a replay file holds), reasoning first."""
    finish_reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "assistant": self.assistant,
            "observations": self.observations,
            "approvals": self.approvals,
            "usage": self.usage,
            "raw_output": self.raw_output,
            "finish_reason": self.finish_reason,
        }


@dataclass
class Trajectory:
    model: str
    tools: list[dict[str, Any]]
    trajectory_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    exit_reason: str | None = None
    error: str | None = None
    final_message: str = ""
    context_tokens: int = 0
    elapsed_sec: float = 0.0
    output_patch: str = ""
    partial: bool = True
    run: int = 1
    """Which conversation of the session this is: 1, then one more for each hand-off."""
    previous_trajectory: str | None = None
    """The file of the conversation this one continues (``run_file``), None for the first."""
    next_trajectory: str | None = None
    """The file of the conversation that continued this one after a hand-off, None for the last."""
    session_tokens: int = 0
    """Tokens of the whole session up to now (every conversation's context added up)."""

    def step(self, n: int) -> StepRecord:
        if not self.steps or self.steps[-1].step != n:
            self.steps.append(StepRecord(step=n))
        return self.steps[-1]

    def record_approval(self, n: int, call: ToolCall, approval: Approval, *, repeat: str = "") -> None:
        """Record an answer; ``repeat`` (why the call counts as a repeat) is kept when set, and a
        proposal's text files accepted in part (``hunks``: each with its accepted and rejected hunks)."""
        record: dict[str, Any] = {"tool": call.name, "decision": approval.decision, "reason": approval.reason, "by": approval.by,
                                  "rule": approval.rule}
        if repeat:
            record["repeat"] = repeat
        if approval.hunks:
            record["hunks"] = [{"path": c.path, "accepted": [list(s) for s in c.accepted], "rejected": [list(s) for s in c.rejected]}
                               for c in approval.hunks]
        self.step(n).approvals.append(record)

    def record_observation(self, n: int, call: ToolCall, outcome: ToolOutcome) -> None:
        """Leaf's ``{tool, observation}``, with how the call ended: ``outcome`` (``ok``, ``exit``,
        ``timeout``, ``interrupted``, ``denied``, ``error``, ``not_run``) and the exit code."""
        self.step(n).observations.append(
            {"tool": call.name, "observation": outcome.observation, "outcome": outcome.kind, "exit_code": outcome.exit_code}
        )

    def record_usage(self, n: int, usage: Usage) -> None:
        self.step(n).usage = usage.as_dict()

    def state(self) -> dict[str, Any]:
        """The top-level fields, without ``messages``, ``tools``, ``steps`` and ``n_steps``."""
        return {
            "trajectory_format": "leaf-function-calling",
            "trajectory_id": self.trajectory_id,
            "model": self.model,
            "exit_reason": self.exit_reason,
            "error": self.error,
            "final_message": self.final_message,
            "context_tokens": self.context_tokens,
            "elapsed_sec": round(self.elapsed_sec, 3),
            "output_patch": self.output_patch,
            "partial": self.partial,
            "run": self.run,
            "previous_trajectory": self.previous_trajectory,
            "next_trajectory": self.next_trajectory,
            "session_tokens": self.session_tokens,
        }

    def as_dict(self) -> dict[str, Any]:
        bulk = {"messages": self.messages, "tools": self.tools, "steps": [s.as_dict() for s in self.steps], "n_steps": len(self.steps)}
        return in_leaf_order(self.state() | bulk)


KEY_ORDER = (
    "trajectory_format", "trajectory_id", "model", "messages", "tools", "steps", "n_steps", "exit_reason", "error",
    "final_message", "context_tokens", "elapsed_sec", "output_patch", "partial",
)
"""The top-level keys of a saved trajectory, in the order they are written."""


def in_leaf_order(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the trajectory's keys in ``KEY_ORDER`` (any others after them)."""
    return {k: data[k] for k in KEY_ORDER if k in data} | {k: v for k, v in data.items() if k not in KEY_ORDER}


def run_file(run: int) -> str:
    """The file name of a session's ``run``-th conversation: ``trajectory.json``, then
    ``trajectory-2.json``… (the chain's links name these files)."""
    return "trajectory.json" if run <= 1 else f"trajectory-{run}.json"


SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(value: Any, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)``, each lone surrogate (a byte that is
    not UTF-8, read with ``surrogateescape``: the run's patch, a file name, a link's target)
    written as its ``\\u`` escape: the text can be written as UTF-8, and ``json.loads`` gives the
    same string back (``git apply`` gets the same bytes)."""
    return SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, **options))


def replay_lines(trajectory: dict[str, Any]) -> str:
    """The trajectory's model turns as a replay file (``--model replay:FILE``): one JSON object per
    turn, ``{"content": raw_output}`` (plus ``finish_reason`` when the turn was cut off)."""
    lines = []
    for step in trajectory.get("steps") or []:
        if not isinstance(step, dict) or "raw_output" not in step:
            continue
        line: dict[str, Any] = {"content": step["raw_output"]}
        if step.get("finish_reason") == "length":
            line["finish_reason"] = "length"
        lines.append(json_text(line) + "\n")
    return "".join(lines)


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 2) -> None:
    """Write JSON through a temp file and rename, so a reader never sees half a file. ``indent=None``
    writes it on one line, about five times as fast (json's C encoder only runs without an indent)."""
    write_text_atomic(path, json_text(data, indent=indent) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write text through a temp file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
