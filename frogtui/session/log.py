"""The session log (``session.log`` in the session folder), fed from the loop's events.

The session core puts a ``SessionLog`` in front of the sink each front end gives it
(``Logged``), so the log holds the same lines whichever front end ran the session (the app,
``frogtui run``, the ACP agent, an attempt):

- at start-up (``SessionCore.prepare``): the sandbox, which python Bash runs, the project
  instructions, then ``warning: …`` for each warning (not a git repository included);
- when the person changes the approval mode (the app's F2, the editor's mode): ``approval mode: …``
  (``SessionCore.record``);
- per decision: the audit line (``approval step=… tool=… decision=… by=… rule=… reason=…``);
- per finished call: ``[step] Tool arguments (seconds exit=N) -> first line of the observation``;
- per hand-off: ``hand-off: a fresh conversation starts (…)``;
- per run end: ``exit_reason=…``, then the run's summary (``tally.RunTally``).

The lines a front end prints (``frogtui run``'s trace) come from the same functions.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from frogtui.agent import events as ev
from frogtui.agent.events import EventSink
from frogtui.approval import audit_line
from frogtui.session.folder import Session
from frogtui.session.tally import RunTally
from frogtui.tools import short_arguments


def finished_line(event: ev.ToolFinished) -> str:
    """``[2] Edit calc.py (0.01s) -> The file calc.py has been updated``."""
    first = event.observation.splitlines()[0] if event.observation else ""
    extra = f" exit={event.exit_code}" if event.exit_code is not None else ""
    return f"[{event.step}] {event.call.name} {short_arguments(event.call, 60)} ({event.duration_s:.2f}s{extra}) -> {first[:100]}"


def handoff_line(event: ev.HandedOff) -> str:
    return f"hand-off: a fresh conversation starts ({len(event.text)} characters; continues {event.previous_id})"


def ended_line(event: ev.RunEnded) -> str:
    return f"exit_reason={event.exit_reason} steps={event.n_steps}{f' error={event.error}' if event.error else ''}"


def summary_line(summary: str) -> str:
    """The run's summary as ``frogtui run`` prints it last (and the log keeps it)."""
    return f"frogtui: {summary}"


class SessionLog:
    """Implements ``EventSink``: writes the session's lines to its log (see the module's docstring).

    Args:
        session: the session folder whose ``session.log`` this is.
        ignored: gives the ignored paths the session changed (``SessionCore.ignored_changed``), for
            the run's summary.
    """

    def __init__(self, session: Session, ignored: Callable[[], list[str]] | None = None) -> None:
        self.session = session
        self.ignored = ignored
        self.tally = RunTally()
        self.summary = ""
        """The last run's summary (``RunTally.line``), '' before a run ended."""
        self._handle: dict[type, Callable[[Any], None]] = {
            ev.ToolCallProposed: self.tally.add,
            ev.StepUsage: self.tally.add,
            ev.ApprovalAnswered: self._answered,
            ev.ToolFinished: self._finished,
            ev.HandedOff: lambda event: self.line(handoff_line(event)),
            ev.RunEnded: self._ended,
        }
        """What each event that matters does (one look-up for the others: a token's delta)."""

    def line(self, text: str) -> None:
        """One line in the log (a time stamp before it)."""
        self.session.log(text)

    def warn(self, text: str) -> None:
        self.line(f"warning: {text}")

    def emit(self, event: Any) -> None:
        handle = self._handle.get(type(event))
        if handle is not None:
            handle(event)

    def _answered(self, event: ev.ApprovalAnswered) -> None:
        self.tally.add(event)
        self.line(audit_line(event.step, event.call, event.approval) + (f" repeat={event.repeat!r}" if event.repeat else ""))

    def _finished(self, event: ev.ToolFinished) -> None:
        self.tally.add(event)
        self.line(finished_line(event))

    def _ended(self, event: ev.RunEnded) -> None:
        self.tally.add(event)
        self.line(ended_line(event))
        self.summary = self.tally.line(self.ignored() if self.ignored is not None else None)
        self.line(summary_line(self.summary))


class Logged:
    """Implements ``EventSink``: each event goes to the session log, then to the front end's sink."""

    def __init__(self, log: SessionLog, sink: EventSink) -> None:
        self.log = log
        self.sink = sink

    def emit(self, event: Any) -> None:
        self.log.emit(event)
        self.sink.emit(event)
