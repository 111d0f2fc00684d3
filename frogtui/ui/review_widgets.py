"""The pieces of the review screen (``review.py``): the tree of files and hunks with its keys,
the highlighted diff of the hunk under the cursor, and the discard confirmation."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pygments import lex
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, Tree

from frogtui.ui.diffmodel import lexer_for
from frogtui.ui.diffview import token_styles
from frogtui.ui.review_pages import Row, layout, page, page_count, page_lines
from frogtui.ui.themes import pygments_style_for
from frogtui.vcs.hunks import ChangeGroup, FileChange, ReviewHunk

MARKS = {True: "[x]", False: "[ ]", None: "[~]"}
LEXED_CHARS = 4_000
"""A line longer than this is drawn without syntax colours (lexing megabytes takes seconds)."""
UNSEEN_NOTE = " · not seen yet"
"""Marks a hunk (and its file) holding an accepted change not yet shown in full: commit waits."""
CONTROL_NOTE = "⚠ runs at your next commit: check it"
"""Marks a session's change to a hook or a git-controlling file (.gitattributes, .husky/…)."""
NESTED_NOTE = ("⚠ nested git repository the session created, left out of review: "
               "its own config (core.fsmonitor, hooks) runs at your git commands in it")
"""Flags, on top of the changes, a nested repository the session created (``vcs.nested``)."""
IGNORED_NOTE = "⚠ ignored by git, changed during the session: not in this review, and undo cannot restore it"
"""Flags, on top of the changes, an ignored path the session changed (``vcs.ignored``: ``.venv/bin/git``, ``.env``)."""
ORIGIN_NOTES = {
    "session": "",
    "earlier": " (yours, from before the session)",
    "during": " (yours, made during the session)",
    "mixed": " (mixes yours and the session's)",
}


def mark(accepted: bool, partly: bool) -> str:
    return MARKS[None] if partly else MARKS[accepted]


class HunkTree(Tree[Any]):
    """Files and their hunks; space accepts or rejects the one under the cursor. Committing is
    ctrl+s only (the screen's binding): no single letter commits."""

    BINDINGS = [  # in footer order: commit and back first, so a narrow footer keeps them
        Binding("ctrl+s", "screen.commit", "Commit"),
        Binding("escape", "screen.close", "Back"),
        Binding("space", "screen.toggle", "Accept/reject"),
        Binding("a", "screen.toggle_file", "File"),
        Binding("s", "screen.split", "Split", tooltip="Split the hunk under the cursor into smaller ones"),
        Binding("right_square_bracket", "screen.page(1)", "Page", tooltip="Scroll the diff down a screen, then on to its next page"),
        Binding("left_square_bracket", "screen.page(-1)", "Page up", show=False),
        Binding("m", "screen.redraft", "Redraft"),
        Binding("d", "screen.discard", "Discard rejected", tooltip="Put back the old text of this session's rejected changes"),
        Binding("u", "screen.undo", "Undo commit"),
    ]


class DiffScroll(VerticalScroll):
    """The scrolling pane around ``HunkDiff``: says when what is on screen may have changed."""

    class Moved(Message):
        """It scrolled or was resized (the screen checks what is on screen now)."""

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._moved, init=False)
        self.watch(self, "scroll_x", self._moved, init=False)

    def _moved(self) -> None:
        self.post_message(self.Moved())

    def on_resize(self) -> None:
        self.post_message(self.Moved())


