"""The hand-off editor: the drafted first message of a fresh conversation (``agent/handoff.py``),
for the person to read and edit before it is sent.

Keys: ctrl+s start the fresh conversation with the text as it stands · Esc keep the current
conversation (a full one ends its runs with ``max_context_len``).
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from frogtui.ui.approval_screen import KeyLegend

WHY = {
    "max_context_len": "The context is (nearly) full",
    "requested": "You asked for a fresh conversation",
}


class HandoffScreen(ModalScreen[str | None]):
    """Dismissed with the hand-off text to send, or None to keep the conversation."""

    DEFAULT_CSS = """
    HandoffScreen { align: center middle; background: $background 60%; }
    #handoff-dialog { width: 90%; height: 90%; border: thick $primary; border-title-color: $primary; background: $surface; padding: 0 1; }
    #handoff-why { color: $text-muted; margin: 1 0 0 0; }
    #handoff-text { height: 1fr; margin: 1 0 0 0; }
    #handoff-keys { margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("ctrl+s", "start", "Start fresh conversation", priority=True),
        Binding("escape", "keep", "Keep this conversation"),
    ]

    def __init__(self, draft: str, ended: str, *, used: int = 0, budget: int = 0) -> None:
        super().__init__()
        self.draft = draft
        self.ended = ended
        self.used, self.budget = used, budget

    def compose(self) -> ComposeResult:
        with Vertical(id="handoff-dialog") as dialog:
            dialog.border_title = "Hand-off to a fresh conversation"
            tokens = f" ({self.used:,} of {self.budget:,} tokens)" if self.budget else ""
            why = WHY.get(self.ended, f"The run ended ({self.ended})") + tokens + "."
            yield Static(Text(f"{why} A fresh conversation starts with the message below, drafted from frogtui's records "
                              "(the task, the files changed, the calls made); edit it as you like. Checkpoints and review go on."),
                         id="handoff-why")
            yield TextArea(self.draft, id="handoff-text", soft_wrap=True, show_line_numbers=False)
            yield KeyLegend([("ctrl+s", "start the fresh conversation"), ("Esc", "keep this conversation")], id="handoff-keys")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    @property
    def text(self) -> str:
        return self.query_one(TextArea).text

    def action_start(self) -> None:
        text = self.text.strip()
        if not text:
            self.notify("The hand-off is empty; write what the fresh conversation should know, or Esc.", severity="warning")
            return
        self.dismiss(text)

    def action_keep(self) -> None:
        self.dismiss(None)
