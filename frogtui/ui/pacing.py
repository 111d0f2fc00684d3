"""Frames while the agent works: the screen may spend at most a share of the time drawing.

A frame of the main screen costs what the screen costs (on a 2-core machine 10-50 ms of the UI
thread for 120x40: the chat scrolls, so every visible line moves), not what changed. The agent's
thread shares the GIL with the UI thread, so while a run goes every frame is time the loop waits:
100 replayed Read steps took 3-5x as long in the app as headless, most of it frames drawn at
Textual's 60 a second. ``FramePacer`` keeps the frames' share of the time at most
``1 / (1 + SPACING)`` while the loop works flat out: after a frame, the next one waits until
``SPACING`` times the cost (the UI thread's CPU) of the dearest of the last ``RECENT`` frames has
passed (never longer than ``MAX_WAIT_S``, so the screen still moves a few times a second), and the
first frame of such a burst waits as long from the burst's start, so a short burst is not cut by a
frame drawn the moment it began. The dearest recent frame, not the last: a cheap frame (a status
line) says nothing of the next one, which draws everything the burst changed.

Frames are paced only while the loop's steps pour in (``HOT_STEPS`` within ``HOT_S``): a
run waiting on a command, the model or the person leaves the screen at Textual's full rate, so what
the person types then shows at once; nothing is paced while no run goes (typing, scrolling, the
review screen), nor a model streaming tokens (a step takes it a second or more). A frame held
back is drawn, with everything that changed meanwhile, when its wait ends: nothing shown is lost,
it only comes later.
"""
from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager

from textual.app import App
from textual.timer import Timer

SPACING = 8.0
"""While the loop works flat out, the time between two frames is at least this many times the cost
of the dearest recent frame: frames take at most a ninth of the time."""
RECENT = 8
"""How many of the last frames the wait is measured on."""
MAX_WAIT_S = 0.25
"""The longest a frame is held back: the screen moves at least four times a second."""
FIRST_COST_S = 0.02
"""What a frame is taken to cost before one was timed (the main screen at 120x40 on two cores: 10-50
ms). Only the first paint (``FrameHold.time_next_frame``) and the frames drawn while the loop works
flat out are timed: without either, the first burst's first frame still waits ``SPACING`` times this
from its start rather than being drawn the moment it began."""
HOT_S = 0.1
"""The loop counts as working flat out for this long after ``HOT_STEPS`` steps or calls came this fast."""
HOT_STEPS = 3
"""Steps started or calls finished within ``HOT_S`` that make a burst (steps of under 0.1 s:
replayed turns, fast tools). A model writes a step in a second or more, however fast it streams
its tokens, so while it streams the screen keeps Textual's full frame rate."""


class FlatOut:
    """When the loop last worked flat out (``at``, monotonic): ``note`` is called on its thread with
    the time of each step started and each call finished."""

    def __init__(self) -> None:
        self.at = 0.0
        self._since = 0.0
        self._count = 0

    def note(self, at: float) -> None:
        if at - self._since > HOT_S:
            self._since, self._count = at, 0
        self._count += 1
        if self._count >= HOT_STEPS:
            self.at = at


class FramePacer:
    """When the next frame may be drawn. ``cpu`` is the UI thread's CPU clock, ``now`` a monotonic
    clock (both injectable for tests)."""

    def __init__(self, cpu: Callable[[], float] = time.thread_time, now: Callable[[], float] = time.monotonic) -> None:
        self.cpu, self.now = cpu, now
        self._next = 0.0
        self._costs: list[float] = []
        """The UI thread's CPU time of the last ``RECENT`` frames."""
        self.drawn = 0
        """Frames drawn (all of them, paced or not)."""
        self.held = 0
        """Times a frame was held back."""
        self.cost_s = 0.0
        """The UI thread's CPU time in frames, all told."""

    def wait(self, running: bool) -> float:
        """Seconds until a frame may be drawn (0: now). Only a running agent is made room for."""
        if not running:
            return 0.0
        return max(0.0, self._next - self.now())

    def _spacing(self) -> float:
        return min(SPACING * max(self._costs, default=FIRST_COST_S), MAX_WAIT_S)

    def begin_burst(self) -> None:
        """The loop has started working flat out: its first frame waits as a later one would, from now."""
        self._next = max(self._next, self.now() + self._spacing())

    def draw(self, frame: Callable[[], None]) -> None:
        """Draw ``frame`` and note its cost (``note``)."""
        started = self.cpu()
        frame()
        self.note(self.cpu() - started)

    def note(self, cost: float) -> None:
        """A frame cost ``cost`` of the UI thread's CPU: the next paced frame waits ``SPACING`` times
        the dearest of the last ``RECENT`` frames' costs."""
        self.drawn += 1
        self.cost_s += cost
        self._costs = [*self._costs[1 - RECENT:], cost]
        self._next = self.now() + self._spacing()