class HunkDiff(Static):
    """The highlighted diff of a file or one hunk, a page (``PAGE_ROWS``) at a time, every line
    wrapped to the pane's width. Colours come from theme variables through component classes,
    syntax colours from the theme's pygments style."""

    COMPONENT_CLASSES = {"hunk-diff--hunk", "hunk-diff--added", "hunk-diff--removed", "hunk-diff--rejected", "hunk-diff--note"}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.change: FileChange | None = None
        self.hunks: list[ReviewHunk] = []
        self.rows: list[Row] = []
        self.page_number = 0
        self.width_drawn = 0
        self._group_keys: dict[int, set[tuple[int, int, int]]] = {}
        self._progress: dict[tuple[int, int], set[tuple[int, int, int]]] = {}
        """For each (file, group) shown so far: the keys of its rows that were on screen."""

    def show(self, change: FileChange | None, hunks: list[ReviewHunk], width: int) -> bool:
        """Draw ``hunks`` of ``change`` wrapped at ``width`` cells; True when that is another
        selection than the one drawn (it starts at its first page), False for a redraw."""
        same = change is self.change and [id(h) for h in hunks] == [id(h) for h in self.hunks]
        self.change, self.hunks, self.width_drawn = change, list(hunks), width
        self.rows = layout(change, hunks, width)
        self._group_keys = {}
        for row in self.rows:
            if row.group is not None:
                self._group_keys.setdefault(row.group, set()).add(row.key)
        self.page_number = min(self.page_number, page_count(self.rows) - 1) if same else 0
        self._draw()
        return not same

    def turn_page(self, step: int) -> bool:
        """Draw the next (``step`` 1) or previous (-1) page; False when there is none."""
        number = self.page_number + step
        if not 0 <= number < page_count(self.rows):
            return False
        self.page_number = number
        self._draw()
        return True

    @property
    def pages(self) -> int:
        return page_count(self.rows)

    def position(self) -> str:
        """Where the page is: ``lines 1–500 of 1,204`` (and the page, when there are several)."""
        first, last, total = page_lines(self.rows, self.page_number)
        if not total:
            return ""
        where = f"lines {first:,}–{last:,} of {total:,}"
        return where if self.pages == 1 else f"{where} · page {self.page_number + 1} of {self.pages}"

    def mark_visible(self, top: int, height: int, left: int, width: int, uncovered: Callable[[int, int], bool]) -> list[ChangeGroup]:
        """Note the rows of this page now on screen (rows ``top`` to ``top + height``, columns from
        ``left``, ``width`` wide, and ``uncovered(index on screen, cells)`` by anything drawn over
        them, a notification for one); return the change groups every row of which has now been seen."""
        if self.change is None or height <= 0:
            return []
        touched: set[int] = set()
        rows = page(self.rows, self.page_number)[max(top, 0) : max(top, 0) + height]
        for index, row in enumerate(rows):
            if row.group is None or left > 0 or row.cells + 1 > width or not uncovered(index, row.cells):  # +1: the padding
                continue
            self._progress.setdefault((id(self.change), row.group), set()).add(row.key)
            touched.add(row.group)
        done = []
        for gid in touched:
            group = self.change.groups[gid]
            if not group.seen and self._group_keys[gid] <= self._progress[(id(self.change), gid)]:
                done.append(group)
        return done

    def _draw(self) -> None:
        change = self.change
        if change is None:
            self.update("No changes since the session started.")
            return
        lexer = lexer_for(change.path)
        tokens = token_styles(pygments_style_for(self.app.current_theme))
        styles = {name: self.get_component_rich_style(f"hunk-diff--{name}") for name in ("hunk", "added", "removed", "rejected", "note")}
        text = Text(no_wrap=True)
        lexed: dict[tuple[int, int], Text] = {}
        for row in page(self.rows, self.page_number):
            hunk = row.hunk
            if row.kind == "header":
                state = "accepted" if hunk.accepted else ("partly accepted" if hunk.partly_accepted else "rejected")
                text.append(f"{row.text}  [{state}]{ORIGIN_NOTES[hunk.origin]}\n", self.header_style(hunk, styles["hunk"]))
                continue
            if row.line_type == "\\":
                text.append(f"{row.text}\n", styles["note"])
                continue
            line = Text("↪" if row.start else (row.line_type or " "))
            line.append_text(self._highlighted(row, lexer, tokens, lexed))
            if row.line_type in ("+", "-"):
                line.stylize(styles["added" if row.line_type == "+" else "removed"])
            if not hunk.accepted:
                line.stylize(styles["rejected"])
            text.append_text(line)
            text.append("\n")
        self.update(text)

    def header_style(self, hunk: ReviewHunk, style: Style) -> Style:
        """How a hunk's header is drawn (the approval modal marks the hunk under its cursor)."""
        return style

    def _highlighted(self, row: Row, lexer: Any, tokens: dict[Any, Any], lexed: dict[tuple[int, int], Text]) -> Text:
        """The piece ``row`` shows, with syntax colours (each line is lexed once per page; a line
        longer than ``LEXED_CHARS`` is drawn plain)."""
        key = row.key[:2]
        whole = lexed.get(key)
        if whole is None:
            whole = Text()
            if len(row.line) > LEXED_CHARS:
                whole.append(row.line)
            else:
                for token, value in lex(row.line, lexer):
                    whole.append(value.replace("\n", ""), tokens.get(token))
            lexed[key] = whole
        return whole[row.start : row.start + len(row.text)]


class ConfirmDiscard(ModalScreen[bool]):
    """Asks before the rejected changes of the session are removed from the working tree."""

    CSS_PATH = "review.tcss"
    BINDINGS = [Binding("y", "answer(True)", "Discard"), Binding("n,escape", "answer(False)", "Keep")]

    def __init__(self, paths: list[str]) -> None:
        super().__init__()
        self.paths = paths

    def compose(self) -> ComposeResult:
        listed = "\n".join(f"  {p}" for p in self.paths[:12]) + ("\n  …" if len(self.paths) > 12 else "")
        with Vertical(id="discard-dialog"):  # Text: the names are the model's, never markup
            yield Label(Text(f"Discard the rejected changes of this session in {len(self.paths)} file(s)?\n{listed}\n"
                             "Your own earlier changes are kept. (A copy is kept under refs/frogtui/…/before-discard.)"))
            with Horizontal(id="discard-buttons"):
                yield Button("Discard (y)", id="discard-yes", variant="error")
                yield Button("Keep (n)", id="discard-no")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "discard-yes")
