"""A read-only view of the session's trajectory JSON, syntax-highlighted (Esc closes).

The view is virtualised (Line API): only the rows on screen are drawn, and the JSON is lexed by
pygments in chunks of lines as they come on screen, so a 5 MB trajectory opens at once. A line
longer than ``MAX_LINE_CHARS`` (a long observation is one JSON string) is cut with a note, and a
file larger than ``MAX_BYTES`` shows its first part with the path to open it elsewhere.
"""
from __future__ import annotations

from pathlib import Path

from pygments.lexers.data import JsonLexer
from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from frogtui.ui.approval_screen import display_path
from frogtui.ui.diffmodel import HighlightedLines
from frogtui.ui.diffview import token_styles
from frogtui.ui.themes import pygments_style_for

MAX_LINE_CHARS = 2_000
"""Characters of one line shown; the rest is summarised (``… N more characters``)."""
MAX_BYTES = 32 * 1024 * 1024
"""Bytes of the file read; a larger file shows its start and a note."""


def read_trajectory(path: Path, limit: int = MAX_BYTES) -> tuple[list[str], str]:
    """The lines to show (long ones cut) and a note for the path line ('' when all is shown)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return ["(nothing saved yet: the trajectory is written after each step)"], ""
    except OSError as err:
        return [f"(cannot read the trajectory: {err})"], ""
    note = ""
    if len(data) > limit:
        data = data[:limit]
        note = f"showing the first {limit // (1024 * 1024)} MB; open the file in an editor for the rest"
    text = data.decode("utf-8", errors="replace")
    lines = [cut_line(line) for line in text.splitlines()]
    return lines or [""], note


def cut_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """``line``, or its first ``limit`` characters and how many more there are."""
    return line if len(line) <= limit else f"{line[:limit]}… ({len(line) - limit:,} more characters)"


class JsonView(ScrollView, can_focus=True):
    """Highlighted JSON lines with line numbers; arrows, PgUp/PgDn, Home/End scroll."""

    COMPONENT_CLASSES = {"json-view--lineno", "json-view--text"}

    DEFAULT_CSS = """
    JsonView { background: $surface; height: 1fr; }
    JsonView > .json-view--lineno { color: $text-muted; }
    JsonView > .json-view--text { color: $text; }
    """

    def __init__(self, lines: list[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.highlighted = HighlightedLines(lines, JsonLexer(stripnl=False, ensurenl=False))
        self._gutter = len(str(len(lines)))
        self._width = self._gutter + 1 + max((len(line) for line in lines), default=0)

    @property
    def line_count(self) -> int:
        return len(self.highlighted.lines)

    def on_mount(self) -> None:
        self.virtual_size = Size(self._width, self.line_count)

    def action_scroll_home(self) -> None:
        self.scroll_home(animate=False)  # an animated jump would lex every chunk on the way

    def action_scroll_end(self) -> None:
        self.scroll_end(animate=False)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self.size.width
        text_style = self.get_component_rich_style("json-view--text")
        if index >= self.line_count:
            return Strip.blank(width, text_style)
        lineno = self.get_component_rich_style("json-view--lineno")
        syntax = token_styles(pygments_style_for(self.app.current_theme))
        segments = [Segment(f"{index + 1:>{self._gutter}} ", text_style + lineno)]
        for token_type, value in self.highlighted.tokens(index):
            style: Style | None = syntax.get(token_type)
            while style is None and token_type.parent is not None:
                token_type = token_type.parent
                style = syntax.get(token_type)
            segments.append(Segment(value.expandtabs(4), text_style + style if style else text_style))
        return Strip(segments).crop_extend(scroll_x, scroll_x + width, text_style)


class TrajectoryScreen(ModalScreen[None]):
    """Shows the trajectory file of the session."""

    DEFAULT_CSS = """
    TrajectoryScreen { align: center middle; background: $background 60%; }
    TrajectoryScreen > Vertical { width: 95%; height: 90%; border: round $primary; background: $surface; }
    TrajectoryScreen #trajectory-path { color: $text-muted; padding: 0 1; }
    """

    BINDINGS = [Binding("escape", "dismiss_screen", "Close")]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        lines, note = read_trajectory(self.path)
        with Vertical() as box:
            box.border_title = "Trajectory (Esc closes)"
            yield Static(display_path(self.path) + (f" · {note}" if note else ""), id="trajectory-path", markup=False)
            yield JsonView(lines, id="trajectory-json")

    def on_mount(self) -> None:
        self.query_one(JsonView).focus()

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
