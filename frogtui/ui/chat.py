"""The chat pane: the person's messages, the model's reasoning (dim, collapsible) and its answer
(streamed Markdown), plus the prompt with input history.

Deltas are buffered and flushed a few dozen times a second, so thousands of tokens cost a few
dozen re-renders, not thousands; the flush timer runs only while something streams. Reasoning is
appended, not redrawn: finished lines are frozen in their own widgets and only the last line
re-renders. Every write of streamed text goes through one lock: the timer's flush and the flush a
turn's end or a tool line awaits run on different tasks, and Textual's ``Markdown.append`` shows
text twice when a second append starts before the first has run.
"""
from __future__ import annotations

import asyncio

from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Offset
from textual.widgets import Collapsible, Input, Markdown, Static

from frogtui.ui.messages import TaskSubmitted
from frogtui.ui.toolline import ToolCallLine
from frogtui.ui.trace import TraceEntry

FLUSH_INTERVAL_S = 1 / 30
PREVIEW_CHARS = 72
"""How much of a folded step's reasoning its title shows."""


class UserMessage(Static):
    """One message the person sent (shown as typed: no markup)."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)


class Notice(Static):
    """A line from the app itself: the model is loading, a run ended, something failed (no markup:
    error texts hold brackets)."""

    def __init__(self, text: str, classes: str = "") -> None:
        super().__init__(text, markup=False, classes=classes)


def reasoning_preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of the reasoning on one line, cut at a word near ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(",.;:") + "…"


class ReasoningBlock(Collapsible):
    """The model's thinking for one step; open while it streams, folded when the turn ends.

    Its title shows the step and the start of the thinking, so folded steps still tell the story.
    The title is not in the focus chain (ten steps would be ten Tab stops between the prompt and
    the trace); ``ctrl+t`` opens and folds them all.
    """

    def __init__(self, step: int) -> None:
        self.tail = Static("")
        """The last line (the one still growing); the lines before it sit in frozen widgets."""
        self.body = Vertical(self.tail, classes="reasoning-text")
        self.step = step
        super().__init__(self.body, title=f"thinking (step {step})", collapsed=False)
        self.text = ""
        self._tail_start = 0
        """Where, in the stripped text, the tail starts."""

    def on_mount(self) -> None:
        for title in self.query("CollapsibleTitle"):
            title.can_focus = False

    def add(self, text: str) -> None:
        """Append reasoning text: the lines it completes are frozen, only the last one re-renders."""
        self.text += text
        shown = self.text.strip()
        end = shown.rfind("\n")
        if end >= self._tail_start and self.body.is_attached:
            self.body.mount(Static(Text(shown[self._tail_start : end])), before=self.tail)
            self._tail_start = end + 1
        self.tail.update(Text(shown[self._tail_start :]))
        preview = reasoning_preview(self.text)
        # Content, not a str: a str title is parsed as markup, and reasoning holds brackets
        self.title = Content(f"thinking (step {self.step})" + (f" · {preview}" if preview else ""))


class AnswerBlock(Markdown):
    """The model's answer for one step, appended as it streams."""


class ChatPane(VerticalScroll):
    """The conversation. Public methods are called by the app on the UI thread."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_reasoning = False
        self._pending_reasoning = ""
        self._pending_answer = ""
        self._reasoning: ReasoningBlock | None = None
        self._answer: AnswerBlock | None = None
        self._step: int | None = None
        self._calls: dict[str, ToolCallLine] = {}
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

    def add_user(self, text: str) -> None:
        self._close_step()
        self.mount(UserMessage(text))

    def add_notice(self, text: str, kind: str = "info") -> Notice:
        notice = Notice(text, classes=f"notice-{kind}")
        self.mount(notice)
        return notice

    def add_assistant_text(self, step: int, answer: str, reasoning: str) -> None:
        """Show a whole assistant turn at once (a resumed session)."""
        self._close_step()
        if reasoning:
            block = ReasoningBlock(step)
            self.mount(block)
            block.add(reasoning)
            block.collapsed = not self.show_reasoning
        if answer:
            self.mount(AnswerBlock(answer))

    async def show_call(self, entry: TraceEntry) -> None:
        """Add the line of a newly proposed call after the text streamed so far, or redraw it."""
        if entry.call.id in self._calls:
            self.refresh_call(entry)
            return
        async with self._writing:
            await self._flush()
            self._answer = None  # answer text after the call goes below its line
            self.mount(self._new_call_line(entry))  # not awaited: the next events need not wait for a frame

    def add_call_line(self, entry: TraceEntry) -> None:
        """Show a finished call's line at once (a resumed session)."""
        self._close_step()
        self.mount(self._new_call_line(entry))

    def _new_call_line(self, entry: TraceEntry) -> ToolCallLine:
        line = self._calls[entry.call.id] = ToolCallLine(entry)
        return line

    def refresh_call(self, entry: TraceEntry) -> None:
        """Redraw the line of a call already shown (only that line repaints)."""
        line = self._calls.get(entry.call.id)
        if line is not None:
            line.show(entry)

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

    async def _flush(self) -> None:
        """``flush`` with ``_writing`` held."""
        if not self._pending_reasoning and not self._pending_answer:
            self._run_flush_timer(False)
            return
        if self._pending_reasoning:
            # a local reference: the step may close (end_turn, a tool line) while the mount awaits
            text, self._pending_reasoning = self._pending_reasoning, ""
            block = self._reasoning
            if block is None:
                block = self._reasoning = ReasoningBlock(self._step or 0)
                block.add(text)
                self.mount(block)  # mounts are not awaited: a frame may come between, and events wait for it
            else:
                block.add(text)
        if self._pending_answer:
            if self._answer is None:
                text, self._pending_answer = self._pending_answer.lstrip(), ""
                if not text:
                    return
                self._answer = AnswerBlock(text)
                self.mount(self._answer)
            else:
                text, self._pending_answer = self._pending_answer, ""
                await self._answer.append(text)

    async def end_turn(self) -> None:
        """The step's turn ended: show what is left and fold its reasoning."""
        async with self._writing:
            await self._flush()
            if self._reasoning is not None:
                self._reasoning.collapsed = not self.show_reasoning
            self._close_step()

    def _close_step(self) -> None:
        """End the current step's blocks; text still buffered is shown, never dropped."""
        if self._pending_reasoning:
            if self._reasoning is None:
                block = ReasoningBlock(self._step or 0)
                block.add(self._pending_reasoning)
                block.collapsed = not self.show_reasoning
                self.mount(block)
            else:
                self._reasoning.add(self._pending_reasoning)
        self._pending_reasoning = ""
        if self._pending_answer:
            text, answer = self._pending_answer, self._answer
            if answer is None:
                if text.strip():
                    self.mount(AnswerBlock(text.lstrip()))
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
        for block in self.query(ReasoningBlock):
            if block is not self._reasoning:
                block.collapsed = not self.show_reasoning
        return self.show_reasoning

    async def clear(self) -> None:
        self._close_step()
        self._calls.clear()
        await self.remove_children()


class PromptInput(Input):
    """The prompt. Enter sends (queues while the agent works; on an empty prompt, sends the next
    queued message); Up/Down walk through the messages sent before."""

    BINDINGS = [
        Binding("up", "history(-1)", "Previous message", show=False),
        Binding("down", "history(1)", "Next message", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        # no select-all on focus: a key typed elsewhere lands here and must not replace the draft
        super().__init__(placeholder="Describe a task, or ask a follow-up (Enter sends)", id=id, select_on_focus=False)
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
