"""Messages typed while the agent works: queued, shown above the prompt, editable and removable,
and sent one by one as the follow-up when each run ends.

``MessageQueue`` is plain data (the order and what goes next); ``QueuePanel`` shows it. A message
typed after Esc, while the run is stopping, goes first and is sent as soon as it stops; after an
interrupt the other queued messages wait for the person (Enter on the empty prompt sends the next).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Label, ListItem, ListView

from frogtui.ui.chat import ChatPane, PromptInput
from frogtui.ui.status import StatusBar

PREVIEW_CHARS = 100


@dataclass
class Queued:
    """One message waiting to be sent."""

    text: str
    step: int
    """The step that was running when it was typed (where it entered the conversation)."""
    now: bool = False
    """Typed after Esc: sent as soon as the interrupted run stops."""


@dataclass
class MessageQueue:
    """The waiting messages, in the order they are sent."""

    items: list[Queued] = field(default_factory=list)

    def add(self, text: str, step: int, *, now: bool = False) -> Queued:
        """Queue ``text``; a ``now`` message goes before every message that is not."""
        item = Queued(text, step, now)
        position = sum(1 for queued in self.items if queued.now) if now else len(self.items)
        self.items.insert(position, item)
        return item

    def next(self, *, after_interrupt: bool = False) -> Queued | None:
        """Take the message to send now that a run ended: the first one, or after an interrupt
        only one typed after it (None: nothing goes)."""
        if not self.items or (after_interrupt and not self.items[0].now):
            return None
        return self.items.pop(0)

    def take(self, index: int) -> Queued | None:
        """Remove and return the message at ``index`` (to edit or drop it)."""
        return self.items.pop(index) if 0 <= index < len(self.items) else None

    def __len__(self) -> int:
        return len(self.items)


def preview(item: Queued, limit: int = PREVIEW_CHARS) -> str:
    """One line for the panel: the start of the message and where it was typed."""
    flat = " ".join(item.text.split())
    flat = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    when = "sends when Esc has stopped the run" if item.now else f"typed during step {item.step}"
    return f"{flat}  ({when})"


class QueuePanel(ListView):
    """The queued messages above the prompt (hidden when there are none). Enter or ``e`` moves the
    selected one back into the prompt to edit (Enter there queues it again); Delete or ``x``
    removes it. Focus selects a row (the first, or the one selected before), so a key acts at
    once. One action per visit: after it the app gives focus back to the prompt, and until the list
    is focused again its ``e`` and ``x`` are not commands, so letters typed right after (even those
    a fast typist's terminal delivers before the focus has moved) are text for the prompt. The app
    owns the ``MessageQueue`` and calls ``show`` after every change."""

    BINDINGS = [
        Binding("e", "edit", "Edit queued"),
        Binding("delete,x,backspace", "remove", "Remove queued"),
    ]

    DEFAULT_CSS = """
    QueuePanel { height: auto; max-height: 6; border: round $warning; border-title-color: $warning; background: $background 0%; }
    QueuePanel > ListItem { background: $background 0%; color: $text-muted; }
    QueuePanel > ListItem.-highlight { color: $text; }
    """

    class EditRequested(Message):
        """The person wants the queued message at ``index`` back in the prompt."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class RemoveRequested(Message):
        """The person removes the queued message at ``index``."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    _acted = False
    """An action ran since the list was last focused: its keys are text until the next visit."""

    def on_mount(self) -> None:
        self.display = False

    async def show(self, queue: MessageQueue) -> None:
        """Show the queue's messages (hidden when empty), the selected row kept where it can be."""
        selected = self.index
        await self.clear()
        if queue.items:
            await self.extend(ListItem(Label(Text(preview(item)))) for item in queue.items)
            if selected is not None or self.has_focus:
                self.index = min(selected or 0, len(queue.items) - 1)
        self.border_title = f"queued ({len(queue)}) · sent when the run ends · shift+tab here: e edit · x remove"
        self.display = bool(queue.items)

    def on_focus(self) -> None:
        self._acted = False
        if self.index is None and self.children:
            self.index = 0

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``e`` and ``x`` are commands once per visit (after that, the app types them into the prompt)."""
        return not (self._acted and action in ("edit", "remove"))

    def action_edit(self) -> None:
        if self.index is not None and not self._acted:
            self._acted = True
            self.post_message(self.EditRequested(self.index))

    def action_remove(self) -> None:
        if self.index is not None and not self._acted:
            self._acted = True
            self.post_message(self.RemoveRequested(self.index))

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        event.stop()
        self.action_edit()


class QueueInApp(App[int]):
    """The app's queue of messages (``SessionApp`` builds on it): added to, taken from as each run
    ends, edited and removed from its panel. What goes when is the run state's to say
    (``run_state.py``); this shows it."""

    def __init__(self) -> None:
        super().__init__()
        self.queue = MessageQueue()
        """Messages typed while the agent works, sent one by one as each run ends."""

    def _step_now(self) -> int:
        return self.query_one(StatusBar).step

    async def queue_message(self, text: str, *, first: bool = False) -> None:
        """Queue ``text`` (``first``: typed after Esc, it goes first, at once)."""
        self.queue.add(text, self._step_now(), now=first)
        await self.query_one(QueuePanel).show(self.queue)

    async def queue_unsent(self, text: str) -> None:
        """A message whose run stopped before its loop started, queued where it was: before the
        messages typed earlier, after those typed after Esc (they go at once)."""
        first = sum(1 for item in self.queue.items if item.now)
        self.queue.items.insert(first, Queued(text, self._step_now(), False))
        await self.query_one(QueuePanel).show(self.queue)

    async def next_queued(self, *, after_interrupt: bool = False) -> str | None:
        """Take the next queued message to send (after an interrupt only one typed after Esc),
        showing where it was typed; None when none goes (after an interrupt, the person is told
        how to send the rest)."""
        item = self.queue.next(after_interrupt=after_interrupt)
        if item is None:
            if after_interrupt and self.queue.items:
                waiting = f"{len(self.queue)} queued message(s) wait: Enter on the empty prompt sends the next."
                self.query_one(ChatPane).add_notice(waiting, "warning")
            return None
        await self.query_one(QueuePanel).show(self.queue)
        self.query_one(ChatPane).add_notice(f"↳ queued during step {item.step}, sent now that the run has ended", "queued")
        self.query_one(ChatPane).add_user(item.text)
        return item.text

    async def clear_queue(self) -> None:
        self.queue.items.clear()
        await self.query_one(QueuePanel).show(self.queue)

    async def on_queue_panel_edit_requested(self, message: QueuePanel.EditRequested) -> None:
        item = self.queue.take(message.index)
        if item is not None:
            prompt = self.query_one(PromptInput)
            if prompt.value.strip():  # what was being typed goes back in the queue rather than being lost
                self.queue.add(prompt.value.strip(), self._step_now())
            prompt.value = item.text
            prompt.cursor_position = len(prompt.value)  # typing goes on at the end of the message
            prompt.focus()
        await self.query_one(QueuePanel).show(self.queue)

    async def on_queue_panel_remove_requested(self, message: QueuePanel.RemoveRequested) -> None:
        self.queue.take(message.index)
        await self.query_one(QueuePanel).show(self.queue)
        self.query_one(PromptInput).focus()  # what is typed next is text, not the list's commands
