"""A read-only view of the session's trajectory JSON (Esc closes)."""
from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from frogtui.ui.approval_screen import display_path


class TrajectoryScreen(ModalScreen[None]):
    """Shows the trajectory file of the session."""

    DEFAULT_CSS = """
    TrajectoryScreen { align: center middle; background: $background 60%; }
    TrajectoryScreen > Vertical { width: 95%; height: 90%; border: round $primary; background: $surface; }
    TrajectoryScreen TextArea { height: 1fr; }
    TrajectoryScreen #trajectory-path { color: $text-muted; padding: 0 1; }
    """

    BINDINGS = [Binding("escape", "dismiss_screen", "Close")]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = "(nothing saved yet: the trajectory is written after each step)"
        except (OSError, UnicodeDecodeError) as err:
            text = f"(cannot read the trajectory: {err})"
        with Vertical() as box:
            box.border_title = "Trajectory (Esc closes)"
            yield Static(display_path(self.path), id="trajectory-path")
            yield TextArea(text, read_only=True, show_line_numbers=True, soft_wrap=False)

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
