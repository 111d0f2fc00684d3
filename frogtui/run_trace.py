"""The trace of a run nobody watches (``frogtui run``, each attempt of ``--attempts``): the session's
id and folder once it could start, one line per event that matters on a stream (stderr, or an
attempt's prefixed lines), a failed command's last lines, the progress line while the model works
(``run_progress``), and at the end the run's one-line summary (with its tokens, wall time and
session folder); ``start_traced`` starts a session core with it."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from frogtui.agent import events as ev
from frogtui.agent.loop import Agent
from frogtui.run_progress import ProgressLine
from frogtui.session.core import SessionCore
from frogtui.session.log import ended_line, finished_line, handoff_line, summary_line
from frogtui.tools.observations import STREAM_HEADINGS, output_lines

TAIL_LINES = 8
"""A failed command's last lines shown under its trace line (each cut to ``TAIL_WIDTH``)."""
TAIL_WIDTH = 200


class TraceSink:
    """Writes a compact trace of the run, one line per event that matters, and at the end a
    one-line summary (the session log's: ``SessionLog.summary``): steps, calls, allowed, denied by
    whom, files changed. The session log keeps the same lines (``session.log``).

    Args:
        stream: where the lines go.
        summary: gives the run's summary once it ended (``SessionCore.run_summary``); None: no
            summary line.
        clock: monotonic seconds (the summary's wall time counts from the sink's creation).
    """

    def __init__(self, stream: TextIO, summary: Callable[[], str] | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.summary = summary
        self.clock = clock
        self.started = clock()
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
            for tail in failure_tail(event):
                self.write(tail)
        elif isinstance(event, ev.ApprovalAnswered):
            a = event.approval
            repeat = f" [repeat: {event.repeat}]" if event.repeat else ""
            self.write(f"[{event.step}] {a.decision} {event.call.name} by {a.by}{f' ({a.rule})' if a.rule else ''}{repeat}")
        elif isinstance(event, ev.RunEnded):
            self.write(ended_line(event))
            if self.summary is not None:
                self.write(summary_line(self.summary()))

    @property
    def seconds(self) -> float:
        """Wall time since the sink was made."""
        return self.clock() - self.started


class Both:
    """Implements ``EventSink``: each event to both sinks, in order."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def emit(self, event: ev.AgentEvent) -> None:
        self.first.emit(event)
        self.second.emit(event)


def failure_tail(event: ev.ToolFinished) -> list[str]:
    """The last lines of a command that ran and failed (exited non-zero, timed out), indented, at
    most ``TAIL_LINES`` of ``TAIL_WIDTH`` characters: why it failed, without opening the
    trajectory. [] for anything else."""
    outcome = event.outcome
    if not outcome.ran or outcome.kind not in ("exit", "timeout"):
        return []
    # the head (exit code, timeout) is on the trace line; the streams' headings say nothing here
    lines = [text for text in output_lines(outcome.observation)[1:] if text.strip() not in STREAM_HEADINGS]
    shown = lines[-TAIL_LINES:]
    cut = [f"    {text if len(text) <= TAIL_WIDTH else text[: TAIL_WIDTH - 1] + '…'}" for text in shown]
    return ([f"    … {len(lines) - len(shown)} earlier lines in the trajectory"] if len(lines) > len(shown) else []) + cut


def folder_shown(folder: Path) -> str:
    """A folder as a person reads it: under the home folder as ``~/…``."""
    home = Path.home()
    return f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)


def start_traced(core: SessionCore, stream: TextIO, sink: TraceSink | None = None, *, extra: Any = None) -> Agent:
    """Start ``core`` for a run nobody watches, traced on ``stream``: the start-up notes printed
    (``frogtui: …``), then the session's id and folder, the policy under ``--approve MODE`` (what it would
    ask is denied), the trace (``sink``, default a new ``TraceSink``), whose summary adds the
    tokens, the wall time and the session folder. ``extra``: a sink that gets every event after
    the trace (``run_output.JsonLines``).

    Raises:
        FrogtuiError: a rules file is invalid, or git cannot snapshot the working tree.
    """
    sink = sink or TraceSink(stream)
    folder = folder_shown(core.session.folder)
    sink.summary = lambda: f"{core.run_summary} · {sink.seconds:.1f}s · session {folder}"
    say = lambda line: print(f"frogtui: {line}", file=stream, flush=True)  # noqa: E731
    agent = core.start_unattended(sink if extra is None else Both(sink, extra), say=say)
    say(f"session {core.session.id} in {folder}" + (" (resumed)" if core.saved is not None else ""))  # once it could start
    return agent