class FrameHold:
    """Paces the app's frames with ``FramePacer`` while its loop works flat out (``hot``), through
    Textual's public API only: repaints are held (``App.batch_update``) and let through once per
    wait, when a timer ends it; the frame's cost is the UI thread's CPU from then until the
    callback the screen's ``call_after_refresh`` runs after that frame. Once the run's end is shown while its
    worker still saves it, the repaint waits for the worker (``release``), at most ``MAX_WAIT_S``:
    one frame shows the answer and "ready" together.

    Args:
        app: the app whose repaints are held.
        hot: whether the loop works flat out now (a run goes and its steps pour in).
        before_frame: called (and awaited) just before a held frame is let through: the events
            held back for it are shown in it.
    """

    def __init__(self, app: App[object], hot: Callable[[], bool], before_frame: Callable[[], Awaitable[object]]) -> None:
        self.app, self.hot, self.before_frame = app, hot, before_frame
        self.pacer = FramePacer()
        self._batch: AbstractContextManager[None] | None = None
        """``app.batch_update()`` while repaints are held."""
        self._timer: Timer | None = None
        self._burst = False
        """Whether the loop worked flat out when last checked."""
        self._timing = False
        """A frame let through unheld is being timed (``_drawn`` comes after it)."""
        self._due_at: float | None = None
        """``check`` found a frame due now: the UI thread's CPU clock then (``shown`` times it)."""

    @property
    def holding(self) -> bool:
        return self._batch is not None

    def frame_due(self) -> bool:
        """Whether a change shows now: no repaint held, and no frame let through is being timed (a
        change shown before ``_drawn`` comes would be drawn in a second frame the pacer never
        held: under load the screen's timer draws again before the screen's queue runs the
        after-refresh callback; a test saw a 0.11 s frame 16 ms after a 0.08 s one)."""
        return self._batch is None and not self._timing

    def wait(self) -> float:
        """Seconds until held repaints are let through (0: none held)."""
        return self.pacer.wait(self._batch is not None)

    def check(self) -> None:
        """Called as the loop's events arrive: a burst that begins holds repaints for its first wait."""
        hot = self.hot()
        if hot and not self._burst:
            self.pacer.begin_burst()
        self._burst = hot
        self._due_at = None
        if not hot or self._batch is not None or self._timing:
            return
        wait = self.pacer.wait(True)
        if wait > 0:
            self._hold(wait)
        else:  # due now: the frame that draws what is shown now is timed (``shown``)
            self._due_at = self.pacer.cpu()

    def shown(self) -> None:
        """The loop's events that ``check`` found due were shown: the next frame (which draws
        them) is timed, so the one after it waits its turn, and until then the loop's next events
        wait (``frame_due``)."""
        started, self._due_at = self._due_at, None
        if started is not None and not self._timing and self._batch is None:
            self._timing = True
            self._after_frame(self._drawn, started)

    def time_next_frame(self) -> None:
        """Time the screen's next frame (the first paint): the first burst's first wait is measured on it."""
        if not self._timing:
            self._timing = True
            self._after_frame(self._drawn, self.pacer.cpu())

    def hold_for_the_worker(self) -> None:
        """The run's end is shown and its worker still saves it: hold the repaint until ``release``
        (at most ``MAX_WAIT_S``)."""
        if self._batch is None:
            self._hold(MAX_WAIT_S)
            return
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.app.set_timer(MAX_WAIT_S, self._let_through, name="paced frame")

    def _hold(self, seconds: float) -> None:
        if seconds <= 0:
            return
        self.pacer.held += 1
        batch = self.app.batch_update()
        batch.__enter__()
        self._batch = batch
        self._timer = self.app.set_timer(seconds, self._let_through, name="paced frame")

    async def _let_through(self) -> None:
        self._timer = None
        if self._batch is None:
            return
        await self.before_frame()
        if self._timer is None:  # (else the run's end was shown meanwhile: it waits for its worker)
            self.release()

    def release(self) -> None:
        """Let the held repaints through now (a frame is drawn with everything that changed), and time it."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        batch, self._batch = self._batch, None
        if batch is None:
            return
        started = self.pacer.cpu()
        batch.__exit__(None, None, None)
        self._timing = True
        self._after_frame(self._drawn, started)

    def _after_frame(self, callback: Callable[[float], None], started: float) -> None:
        """``callback(started)`` right after the screen's next repaint: asked of the screen, whose
        queue is short (the app's may be busy showing the loop's events: a frame or two later)."""
        screen = self.app.screen if self.app.screen_stack else self.app
        screen.call_after_refresh(callback, started)

    def _drawn(self, started: float) -> None:
        self._timing = False
        self.pacer.note(self.pacer.cpu() - started)
        if self._burst and self.hot() and self._batch is None:  # the next frame waits its turn
            self._hold(self.pacer.wait(True))
