"""While the loop works flat out, the UI thread leaves it the GIL (docs/PERFORMANCE.md, "The app's
bursts"): its events wait for the screen's next frame, the person's message is drawn before the
loop starts, the run's end is drawn once with "ready", and a long chat builds lines only for what
is on screen. With 100 replayed Read steps, the UI thread's work during the steps went from
40-50 ms to 3-6 ms."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
from textual import events
from textual.screen import Screen

from frogtui.agent import events as ev
from frogtui.config import Limits
from frogtui.models.replay import ReplayModel
from frogtui.session import Session
from frogtui.ui import session_app, steplog
from frogtui.ui.chat import ChatPane, UserMessage
from frogtui.ui.messages import BATCH_S, HOLD_S, AgentEventsPosted, UiSink
from frogtui.ui.steplog import CallLine, StepLog, StepReasoning
from frogtui.ui.trace import TraceEntry
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for
from tests.ui.test_streaming import ChatHost
from tests.ui.test_trace_table import reads, run_over


def emitting(sink: UiSink, seconds: float, every: float = 0.002) -> threading.Thread:
    """A loop that emits an event every ``every`` seconds for ``seconds``."""

    def run() -> None:
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            sink.emit(ev.ReasoningDelta(1, str(i)))
            i += 1
            time.sleep(every)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


async def held_take(message: AgentEventsPosted, ready) -> list[ev.AgentEvent]:  # type: ignore[no-untyped-def]
    """Take the events as the app does: asked again a frame later while the sink holds them."""
    while (batch := await message.take(ready=ready)) is None:
        await asyncio.sleep(BATCH_S)
    return batch


@pytest.mark.timing
async def test_events_wait_for_the_next_frame_while_the_loop_keeps_emitting() -> None:
    posted: list[AgentEventsPosted] = []
    sink = UiSink(posted.append)
    thread = emitting(sink, 0.6)
    await asyncio.sleep(0.01)
    started = time.monotonic()
    batch = await held_take(posted[0], lambda: False)  # no frame due: they wait, at most HOLD_S
    waited = time.monotonic() - started
    thread.join()
    assert HOLD_S / 2 <= waited <= HOLD_S + 0.1, waited  # (a busy machine may let the emitter pause)
    assert len(batch) > 50
    due = [False]
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, lambda: due.__setitem__(0, True))
    thread = emitting(sink, 0.3)
    await asyncio.sleep(0.01)
    started = time.monotonic()
    await held_take(posted[-1], lambda: due[0])  # taken once the frame is due
    waited = time.monotonic() - started
    thread.join()
    assert 0.04 <= waited < 0.8 * HOLD_S, waited


@pytest.mark.timing
async def test_events_are_taken_at_once_when_the_loop_is_quiet_or_its_run_ended() -> None:
    posted: list[AgentEventsPosted] = []
    sink = UiSink(posted.append)
    sink.emit(ev.ReasoningDelta(1, "one"))  # then nothing: the loop waits on the model or a command
    started = time.monotonic()
    assert [e.text for e in await held_take(posted[0], lambda: False)] == ["one"]
    assert time.monotonic() - started < 0.8 * HOLD_S
    sink.emit(ev.AnswerDelta(2, "two"))
    sink.emit(ev.RunEnded(exit_reason="agent", final_message="two", error=None, n_steps=2, trajectory={}))
    started = time.monotonic()
    batch = await held_take(posted[1], lambda: False)
    assert time.monotonic() - started < 0.8 * HOLD_S  # the run's end is not held back
    assert [type(e).__name__ for e in batch] == ["AnswerDelta", "RunEnded"]
    thread = emitting(sink, 0.3)  # a later run's events wait again (the end was taken)
    await asyncio.sleep(0.01)
    started = time.monotonic()
    await held_take(posted[2], lambda: False)
    thread.join()
    assert time.monotonic() - started >= HOLD_S / 2


def frames_drawn(monkeypatch) -> list[tuple[float, bool, bool]]:
    """(when, the app busy, the run's end shown) for each frame Textual draws of the current screen.
    Call it before the app runs: a screen's update timer holds the method it had when it was made."""
    frames: list[tuple[float, bool, bool]] = []
    draw = Screen._on_timer_update

    def timed(screen: Screen) -> None:
        app = screen.app
        drawing = not app._batch_count and (screen._layout_required or screen._dirty_widgets or screen._repaint_required)
        if app.screen_stack and screen is app.screen and drawing:
            frames.append((time.monotonic(), bool(getattr(app, "busy", False)), app.last_exit_reason is not None))
        draw(screen)

    monkeypatch.setattr(Screen, "_on_timer_update", timed)
    return frames


def one_read_with_a_slow_last_save(make_app, monkeypatch, seconds: float):  # type: ignore[no-untyped-def]
    """An app whose run reads once and answers, and whose worker's last save (the whole
    trajectory, after the run's end is shown) takes ``seconds`` more."""
    save = Session.save_trajectory

    def slow_final_save(self, trajectory, **kwargs):
        save(self, trajectory, **kwargs)
        if not getattr(trajectory, "partial", True):
            time.sleep(seconds)

    monkeypatch.setattr(Session, "save_trajectory", slow_final_save)
    return make_app([turn("Look.", xml_call("Read", file_path="calc.py")), turn("Done.", answer="Read it.")], approve="all")


def asks(monkeypatch) -> list[float]:
    """When the loop asks the replay model for a turn."""
    asked: list[float] = []
    stream = ReplayModel.stream_turn

    def timed(self, *args, **kwargs):
        asked.append(time.monotonic())
        return stream(self, *args, **kwargs)

    monkeypatch.setattr(ReplayModel, "stream_turn", timed)
    return asked


async def test_the_persons_message_is_drawn_before_the_loop_starts(make_app, monkeypatch) -> None:
    """The frame that showed the message used to be drawn while the loop's first steps ran, 10-25
    ms of the GIL they needed (a second message: the agent is built, the loop starts at once)."""
    app = make_app([*reads(5), *reads(20)], approve="all")
    asked = asks(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: run_over(app), timeout=30, what="the first run")
        await pilot.pause(0.3)
        first, render = len(asked), UserMessage.render
        shown: list[float] = []  # when a frame first drew the second message
        monkeypatch.setattr(UserMessage, "render", lambda self: shown.append(time.monotonic()) or render(self))
        await submit(pilot, "read it again")
        await wait_for(pilot, lambda: run_over(app), timeout=30, what="the second run")
    assert len(asked) > first and shown
    assert shown[0] < asked[first], f"the loop asked the model {(shown[0] - asked[first]) * 1000:.0f} ms before the message was drawn"


async def test_escape_before_the_loop_starts_sends_nothing(make_app, monkeypatch) -> None:
    app = make_app([turn("Done.", answer="Ok.")] * 2, approve="all")
    asked = asks(monkeypatch)
    monkeypatch.setattr(session_app, "FIRST_FRAME_S", 1.0)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        app.call_after_refresh = lambda callback, *a, **k: True  # the frame that lets the loop start never comes
        await submit(pilot, "hello there")
        assert app.busy
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, what="the run to end")
        await pilot.pause()
        assert asked == [] and app.last_exit_reason == "cancelled"
        assert app.query_one("#prompt").value == "hello there"  # nothing lost
        assert "the message was not sent" in str(app.chat.query("Notice").last().render())
        del app.call_after_refresh
        await pilot.press("enter")  # sent again: it runs
        await wait_for(pilot, lambda: run_over(app) and app.last_exit_reason == "agent", what="the second run")
        assert len(asked) == 1


