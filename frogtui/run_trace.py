"""The trace of a run nobody watches (``frogtui run``, each attempt of ``--attempts``): one line per
event that matters on a stream (stderr, or an attempt's prefixed lines), the progress line while
the model works (``run_progress``), and at the end the run's one-line summary; ``start_traced``
starts a session core with it."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TextIO

from frogtui.agent import events as ev
from frogtui.agent.loop import Agent
from frogtui.run_progress import ProgressLine
from frogtui.session.core import SessionCore
from frogtui.session.log import ended_line, finished_line, handoff_line, summary_line


class TraceSink:
    """Writes a compact trace of the run, one line per event that matters, and at the end a
    one-line summary (the session log's: ``SessionLog.summary``): steps, calls, allowed, denied by
    whom, files changed. The session log keeps the same lines (``session.log``).

    Args:
        stream: where the lines go.
        summary: gives the run's summary once it ended (``SessionCore.run_summary``); None: no
            summary line.
    """

    def __init__(self, stream: TextIO, summary: Callable[[], str] | None = None) -> None:
        self.stream = stream
        self.summary = summary
        self.progress = ProgressLine(self.write)
        """The line printed while the model works (``run_progress``); it prints only once started."""
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        """One whole line on the stream (the progress thread writes too: lines never interleave)."""
        with self._lock:
            try:
                self.stream.write(text + "\n")
                self.stream.flush()
            except OSError:  # the terminal went away (closed: EIO; a closed pipe): the run goes on, the session log keeps the line
                pass

    def emit(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.StepStarted):
            self.progress.turn_started(event.step)
        elif isinstance(event, (ev.AssistantTurnEnded, ev.RunEnded)):
            self.progress.turn_ended()
        if isinstance(event, ev.HandedOff):
            self.write(handoff_line(event))
        elif isinstance(event, ev.ToolFinished):
            self.write(finished_line(event))
        elif isinstance(event, ev.ApprovalAnswered):
            a = event.approval
            repeat = f" [repeat: {event.repeat}]" if event.repeat else ""
            self.write(f"[{event.step}] {a.decision} {event.call.name} by {a.by}{f' ({a.rule})' if a.rule else ''}{repeat}")
        elif isinstance(event, ev.RunEnded):
            self.write(ended_line(event))
            if self.summary is not None:
                self.write(summary_line(self.summary()))


def start_traced(core: SessionCore, stream: TextIO, sink: TraceSink | None = None) -> Agent:
    """Start ``core`` for a run nobody watches, traced on ``stream``: the start-up notes printed
    (``frogtui: …``), the policy under ``--approve MODE`` (what it would ask is denied), the trace
    (``sink``, default a new ``TraceSink``).

    Raises:
        FrogtuiError: a rules file is invalid, or git cannot snapshot the working tree.
    """
    sink = sink or TraceSink(stream)
    sink.summary = lambda: core.run_summary
    return core.start_unattended(sink, say=lambda line: print(f"frogtui: {line}", file=stream, flush=True))
