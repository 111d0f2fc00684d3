"""The check that decides which attempts passed, confirmed before ``/attempts N TASK`` starts: the
command proposed from the repository (``attempts.check.propose_check``) in an editable box.

Keys: Enter run the attempts with the command in the box (an empty box: without a check) ·
ctrl+n run them without a check · Esc do not run them.
"""
from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from frogtui.ui.approval_screen import KeyLegend


class CheckScreen(ModalScreen["str | None"]):
    """Dismissed with the check command to run ('' for none), or None when the attempts do not run.

    Args:
        n: how many attempts will run.
        proposed: the command proposed from the repository, None when nothing suggests one.
    """

    DEFAULT_CSS = """
    CheckScreen { align: center middle; background: $background 60%; }
    #check-dialog { width: 90%; max-width: 100; height: auto; border: thick $primary; border-title-color: $primary;
                    background: $surface; padding: 0 1; }
    #check-why { color: $text-muted; margin: 1 0 0 0; }
    #check-command { margin: 1 0 0 0; }
    #check-keys { margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("ctrl+n", "without", "Run without a check", priority=True),
        Binding("escape", "cancel", "Do not run"),
    ]

    def __init__(self, n: int, proposed: str | None) -> None:
        super().__init__()
        self.n, self.proposed = n, proposed

    def compose(self) -> ComposeResult:
        with Vertical(id="check-dialog") as dialog:
            dialog.border_title = f"The check for {self.n} attempts"
            why = ("Proposed from the repository; edit it if you like. It runs in each attempt's sandbox when the attempt ends; "
                   "exit status 0 passes." if self.proposed else
                   "Nothing in the repository suggests a check (pytest, npm test, cargo test, go test): type one, "
                   "or run the attempts without one.")
            yield Static(Text(why), id="check-why")
            yield Input(value=self.proposed or "", placeholder="the command that checks an attempt", id="check-command")
            yield KeyLegend([("Enter", "run with this check"), ("ctrl+n", "run without a check"), ("Esc", "do not run")],
                            id="check-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_without(self) -> None:
        self.dismiss("")

    def action_cancel(self) -> None:
        self.dismiss(None)