async def test_the_runs_end_is_drawn_once_with_ready(make_app, monkeypatch) -> None:
    """A frame drawn between the run's end shown and its worker's last save showed the answer
    with "working", then another frame "ready": one frame, and the save's GIL, wasted."""
    app = one_read_with_a_slow_last_save(make_app, monkeypatch, 0.15)  # a long session's whole trajectory
    frames = frames_drawn(monkeypatch)  # before the screen's update timer binds its callback
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        frames.clear()
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: run_over(app), timeout=30, what="the run")
        await pilot.pause(0.1)
    ending = [f for f in frames if f[1] and f[2]]
    assert not ending, f"{len(ending)} frame(s) drawn after the run's end was shown, before its worker ended"
    assert frames and not frames[-1][1]  # the last frame: the run over


async def test_a_long_step_log_builds_lines_only_for_what_is_on_screen(monkeypatch) -> None:
    """The layout asked every item for its lines to count them: each frame after a burst built
    the line of every call of the chat, off screen too."""
    built: list[int] = []
    line_content = steplog.line_content
    monkeypatch.setattr(steplog, "line_content", lambda entry, width: built.append(1) or line_content(entry, width))
    from frogtui.protocol import ToolCall

    app = ChatHost()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        log = StepLog()
        await chat.mount(log)
        for i in range(300):
            log.add(StepReasoning(i, f"Step {i}.", collapsed=True))
            log.add(CallLine(TraceEntry(step=i, call=ToolCall(f"c{i}", "Read", {"file_path": "calc.py"}))))
        await pilot.pause(0.2)
        assert log.size.height == 600
        assert 0 < len(built) <= 2 * 30, f"{len(built)} call lines built for a 30-line screen"


