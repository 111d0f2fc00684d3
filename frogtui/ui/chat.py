"""The chat pane: the person's messages, the model's reasoning (dim, folded once its step ends),
each tool call's line, and the model's answer (streamed Markdown), plus the prompt with input
history.

A step's reasoning and call lines are items of a ``StepLog`` (``ui/steplog.py``), one widget for
each run of steps between messages, answers and notices, so a step costs no mount. Deltas are
buffered and flushed a few dozen times a second, so thousands of tokens cost a few dozen
re-renders, not thousands; the flush timer runs only while something streams. Every write of
streamed text goes through one lock: the timer's flush and the flush a turn's end or a tool line
awaits run on different tasks, and Textual's ``Markdown.append`` shows text twice when a second
append starts before the first has run.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Offset
from textual.screen import Screen
from textual.suggester import Suggester
from textual.widget import Widget
from textual.widgets import Input, Static

from frogtui.ui.messages import TaskSubmitted
from frogtui.ui.steplog import CallLine, StepLog, StepReasoning
from frogtui.ui.trace import TraceEntry

if TYPE_CHECKING:  # Markdown comes with the first answer (answer.py), after the first paint
    from frogtui.ui.answer import AnswerBlock

FLUSH_INTERVAL_S = 1 / 30


class UserMessage(Static):
    """One message the person sent (shown as typed: no markup)."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)


class Notice(Static):
    """A line from the app itself: the model is loading, a run ended, something failed (no markup:
    error texts hold brackets)."""

    def __init__(self, text: str, classes: str = "") -> None:
        super().__init__(text, markup=False, classes=classes)


def new_answer(text: str) -> AnswerBlock:
    """An answer block (Markdown, and its import, come with the first answer)."""
    from frogtui.ui.answer import AnswerBlock

    return AnswerBlock(text)


