"""The app's side of long sessions: messages queued while the agent works (sent one by one as each
run ends) and the hand-off of a full conversation (drafted on a worker, edited in
``HandoffScreen``, started as the session's next run). ``SessionApp`` builds on it: it owns the
queue, the panes and the runs; these handlers live here so that the session's screen stays small.
Here too: the line filter that keeps control sequences in what is drawn from reaching the
terminal (``terminal_safety.py``), Esc and a run stopped before its loop started, and the
approval questions (shown after the loop's events held back for a frame).
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App
from textual.filter import LineFilter

from frogtui.ui.chat import ChatPane, PromptInput
from frogtui.ui.messages import ApprovalRequested, CallPreviewed, HandoffDrafted
from frogtui.ui.queue import MessageQueue, Queued, QueuePanel
from frogtui.ui.status import StatusBar
from frogtui.ui.terminal_safety import ControlFilter
from frogtui.ui.trace import TracePane

if TYPE_CHECKING:
    from frogtui.session.core import SessionCore
    from frogtui.ui.asking import ModalAsk
    from frogtui.ui.state import SessionUiState


class LongSession(App[int]):
    """Queue, interrupt, approval and hand-off handlers; ``SessionApp`` sets ``core``, ``queue`` and ``busy`` and runs."""

    core: SessionCore
    queue: MessageQueue
    busy: bool
    state: SessionUiState
    asking: ModalAsk
    interrupting: bool
    _run_text: str
    CONTROL_FILTER = ControlFilter()

    def get_line_filters(self) -> list[LineFilter]:
        """Textual's filters, then ``ControlFilter``: applied to every line of every widget."""
        return [*super().get_line_filters(), self.CONTROL_FILTER]

    def _start_run(self, text: str, *, handoff: bool = False) -> None:
        """Start a run with ``text`` (``SessionApp``)."""
        raise NotImplementedError

    async def _show_held_events(self) -> None:
        """Show the loop's events held back for a frame (``SessionApp``)."""
        raise NotImplementedError

    async def on_call_previewed(self, message: CallPreviewed) -> None:
        await self._show_held_events()  # the call's row first
        self.query_one(TracePane).update(message.call, diff=message.diff)

    async def on_approval_requested(self, message: ApprovalRequested) -> None:
        if message.future.done():  # answered already (interrupted, the app closing): nobody waits
            return
        await self._show_held_events()  # the call's row and line first
        trace = self.query_one(TracePane)
        trace.update(message.request.call, status="asking")
        self.query_one(ChatPane).refresh_call(trace.entries[message.request.call.id])
        self.query_one(StatusBar).state = "waiting for you"
        from frogtui.ui.approval_screen import ApprovalScreen  # with its diff viewer, at the first question

        self.push_screen(ApprovalScreen(message), callback=partial(self._approval_answered, message))

    def _approval_answered(self, message: ApprovalRequested, answer: Any) -> None:
        if answer is not None and not message.future.done():
            message.future.set_result(answer)
        self.query_one(StatusBar).state = "working" if self.busy else "ready"

    def interrupt(self) -> None:
        """Stop generation or the running command; a waiting question is denied (a message sent
        now goes first, at once)."""
        if not self.busy:
            return
        self.core.interrupt()
        self.asking.cancel_pending()
        from frogtui.ui.approval_screen import ApprovalScreen

        if isinstance(self.screen, ApprovalScreen):
            self.screen.dismiss(None)
        self.query_one(StatusBar).state = "interrupting"
        self.interrupting = True

    async def _not_started(self) -> None:
        """Esc came before the run's loop started: nothing was sent; the message goes back in the
        prompt, or first in the queue when something is being typed there."""
        self.state.last_exit_reason = "cancelled"
        chat, prompt = self.query_one(ChatPane), self.query_one(PromptInput)
        bubbles = chat.query("UserMessage")
        if bubbles:  # not sent: not shown as sent either
            await bubbles.last().remove()
        if not prompt.value.strip():
            prompt.value, where = self._run_text, "it is back in the prompt"
        else:  # before the messages typed earlier, after those typed after Esc (they go at once)
            first = sum(1 for item in self.queue.items if item.now)
            self.queue.items.insert(first, Queued(self._run_text, self.query_one(StatusBar).step, False))
            await self.query_one(QueuePanel).show(self.queue)
            where = "it waits in the queue"
        chat.add_notice(f"Interrupted before the run started: the message was not sent ({where}).", "warning")
        self.call_later(self._send_queued, after_interrupt=True)

    async def _send_queued(self, *, after_interrupt: bool = False) -> None:
        """Send the next queued message (after an interrupt only one typed after Esc), showing
        where it was typed."""
        item = self.queue.next(after_interrupt=after_interrupt)
        if item is None:
            if after_interrupt and self.queue.items:
                waiting = f"{len(self.queue)} queued message(s) wait: Enter on the empty prompt sends the next."
                self.query_one(ChatPane).add_notice(waiting, "warning")
            return
        await self.query_one(QueuePanel).show(self.queue)
        self.query_one(ChatPane).add_notice(f"↳ queued during step {item.step}, sent now that the run has ended", "queued")
        self.query_one(ChatPane).add_user(item.text)
        self._start_run(item.text)

    async def on_queue_panel_edit_requested(self, message: QueuePanel.EditRequested) -> None:
        item = self.queue.take(message.index)
        if item is not None:
            prompt = self.query_one(PromptInput)
            if prompt.value.strip():  # what was being typed goes back in the queue rather than being lost
                self.queue.add(prompt.value.strip(), self.query_one(StatusBar).step)
            prompt.value = item.text
            prompt.cursor_position = len(prompt.value)  # typing goes on at the end of the message
            prompt.focus()
        await self.query_one(QueuePanel).show(self.queue)

    async def on_queue_panel_remove_requested(self, message: QueuePanel.RemoveRequested) -> None:
        self.queue.take(message.index)
        await self.query_one(QueuePanel).show(self.queue)
        self.query_one(PromptInput).focus()  # what is typed next is text, not the list's commands

    @work(thread=True, exclusive=True, group="handoff")
    def draft_handoff(self, ended: str) -> None:
        """Draft the hand-off on a worker (it reads the session's diff), then show it."""
        self.post_message(HandoffDrafted(self.core.draft_handoff(ended), ended))

    def on_handoff_drafted(self, message: HandoffDrafted) -> None:
        from frogtui.ui.handoff_screen import HandoffScreen  # a TextArea: imported when first shown

        used, budget = self.query_one(StatusBar).context_used, self.query_one(StatusBar).context_size
        self.push_screen(HandoffScreen(message.text, message.ended, used=used, budget=budget), callback=self._handoff_answered)

    async def _handoff_answered(self, text: str | None) -> None:
        if text is None:
            self.query_one(ChatPane).add_notice("Kept this conversation. Ctrl+P → Hand off starts a fresh one when you want.", "warning")
            await self._send_queued()
        elif self.busy:
            self.notify("A run started meanwhile; hand off after it ends.", severity="warning")
        else:
            self._start_run(text, handoff=True)
