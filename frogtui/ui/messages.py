"""Textual messages that carry what the agent's worker thread wants the app to know or decide.

The worker never touches a widget: it posts these (``post_message`` is thread-safe).
"""
from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

from frogtui.ui.pacing import MAX_WAIT_S

if TYPE_CHECKING:  # the loop's events, the policy and pygments (a diff) come after the first paint
    from frogtui.agent.events import AgentEvent
    from frogtui.approval import Decision, PersonAnswer
    from frogtui.protocol import ApprovalRequest, Model, ToolCall
    from frogtui.ui.diffmodel import FileDiff
    from frogtui.vcs.hunks import FileChange


@dataclass
class AgentEventsPosted(Message):
    """Things happened in the agent loop: ``await take()`` returns the events
    (``frogtui.agent.events``, unchanged, in order) that arrived since the app last took them."""

    take: Callable[..., Awaitable[list[AgentEvent] | None]]
    """``UiSink.batch``: ``await take(ready=...)`` (None: held for the next frame, ask again)."""


@dataclass
class ApprovalRequested(Message):
    """The worker is blocked until ``future`` gets the person's ``PersonAnswer``."""

    request: ApprovalRequest
    """The call, its step, the working folder and (Write/Edit) the preview."""
    decision: Decision
    """Why the policy asks (its rule and reason)."""
    session_rule: str
    """The narrow rule that "always allow" would store."""
    sandboxed: bool
    """Whether Bash runs inside the sandbox."""
    future: Future[PersonAnswer]
    diff: FileDiff | None = None
    """The Write/Edit change, computed on the worker thread (a big diff costs no UI time)."""
    effects: tuple[tuple[str, str, FileDiff | FileChange | None], ...] = ()
    """A command that ran as a proposal: each effect's path, its line (with what the rules say of
    it) and, for a text file, its diff: a new or changed one's as the review's hunks (taken one by
    one), another's as a diff (a deletion: the old text against nothing); empty otherwise."""
    output: str = ""
    """A proposal: the command's output as the model will see it (held back until the answer)."""
    unlisted: tuple[str, ...] = ()
    """A proposal: the paths of effects shown only within a group line (ignored paths by folder,
    with counts; past the modal's limit): they land with the ticked ones."""


@dataclass
class ModelLoaded(Message):
    """The model finished loading in its worker."""

    model: Model
    seconds: float


@dataclass
class ModelLoadProgress(Message):
    """A progress line from the model loader (download bytes, loading, the settings chosen)."""

    line: str


@dataclass
class ModelLoadFailed(Message):
    """The model could not be loaded; ``error`` is one line for the person."""

    spec: str
    error: str


@dataclass
class TaskSubmitted(Message):
    """The person sent a message from the prompt ('' for Enter on the empty prompt)."""

    text: str


@dataclass
class CallPreviewed(Message):
    """A Write/Edit call's change was computed (whether or not the person is asked about it)."""

    call: ToolCall
    diff: FileDiff


BATCH_S = 1 / 60
"""The app takes the loop's events at most this often (a frame): a message per event cost the UI
thread more than the step that made it (100 replayed Read steps: ~1,000 messages)."""
HOLD_S = MAX_WAIT_S
"""While the loop keeps emitting, the longest its events wait for the screen's next frame (the
longest a frame waits: the screen still moves four times a second)."""


class UiSink:
    """Implements ``agent.events.EventSink``: the loop's events are queued, and an ``AgentEventsPosted``
    message is posted when the queue was empty, so the app shows a burst of events in one go (one
    message, no frame between them) and the loop's thread never waits for the UI. The app takes
    them no sooner than ``BATCH_S`` after it last did (``batch``), so a fast loop's events come in
    bursts of a frame's worth; while the loop keeps emitting, no sooner than the screen's next
    frame either: each batch costs the UI thread, and so the loop, the GIL, and events taken
    between two frames are seen no sooner than the second.

    Args:
        post: the app's thread-safe ``post_message``.
        stepped: called on the loop's thread with the time (monotonic) of each step started and
            each call finished (``pacing.FlatOut``).
    """

    def __init__(
        self, post: Callable[[Message], Any], stepped: Callable[[float], Any] | None = None,
    ) -> None:
        self.post = post
        self.stepped = stepped
        self._events: list[AgentEvent] = []
        self._lock = threading.Lock()
        self._taken_at = 0.0
        self._emitted = 0
        """Events emitted so far (how ``batch`` sees that the loop went quiet)."""
        self._ended = False
        """A ``RunEnded`` is queued: the run's end is shown without waiting for a frame."""
        self._held_since: float | None = None
        """When ``batch`` first held the queued events back for a frame (None: not held)."""
        self._seen = 0
        """``_emitted`` at the last ``batch`` that held them."""
        from frogtui.agent.events import RunEnded, StepStarted, ToolFinished  # the loop has imported them

        self._run_ended, self._beats = RunEnded, (StepStarted, ToolFinished)

    def emit(self, event: AgentEvent) -> None:
        if self.stepped is not None and isinstance(event, self._beats):
            self.stepped(time.monotonic())
        with self._lock:
            self._events.append(event)
            self._emitted += 1
            self._ended = self._ended or isinstance(event, self._run_ended)
            first = len(self._events) == 1
        if first:  # posted after the event is queued: a message posted later is handled after it
            self.post(AgentEventsPosted(self.batch))

    async def batch(self, ready: Callable[[], bool] | None = None) -> list[AgentEvent] | None:
        """``take()``, no sooner than ``BATCH_S`` after the last batch (on the UI thread; the
        events that arrive meanwhile join this batch). With ``ready`` (whether the screen would
        draw a frame now): None, not the events, while that is false, the loop keeps emitting (an
        event since the last call) and its run has not ended, for at most ``HOLD_S``: the caller
        asks again later and, meanwhile, the app's other messages (the person's keys) go first."""
        wait = self._taken_at + BATCH_S - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        if ready is not None and not self._ended and not ready():
            now = time.monotonic()
            if self._held_since is None or (now - self._held_since < HOLD_S and self._emitted != self._seen):
                self._held_since = self._held_since or now
                self._seen = self._emitted
                return None
            # quiet since the last call (it waits on the model, a command or the person), or held long enough: taken
        self._taken_at = time.monotonic()
        return self.take()

    def take(self) -> list[AgentEvent]:
        """The events queued since the last call (on the UI thread)."""
        with self._lock:
            events, self._events, self._ended = self._events, [], False
        self._held_since = None
        return events


class SessionBuilt(Message):
    """The ``SessionCore`` is built (on the prepare worker): a resumed chat can be shown."""


@dataclass
class GitRead(Message):
    """The repository's state for the status bar, read on a worker (None outside git)."""

    state: Any


@dataclass
class SessionWired(Message):
    """The session's policy, sandbox and checkpoints are ready (``SessionCore.prepare``)."""

    notes: list[Any]
    """The start-up notes to show the person (``SessionCore.notes``: warnings such as no sandbox,
    not a repository, ignored project rules; which python Bash runs; the project instructions)."""


@dataclass
class SetupFailed(Message):
    """The session could not be prepared (e.g. a rules file is not valid); nothing may run."""

    error: str


@dataclass
class HandoffDrafted(Message):
    """The hand-off for a fresh conversation was drafted (``SessionCore.draft_handoff``, on a
    worker: it reads the session's diff); the person edits it next."""

    text: str
    ended: str
    """Why: an exit reason (``max_context_len``) or ``requested`` (the palette)."""