async def test_reasoning_never_shown_open_is_added_folded(monkeypatch) -> None:
    """A step's reasoning that arrived with its turn's end (a burst) was wrapped open, then folded."""
    wrapped: list[str] = []
    body = StepReasoning.body
    monkeypatch.setattr(StepReasoning, "body", lambda self, width: wrapped.append(self.text) or body(self, width))
    app = ChatHost()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        for step in (1, 2):  # the second one in a log already laid out
            chat.reasoning_delta(step, f"Step {step}, all of it at once.")
            await chat.end_turn()
            await pilot.pause(0.1)
        assert [r.collapsed for r in chat.reasoning] == [True, True]
    assert wrapped == []


@pytest.mark.timing
async def test_keys_during_a_burst_are_handled_at_once(make_app, monkeypatch) -> None:
    """Found in review: the events' handler waited for the next frame inside the app's queue, so a
    key pressed during a burst waited behind it (0.2-0.7 s), and the loop ran ~50 more steps after
    Esc. The handler now returns and asks again a frame later."""
    app = make_app(reads(2000), approve="all", limits=Limits(max_steps=2001))
    asked = asks(monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        app.query_one("#prompt").value = "read it"
        app.post_message(events.Key("enter", None))  # not Pilot's press: it waits for the app to idle, which it does not
        deadline = time.monotonic() + 30
        while len(asked) <= 100 and time.monotonic() < deadline:  # (nor Pilot's pause: the run could end before it returns)
            await asyncio.sleep(0.002)
        assert len(asked) > 100, "the burst never came"
        prompt = app.query_one("#prompt")
        pressed = time.monotonic()
        app.post_message(events.Key("x", "x"))  # as the terminal's driver does (Pilot's press waits for the app to idle)
        while prompt.value != "x" and time.monotonic() - pressed < 5:
            await asyncio.sleep(0.002)
        typed = time.monotonic() - pressed
        assert prompt.value == "x" and typed < 0.15, f"the key reached the prompt {typed * 1000:.0f} ms later"
        interrupted: list[int] = []
        interrupt = app.interrupt
        monkeypatch.setattr(app, "interrupt", lambda: (interrupted.append(len(asked)), interrupt()))
        app.post_message(events.Key("escape", None))
        await wait_for(pilot, lambda: run_over(app), timeout=30, what="the interrupted run")
        assert interrupted and app.last_exit_reason == "cancelled"
        assert len(asked) - interrupted[0] <= 3, f"{len(asked) - interrupted[0]} steps after Esc was handled"
        assert len(asked) < 2000


@pytest.mark.timing
async def test_the_runs_end_waits_for_the_worker_at_most_max_wait(make_app, monkeypatch) -> None:
    """Found in review: the frame after the run's end was held again each time its wait ended, for
    as long as the worker's last save took (a 3 s save froze the screen 3 s)."""
    from frogtui.ui.pacing import MAX_WAIT_S

    app = one_read_with_a_slow_last_save(make_app, monkeypatch, 1.0)
    frames = frames_drawn(monkeypatch)  # before the screen's update timer binds its callback
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        frames.clear()
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: app.last_exit_reason is not None, timeout=30, what="the run's end shown")
        shown = time.monotonic()
        await wait_for(pilot, lambda: run_over(app), timeout=30, what="the worker")
    later = [f[0] - shown for f in frames if f[0] > shown]
    assert later and later[0] < MAX_WAIT_S + 0.15, f"first frame {later[0] if later else None} s after the run's end was shown"


async def test_escape_before_the_loop_starts_with_a_draft_in_the_prompt_keeps_both(make_app, monkeypatch) -> None:
    """Found in review: the message went back only into an empty prompt; with a draft there it was
    lost, and its bubble stayed in the chat as if sent."""
    app = make_app([turn("Done.", answer="Ok.")] * 2, approve="all")
    monkeypatch.setattr(session_app, "FIRST_FRAME_S", 1.0)  # (0.3 s could pass before Esc on a busy machine: the loop started)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        app.call_after_refresh = lambda callback, *a, **k: True  # the frame that lets the loop start never comes
        await submit(pilot, "hello there")
        prompt = app.query_one("#prompt")
        prompt.value = "half-typed draft"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, what="the run to end")
        await pilot.pause()
        assert prompt.value == "half-typed draft"
        assert [item.text for item in app.queue.items] == ["hello there"]
        assert not app.chat.query("UserMessage"), "the unsent message still shows as sent"
        assert any("it waits in the queue" in str(n.render()) for n in app.chat.query("Notice"))
        del app.call_after_refresh
