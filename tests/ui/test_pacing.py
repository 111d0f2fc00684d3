"""While the agent works, the screen's frames leave it the time (``ui/pacing.py``): a frame that cost
the UI thread ``c`` seconds is followed by at least ``SPACING * c`` without one. 100 replayed Read
steps took 3-5x as long in the app as headless, most of it frames drawn 60 times a second, each
20-40 ms of the GIL the loop's thread needed (docs/PERFORMANCE.md)."""
from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from textual.app import App
from textual.screen import Screen

from frogtui.config import Limits
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.pacing import HOT_S, HOT_STEPS, MAX_WAIT_S, RECENT, SPACING, FlatOut, FramePacer
from frogtui.ui.status import StatusBar
from frogtui.ui.trace import TracePane
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, last_json_line, submit, wait_for
from tests.ui.test_trace_table import STEPS, reads, run_over


def test_the_wait_after_a_frame_is_spacing_times_the_dearest_recent_cost_capped() -> None:
    cpu = iter([1.0, 1.01, 2.0, 2.5, 3.0, 3.001, *itertools.chain.from_iterable((4.0 + i, 4.0 + i + 0.001) for i in range(RECENT))])
    now = itertools.repeat(10.0)
    pacer = FramePacer(cpu=lambda: next(cpu), now=lambda: next(now))
    assert pacer.wait(running=True) == 0.0  # nothing drawn yet
    pacer.draw(lambda: None)  # 10 ms of the UI thread
    assert pacer.wait(running=True) == pytest.approx(SPACING * 0.01)
    assert pacer.wait(running=False) == 0.0  # no run: typing and scrolling are never held back
    pacer.draw(lambda: None)  # 0.5 s: the screen still moves a few times a second
    assert pacer.wait(running=True) == pytest.approx(MAX_WAIT_S)
    pacer.draw(lambda: None)  # a cheap frame after a dear one says nothing of the next: the dear one counts
    assert pacer.wait(running=True) == pytest.approx(MAX_WAIT_S)
    for _ in range(RECENT):  # once the dear frames are older than RECENT frames, cheap frames are hardly held back
        pacer.draw(lambda: None)
    assert pacer.wait(running=True) == pytest.approx(SPACING * 0.001)
    assert (pacer.drawn, pacer.cost_s) == (3 + RECENT, pytest.approx(0.511 + RECENT * 0.001))


def test_the_first_frame_of_a_burst_waits_from_its_start() -> None:
    """A frame drawn the moment the loop started working flat out (a 100-step burst of 0.1 s) cost
    it a quarter of its time: the first frame of a burst waits as a later one would."""
    cpu, clock = iter([1.0, 1.02]), [10.0]
    pacer = FramePacer(cpu=lambda: next(cpu), now=lambda: clock[0])
    pacer.draw(lambda: None)  # the screen before the run: 20 ms
    clock[0] = 20.0  # long after: a frame could be drawn at once
    assert pacer.wait(running=True) == 0.0
    pacer.begin_burst()
    assert pacer.wait(running=True) == pytest.approx(min(SPACING * 0.02, MAX_WAIT_S))
    assert pacer.wait(running=False) == 0.0  # not while no run goes


