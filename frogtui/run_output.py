"""``frogtui run --output json|stream-json``: the run as JSON on stdout (docs/HEADLESS.md holds the
schema). ``json``: one object when the run ends (``result_object``). ``stream-json``: one object per
line as things happen (``JsonLines``, an ``EventSink``): the start, each step, each tool call with
its decision and who decided, each observation, each step's token usage, each assistant turn, a
hand-off, and last the same result object. Every object has ``type`` and ``version``; nothing else
is written to stdout (the trace stays on stderr).
"""
from __future__ import annotations

import json
import threading
from typing import Any, TextIO

from frogtui.agent import events as ev
from frogtui.agent.handoff import changed_files
from frogtui.session.core import SessionCore
from frogtui.session.tally import RunTally

SCHEMA_VERSION = 1
"""Raised when a field changes meaning or goes away; new fields may come without it."""
OUTPUTS = ("text", "json", "stream-json")


def line(kind: str, **fields: Any) -> str:
    """One JSON object on one line: ``type``, ``version``, then ``fields``."""
    # ASCII (every other character escaped): lossless, and no raw control character reaches a terminal
    return json.dumps({"type": kind, "version": SCHEMA_VERSION, **fields}, separators=(",", ":"))


def start_object(core: SessionCore, task: str, *, resumed: bool) -> dict[str, Any]:
    """The first line of ``stream-json``: the session and what the run was asked."""
    return {"session_id": core.session.id, "session_folder": str(core.session.folder), "repository": str(core.config.repo),
            "model": core.config.model_spec, "approve": core.config.approve, "task": task, "resumed": resumed}


def result_object(core: SessionCore, tally: RunTally, *, exit_reason: str, final_message: str, error: str | None,
                  seconds: float, status: int) -> dict[str, Any]:
    """What the run did, as ``--output json`` prints it (and ``stream-json``'s last line)."""
    denied = sum(tally.denied.values())
    return {
        "exit_reason": exit_reason,
        "status": status,
        "final_message": final_message,
        "error": error,
        "session_id": core.session.id,
        "session_folder": str(core.session.folder),
        "steps": tally.steps,
        "calls": {"total": tally.calls, "allowed": tally.allowed, "denied": denied, "invalid": tally.invalid,
                  "denied_by": dict(sorted(tally.denied.items()))},
        "files_changed": [path for path, _, _ in changed_files(tally.patch)] if tally.patch else sorted(tally.written),
        "tokens": {"evaluated": tally.evaluated, "generated": tally.generated},
        "seconds": round(seconds, 3),
    }


class JsonLines:
    """Implements ``EventSink``: ``stream-json``, one line per event that matters, written and
    flushed as it happens (the loop's thread; lines never interleave)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._answered: set[str] = set()

    def write(self, kind: str, **fields: Any) -> None:
        with self._lock:
            try:
                self.stream.write(line(kind, **fields) + "\n")
                self.stream.flush()
            except OSError:  # the reader went away: the run goes on, the session keeps everything
                pass

    def emit(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.StepStarted):
            self.write("step", step=event.step, max_steps=event.max_steps)
        elif isinstance(event, ev.ApprovalAnswered):
            self._answered.add(event.call.id)
            a = event.approval
            self.write("tool_call", step=event.step, id=event.call.id, tool=event.call.name, arguments=event.call.arguments,
                       decision=a.decision, by=a.by, rule=a.rule or None, reason=a.reason or None, repeat=event.repeat or None)
        elif isinstance(event, ev.ToolFinished):
            if event.call.id not in self._answered:  # invalid (or interrupted before it was decided): no decision came
                self.write("tool_call", step=event.step, id=event.call.id, tool=event.call.name, arguments=event.call.arguments,
                           decision="interrupted" if event.outcome.cancelled else "invalid", by=None, rule=None,
                           reason=event.call.error or None, repeat=None)
            outcome = event.outcome
            self.write("observation", step=event.step, id=event.call.id, tool=event.call.name, outcome=outcome.kind,
                       exit_code=outcome.exit_code, seconds=round(event.duration_s, 3), text=outcome.observation)
        elif isinstance(event, ev.StepUsage):
            self.write("usage", step=event.step, **event.usage.as_dict(), context_tokens=event.context_tokens)
        elif isinstance(event, ev.AssistantTurnEnded):
            self.write("assistant", step=event.step, text=event.answer, reasoning=event.reasoning)
        elif isinstance(event, ev.HandedOff):
            self.write("handoff", text=event.text, previous_id=event.previous_id, trajectory_id=event.trajectory_id)