class ChatPane(VerticalScroll):
    """The conversation. Public methods are called by the app on the UI thread."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_reasoning = False
        self._pending_reasoning = ""
        self._pending_answer = ""
        self._log: StepLog | None = None
        """The step log at the end of the chat, where the next step's items go (None after a
        message, a notice or an answer: the next item starts a new log below it)."""
        self._reasoning: tuple[StepLog, StepReasoning] | None = None
        """The current step's reasoning and the log it is in."""
        self._answer: AnswerBlock | None = None
        self._step: int | None = None
        self._calls: dict[str, tuple[StepLog, CallLine]] = {}
        self._flushing = False
        self._writing = asyncio.Lock()
        """Held by every write of streamed text (see the module's docstring)."""

    def on_mount(self) -> None:
        self.anchor()
        self._flush_timer = self.set_interval(FLUSH_INTERVAL_S, self.flush, pause=True)
        """Runs only while deltas arrive (resumed by them, paused by a flush with nothing to show)."""

    @property
    def scroll_offset(self) -> Offset:
        """Never above the top: Textual's compositor sets an anchored widget's ``scroll_y`` without
        clamping it (negative while the chat is shorter than the pane), which drew a short chat at
        the bottom of the pane under empty rows until the next layout."""
        return Offset(round(self.scroll_x), max(0, round(self.scroll_y)))

    @property
    def flushing(self) -> bool:
        """Whether the flush timer runs (only while something streams)."""
        return self._flushing

    def _run_flush_timer(self, run: bool) -> None:
        if run != self._flushing:
            self._flushing = run
            self._flush_timer.resume() if run else self._flush_timer.pause()

    @property
    def answer_text(self) -> str:
        """All answer text shown so far in the current step (flushed or not)."""
        return (self._answer.source if self._answer is not None else "") + self._pending_answer

    @property
    def reasoning(self) -> list[StepReasoning]:
        """Every step's reasoning shown, in order."""
        return [item for log in self.query(StepLog) for item in log.items if isinstance(item, StepReasoning)]

    @property
    def call_lines(self) -> list[CallLine]:
        """Every tool call's line shown, in order."""
        return [item for log in self.query(StepLog) for item in log.items if isinstance(item, CallLine)]

    def _mount_block(self, widget: Widget) -> None:
        """Mount a message, notice or answer: the next step's items go below it."""
        self._log = None
        self.mount(widget)  # not awaited: the next events need not wait for a frame

    def _steps(self) -> StepLog:
        if self._log is None:
            self._log = StepLog()
            self.mount(self._log)
        return self._log

    def add_user(self, text: str) -> None:
        self._close_step()
        self._mount_block(UserMessage(text))

    def add_notice(self, text: str, kind: str = "info") -> Notice:
        notice = Notice(text, classes=f"notice-{kind}")
        self._mount_block(notice)
        return notice

    def add_assistant_text(self, step: int, answer: str, reasoning: str) -> None:
        """Show a whole assistant turn at once (a resumed session)."""
        self._close_step()
        if reasoning:
            self._steps().add(StepReasoning(step, reasoning, collapsed=not self.show_reasoning))
        if answer:
            self._mount_block(new_answer(answer))

    async def show_call(self, entry: TraceEntry) -> None:
        """Add the line of a newly proposed call after the text streamed so far, or redraw it."""
        if entry.call.id in self._calls:
            self.refresh_call(entry)
            return
        async with self._writing:
            await self._flush()
            self._answer = None  # answer text after the call goes below its line
            self._add_call_line(entry)

    def add_call_line(self, entry: TraceEntry) -> None:
        """Show a finished call's line at once (a resumed session)."""
        self._close_step()
        self._add_call_line(entry)

    def _add_call_line(self, entry: TraceEntry) -> None:
        log, line = self._steps(), CallLine(entry)
        self._calls[entry.call.id] = (log, line)
        log.add(line)

    def refresh_call(self, entry: TraceEntry) -> None:
        """Redraw the line of a call already shown (only that line repaints)."""
        shown = self._calls.get(entry.call.id)
        if shown is not None:
            log, line = shown
            line.entry = entry
            log.changed(line)

    def reasoning_delta(self, step: int, text: str) -> None:
        self._switch_step(step)
        self._pending_reasoning += text
        self._run_flush_timer(True)

    def answer_delta(self, step: int, text: str) -> None:
        self._switch_step(step)
        self._pending_answer += text
        self._run_flush_timer(True)

    def _switch_step(self, step: int) -> None:
        if step != self._step:
            self._close_step()
            self._step = step

    async def flush(self) -> None:
        """Show the buffered deltas (and stop the timer when there are none)."""
        async with self._writing:
            await self._flush()

    def _add_reasoning(self, text: str, *, collapsed: bool) -> None:
        if self._reasoning is None:
            log = self._steps()
            self._reasoning = (log, StepReasoning(self._step or 0, text, collapsed=collapsed))
            log.add(self._reasoning[1])
        else:
            log, item = self._reasoning
            item.text += text
            log.changed(item)

    async def _flush(self) -> None:
        """``flush`` with ``_writing`` held."""
        if not self._pending_reasoning and not self._pending_answer:
            self._run_flush_timer(False)
            return
        if self._pending_reasoning:
            text, self._pending_reasoning = self._pending_reasoning, ""
            self._add_reasoning(text, collapsed=False)  # open while it streams
        if self._pending_answer:
            if self._answer is None:
                text, self._pending_answer = self._pending_answer.lstrip(), ""
                if not text:
                    return
                self._answer = new_answer(text)
                self._mount_block(self._answer)
            else:
                text, self._pending_answer = self._pending_answer, ""
                await self._answer.append(text)

    async def end_turn(self) -> None:
        """The step's turn ended: show what is left and fold its reasoning."""
        async with self._writing:
            if self._reasoning is None and self._pending_reasoning:  # none of it shown yet: added folded at once
                text, self._pending_reasoning = self._pending_reasoning, ""
                self._add_reasoning(text, collapsed=not self.show_reasoning)
            await self._flush()
            if self._reasoning is not None:
                log, item = self._reasoning
                if item.collapsed != (not self.show_reasoning):
                    item.collapsed = not self.show_reasoning
                    log.changed(item)
            self._close_step()

    def _close_step(self) -> None:
        """End the current step's blocks; text still buffered is shown, never dropped."""
        if self._pending_reasoning:
            self._add_reasoning(self._pending_reasoning, collapsed=not self.show_reasoning)
        self._pending_reasoning = ""
        if self._pending_answer:
            text, answer = self._pending_answer, self._answer
            if answer is None:
                if text.strip():
                    self._mount_block(new_answer(text.lstrip()))
            else:
                self.call_later(self._append_locked, answer, text)
        self._pending_answer = ""
        self._reasoning = None
        self._answer = None
        self._step = None

    async def _append_locked(self, block: AnswerBlock, text: str) -> None:
        async with self._writing:
            await block.append(text)

    def toggle_reasoning(self) -> bool:
        """Open or fold every reasoning block; returns the new setting."""
        self.show_reasoning = not self.show_reasoning
        live = self._reasoning[1] if self._reasoning is not None else None
        for log in self.query(StepLog):
            for item in log.items:
                if isinstance(item, StepReasoning) and item is not live and item.collapsed == self.show_reasoning:
                    item.collapsed = not self.show_reasoning
                    log.changed(item)
        return self.show_reasoning

    async def clear(self) -> None:
        self._close_step()
        self._calls.clear()
        self._log = None
        await self.remove_children()


class PromptInput(Input):
    """The prompt. Enter sends (queues while the agent works; on an empty prompt, sends the next
    queued message); Up/Down walk through the messages sent before."""

    BINDINGS = [
        Binding("up", "history(-1)", "Previous message", show=False),
        Binding("down", "history(1)", "Next message", show=False),
    ]

    def __init__(self, *, id: str | None = None, suggester: Suggester | None = None) -> None:
        # no select-all on focus: a key typed elsewhere lands here and must not replace the draft
        super().__init__(placeholder="Describe a task, or ask a follow-up (Enter sends)", id=id, select_on_focus=False, suggester=suggester)
        self.history: list[str] = []
        self._position = 0

    def action_history(self, direction: int) -> None:
        if not self.history:
            return
        self._position = max(0, min(len(self.history), self._position + direction))
        self.value = self.history[self._position] if self._position < len(self.history) else ""
        self.cursor_position = len(self.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:  # the app may send a queued message
            self.post_message(TaskSubmitted(""))
            return
        if not self.history or self.history[-1] != text:
            self.history.append(text)
        self._position = len(self.history)
        self.value = ""
        self.post_message(TaskSubmitted(text))


class MainScreen(Screen[None]):
    """The app's screen (chat, trace, prompt). The prompt has the focus from the start, not after
    another widget had it: each change of focus recomposes the footer. The app paces its frames
    while the agent works flat out (``ui/pacing.py``: ``FrameHold``)."""

    AUTO_FOCUS = "#prompt"