def test_a_model_is_not_a_burst_replayed_or_fast_steps_are() -> None:
    """A model writes a step in a second or more, however fast it streams: its frames are never
    paced; steps or calls coming faster than ``HOT_STEPS`` in ``HOT_S`` are a burst (found in
    a benchmark: counting every event, 100 Bash steps of 20 ms hovered at the threshold and their
    frames, unpaced, took half the time)."""
    flat_out = FlatOut()
    for i in range(10):  # a step (and its call) every half second
        flat_out.note(10.0 + i / 2)
        flat_out.note(10.0 + i / 2 + 0.01)
    assert flat_out.at == 0.0
    for i in range(HOT_STEPS):  # steps of 20 ms
        flat_out.note(20.0 + i * 0.02)
    assert flat_out.at == pytest.approx(20.0 + (HOT_STEPS - 1) * 0.02)


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
@pytest.mark.timing
async def test_frames_during_a_run_leave_the_loop_its_time(make_app, monkeypatch) -> None:
    """What the main screen draws while the loop's events keep coming (measured around Textual's
    own frame, whatever calls it) is followed by ``SPACING`` times its cost without a frame.

    What is drawn is counted per hold: the frames from the moment the repaints held
    (``App.batch_update``) are let through until they are held again. That is the frame let
    through and, under load, at most one more: the screen's timer may draw the redraws the frame
    set going (the trace's rows, the chat's flush) before the screen's queue runs the callback
    that holds again (``FrameHold._drawn``), and the pacer's measure covers both. A call of
    Textual's frame with nothing to draw (the same timer runs the after-refresh callbacks: 0.1
    ms) is not a frame."""
    frames: list[tuple[float, float, float]] = []  # (start, end, CPU) of the frames during the run
    holds: list[float] = []  # when the repaints were held
    draw, begin = Screen._on_timer_update, App._begin_batch

    def hot(app: App) -> bool:
        return getattr(app, "busy", False) and time.monotonic() - getattr(app, "agent_events_at", 0.0) < HOT_S

    def timed(screen: Screen) -> None:
        start, cpu, is_hot = time.monotonic(), time.thread_time(), hot(screen.app)
        held = bool(screen.app._batch_count)  # repaints held (App.batch_update): this call draws nothing
        due = screen._layout_required or screen._scroll_required or screen._repaint_required or bool(screen._dirty_widgets)
        draw(screen)
        if is_hot and due and not held and screen is screen.app.screen:
            frames.append((start, time.monotonic(), time.thread_time() - cpu))

    def held(app: App) -> None:
        if not app._batch_count:  # every hold: the pacer judges when it holds, the frames are judged as they start
            holds.append(time.monotonic())
        begin(app)

    monkeypatch.setattr(Screen, "_on_timer_update", timed)
    monkeypatch.setattr(App, "_begin_batch", held)
    app = make_app(reads(12 * STEPS), approve="all", limits=Limits(max_steps=12 * STEPS + 1))  # long enough for a few paced frames
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: run_over(app), timeout=60, what="the run")
        await pilot.pause()
        assert app.status.step == 12 * STEPS + 1, app.status.step
        assert app.chat.call_lines[-1].entry.status == "done"  # all of it shown
    groups: list[list[tuple[float, float, float]]] = []
    for frame in frames:  # a new group after each hold
        if groups and not any(groups[-1][-1][1] <= at <= frame[0] for at in holds):
            groups[-1].append(frame)
        else:
            groups.append([frame])
    assert len(groups) > 1, "no two frames were drawn during the run"
    crowded = [[(round(start, 4), round(cost, 4)) for start, _, cost in group] for group in groups if len(group) > 2]
    assert not crowded, f"more than two frames drawn between two holds: (start, cost) {crowded}"
    slack = 0.002  # the timer that lets the next frame through fires at or after its time
    gaps = [(later[0][0] - earlier[-1][1], sum(cost for _, _, cost in earlier)) for earlier, later in zip(groups, groups[1:], strict=False)]
    early = [(round(gap, 4), round(cost, 4)) for gap, cost in gaps if gap < min(SPACING * cost, MAX_WAIT_S) - slack]
    assert not early, f"frames drawn sooner than {SPACING}x the cost of those before them: (gap, cost) {early}"


