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
from collections.abc import Callable

from textual.app import App
from textual.screen import Screen
from textual.timer import Timer

SPACING = 8.0
"""While the loop works flat out, the time between two frames is at least this many times the cost
of the dearest recent frame: frames take at most a ninth of the time."""
RECENT = 8
"""How many of the last frames the wait is measured on."""
MAX_WAIT_S = 0.25
"""The longest a frame is held back: the screen moves at least four times a second."""
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
        return min(SPACING * max(self._costs, default=0.0), MAX_WAIT_S)

    def begin_burst(self) -> None:
        """The loop has started working flat out: its first frame waits as a later one would, from now."""
        self._next = max(self._next, self.now() + self._spacing())

    def draw(self, frame: Callable[[], None]) -> None:
        """Draw ``frame`` and note its cost: the next paced frame waits ``SPACING`` times the
        dearest of the last ``RECENT`` frames' costs."""
        started = self.cpu()
        frame()
        cost = self.cpu() - started
        self.drawn += 1
        self.cost_s += cost
        self._costs = [*self._costs[1 - RECENT:], cost]
        self._next = self.now() + self._spacing()


class PacedScreen(Screen[None]):
    """A screen whose frames ``FramePacer`` spaces while its app's agent is working flat out: its
    ``busy`` is true and its loop started or worked flat out (``agent_events_at``, monotonic,
    ``FlatOut``) within ``HOT_S``. Once the app has shown the run's end (``run_ended_at``) while its
    worker still saves the run, the frame waits for the worker (``busy`` false), at most
    ``MAX_WAIT_S``: one frame shows the answer and "ready" together.

    Textual draws a screen from its update timer (``Screen._on_timer_update``, at most
    ``TEXTUAL_FPS`` times a second, when something is dirty); a frame that must wait pauses that
    timer and sets one timer for the end of the wait (while it runs, the update timer that the
    screen's idle handler resumes is paused again, nothing more), which asks for the frame again.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.pacer = FramePacer()
        self._hold: Timer | None = None
        self._hot = False
        """Whether the last frame asked for came while the loop worked flat out."""

    def _agent_hot(self) -> bool:
        app = self.app
        return bool(getattr(app, "busy", False)) and self.pacer.now() - getattr(app, "agent_events_at", -HOT_S) < HOT_S

    def frame_due(self) -> bool:
        """Whether a frame would be drawn now (always, unless the loop works flat out)."""
        return not self._agent_hot() or self.pacer.wait(True) <= 0

    def _on_timer_update(self) -> None:
        hot = self._agent_hot()
        if hot and not self._hot:
            self.pacer.begin_burst()
        self._hot = hot
        # the run's end is shown, but its worker still saves it: the frame waits for "ready", at most MAX_WAIT_S in all
        ended_at = getattr(self.app, "run_ended_at", 0.0) if getattr(self.app, "busy", False) else 0.0
        ending = ended_at + MAX_WAIT_S - self.pacer.now() if ended_at else 0.0
        wait = max(ending, self.pacer.wait(hot))
        if wait > 0:
            self._update_timer.pause()
            if self._hold is None:
                self.pacer.held += 1
                self._hold = self.set_timer(wait, self._end_hold, name="paced frame")
            return
        if self._hold is not None:
            self._hold.stop()
            self._hold = None
        self.pacer.draw(super()._on_timer_update)

    def _end_hold(self) -> None:
        self._hold = None
        self.check_idle()  # resumes the update timer while anything is dirty


def frame_due(app: App[object]) -> bool:
    """Whether ``app``'s screen would draw a frame now (a modal's at once; a paced one's when due)."""
    screen = app.screen if app.screen_stack else None
    return not isinstance(screen, PacedScreen) or screen.frame_due()