@pytest.mark.timing
async def test_frames_take_a_small_share_of_a_run_of_quick_commands(make_app, monkeypatch) -> None:
    """Found in a benchmark: with a burst told by the number of events, 100 Bash steps of ~20 ms sat
    at the threshold; their frames went unpaced, took half the run, and the run took 3.4x headless."""
    costs: list[float] = []
    draw = Screen._on_timer_update

    def timed(screen: Screen) -> None:
        cpu, held = time.thread_time(), bool(screen.app._batch_count)
        draw(screen)
        if screen is screen.app.screen and getattr(screen.app, "busy", False) and not held:
            costs.append(time.thread_time() - cpu)

    monkeypatch.setattr(Screen, "_on_timer_update", timed)
    steps = 40
    turns = [turn(f"Step {i}.", xml_call("Bash", command="sleep 0.02")) for i in range(steps)] + [turn("Done.", answer="Ok.")]
    app = make_app(turns, approve="all", limits=Limits(max_steps=steps + 1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        started = time.monotonic()
        await submit(pilot, "wait")
        await wait_for(pilot, lambda: run_over(app), timeout=60, what="the run")
        took = time.monotonic() - started
    share = sum(costs) / took
    assert share < 0.25, f"frames took {share:.0%} of the run ({len(costs)} frames, {sum(costs) * 1000:.0f} ms in {took:.2f} s)"


async def test_a_burst_of_calls_computes_each_new_row_once(make_app, monkeypatch) -> None:
    """A new row used to be computed twice (added, then again once the cursor had moved onto it)."""
    computed: list[str] = []
    cells = TracePane._cells

    def counted(pane: TracePane, entry, *args, **kwargs):
        computed.append(entry.call.id)
        return cells(pane, entry, *args, **kwargs)

    monkeypatch.setattr(TracePane, "_cells", counted)
    app = make_app(reads(), approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: run_over(app) and app.trace.query_one("TraceTable").row_count == STEPS, timeout=60)
        await pilot.pause(0.3)
    redraws = len(computed) - STEPS
    # beyond one computation per row: a row changed again after it was drawn (a later redraw), and
    # the rows the cursor leaves and lands on
    assert redraws <= STEPS // 4, f"{len(computed)} rows computed for {STEPS} calls"


def test_markdown_is_imported_on_the_worker_once_the_model_is_loaded(tmp_path, py_repo) -> None:
    """The first answer used to import Markdown (markdown-it, Textual's widget: 0.1-0.2 s) on the
    UI thread, in the middle of the run; the worker that loaded the model imports it instead."""

    replay = tmp_path / "replay.jsonl"
    replay.write_text("")
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom frogtui.config import Config\nfrom frogtui.ui.app import FrogApp\n"
        f"app = FrogApp(Config(repo=Path({str(py_repo)!r}), model_spec='replay:{replay}', theme='frog-dark'))\n"
        "seen = []\n"
        "def check():\n"
        "    if app.model is None or not all(worker.is_finished for worker in app.workers):\n"
        "        return app.set_timer(0.05, check)\n"
        "    seen.append('textual.widgets._markdown' in sys.modules)\n"
        "    app.exit()\n"
        "app.call_later(check)\n"
        "app.run(headless=True, size=(120, 40))\n"
        "print(json.dumps(seen))"
    )
    assert last_json_line(code, tmp_path) == [True]


def frame_times(monkeypatch) -> list[float]:
    """When Textual's own frame of the current screen runs (whatever holds it back first)."""
    frames: list[float] = []
    draw = Screen._on_timer_update

    def timed(screen: Screen) -> None:
        if screen is screen.app.screen and not screen.app._batch_count:  # (held repaints draw nothing)
            frames.append(time.monotonic())
        draw(screen)

    monkeypatch.setattr(Screen, "_on_timer_update", timed)
    return frames


@pytest.mark.timing
async def test_a_key_typed_while_a_command_runs_is_drawn_at_once(make_app, monkeypatch) -> None:
    """Found in review: the wait depended only on the previous frame's cost, so after one slow frame
    the echo of a key typed while a command ran (a message to queue) waited up to MAX_WAIT_S.
    A run waiting on a command sends no events: its frames are not paced."""
    app = make_app([turn("Wait.", xml_call("Bash", command="sleep 3")), turn("Done.", answer="Ok.")], approve="all")
    frames = frame_times(monkeypatch)
    slow = [False]
    render = StatusBar.render

    def slow_render(self):  # one frame that costs 60 ms of the UI thread, as a big screen's does
        if slow[0]:
            slow[0] = False
            end = time.thread_time() + 0.06
            while time.thread_time() < end:
                pass
        return render(self)

    monkeypatch.setattr(StatusBar, "render", slow_render)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait")
        await wait_for(pilot, lambda: app.status.state == "running Bash", what="the command to run")
        await pilot.pause(0.3)
        slow[0] = True
        app.status.refresh()
        await wait_for(pilot, lambda: not slow[0], what="the slow frame")
        await pilot.pause(0.02)
        assert app.busy
        pressed = time.monotonic()
        await pilot.press("x")
        await wait_for(pilot, lambda: frames and frames[-1] > pressed, what="the key's frame")
        latency = min(t for t in frames if t > pressed) - pressed
        assert latency < 0.05, f"the key typed during the run was drawn {latency * 1000:.0f} ms later"


async def test_a_held_frame_sets_one_timer(make_app, monkeypatch) -> None:
    """Found in review: the screen's idle handler resumes the update timer at once (something is
    dirty), so a held frame was asked for again every 1/60 s, each time with another timer."""
    held_timers: list[float] = []
    draws: list[float] = []
    set_timer = App.set_timer

    def counted(self, delay, callback=None, *args, **kwargs):
        if kwargs.get("name") == "paced frame":
            held_timers.append(time.monotonic())
        return set_timer(self, delay, callback, *args, **kwargs)

    monkeypatch.setattr(App, "set_timer", counted)
    draw = Screen._on_timer_update

    def timed(screen: Screen) -> None:
        if not screen.app._batch_count:  # (held repaints draw nothing)
            draws.append(time.monotonic())
        draw(screen)

    monkeypatch.setattr(Screen, "_on_timer_update", timed)
    app = make_app(reads(4 * STEPS), approve="all", limits=Limits(max_steps=4 * STEPS + 1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        status = app.status
        ticker = app.set_interval(0.01, status.refresh)  # the screen asks for frames between the paced ones
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: run_over(app), timeout=60, what="the run")
        ticker.stop()
        await pilot.pause(MAX_WAIT_S)
    assert held_timers, "no frame was held"
    # timers made between two consecutive frames drawn: one per hold, and a frame is held at most
    # twice in a row (its wait ends as a new burst begins, or as the run's end waits for "ready");
    # one per re-ask was 6-7
    per_hold = [sum(a < t < b for t in held_timers) for a, b in zip(draws, draws[1:], strict=False)]
    assert max(per_hold) <= 2, f"up to {max(per_hold)} 'paced frame' timers for one held frame ({len(held_timers)} in all)"


async def test_a_question_asked_during_a_burst_is_never_held(make_app) -> None:
    """Found while moving the pacer onto Textual's public API (a snapshot of the approval modal
    missed the trace behind it): the frame let through for the question was followed by another
    hold (the run had just started, which counts as working flat out), and the modal, over which
    nothing is paced, waited for it."""
    edit = xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")
    app = make_app([turn("The sign is wrong.", edit), turn("Done.", answer="Ok.")])  # asked as the run starts: it counts as a burst
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read it, then fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60, what="the question")
        app.flat_out.at = time.monotonic()  # the loop worked flat out a moment ago (or has just started)
        app.frames.check()  # as its events arriving do
        held = []
        for _ in range(30):  # 0.3 s: longer than any paced wait
            held.append(app.frames.holding)
            await asyncio.sleep(0.01)
        assert not any(held), f"the app's repaints were held {sum(held)} times in 0.3 s while the question waited"
        await pilot.press("y")
        await wait_for(pilot, lambda: run_over(app), timeout=60, what="the run")
