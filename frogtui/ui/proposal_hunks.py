"""A proposal's change to one text file in the approval modal, as the review shows a change: its
hunks, every line drawn (wrapped, hidden characters marked, deletions included), each hunk
accepted or rejected on its own.

The change is written by ``tools.effect_hunks.unified`` and read by the review's own parser
(``vcs.hunks``) into a ``FileChange`` whose every run of changed lines is a hunk of its own (the
review's ``s`` done up front); each hunk's lines as a ``Span`` (``spans``) are what the approval
carries, and what landing checks against the same change (``effect_hunks.partial``).

Keys, as the review's: space accepts or rejects the hunk under the cursor, ↑/↓ go to the previous
or next hunk (scrolling a hunk taller than the view first), ] and [ turn the page of a change of
more than ``PAGE_ROWS`` rows.
"""
from __future__ import annotations

from rich.style import Style
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.message import Message

from frogtui.protocol import Span
from frogtui.tools.effect_hunks import unified
from frogtui.ui.review_pages import PAGE_ROWS
from frogtui.ui.review_widgets import HunkDiff
from frogtui.vcs.hunks import FileChange, ReviewHunk, encode, parse_section


def hunk_change(path: str, before: str | None, after: str) -> FileChange | None:
    """The change of a text file (``before`` None: a new one) as the review's file and hunks, one
    hunk per run of changed lines; None when it can only be taken whole (no line changed, or the
    review cannot read it back exactly)."""
    change = parse_section(unified(path, encode(before) if before is not None else None, encode(after)))
    if change.whole or not change.hunks or change.mode_group is not None:
        return None
    for hunk in list(change.review_hunks):
        change.split(hunk)
    return change


def spans(change: FileChange) -> dict[int, Span]:
    """Each change group of ``change`` as the lines it replaces: (old start, old end, new start, new end), 0-based."""
    out: dict[int, list[int]] = {}
    for hunk, owners in zip(change.hunks, change.line_groups, strict=True):
        old = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        new = hunk.target_start - 1 if hunk.target_length else hunk.target_start
        for line, owner in zip(hunk, owners, strict=True):
            kind = line.line_type
            if kind == "\\":
                continue
            if owner is not None and owner not in out:
                out[owner] = [old, old, new, new]
            old += kind in " -"
            new += kind in " +"
            if owner is not None and kind == "-":
                out[owner][1] = old
            elif owner is not None and kind == "+":
                out[owner][3] = new
    return {gid: (s[0], s[1], s[2], s[3]) for gid, s in out.items()}


class ProposalHunks(HunkDiff, can_focus=True):
    """One text file's change as hunks to accept or reject (the review's ``HunkDiff``, with a cursor)."""

    DEFAULT_CSS = """
    ProposalHunks { height: auto; width: 100%; padding: 0 1; margin: 0 0 1 0; background: $surface; }
    ProposalHunks:focus { background: $boost; }
    ProposalHunks > .hunk-diff--hunk { color: $diff-hunk; text-style: bold; }
    ProposalHunks > .hunk-diff--added { color: $diff-added; background: $diff-added-background; }
    ProposalHunks > .hunk-diff--removed { color: $diff-removed; background: $diff-removed-background; }
    ProposalHunks > .hunk-diff--rejected { text-style: dim strike; }
    ProposalHunks > .hunk-diff--note { color: $text-muted; }
    """

    BINDINGS = [
        Binding("space", "toggle", "Accept/reject hunk"),
        Binding("down", "move(1)", "Next hunk", show=False),
        Binding("up", "move(-1)", "Previous hunk", show=False),
        Binding("right_square_bracket", "page(1)", "Page", show=False),
        Binding("left_square_bracket", "page(-1)", "Page up", show=False),
    ]

    class Toggled(Message):
        """The person accepted or rejected hunks of ``view``'s file."""

        def __init__(self, view: ProposalHunks) -> None:
            super().__init__()
            self.view = view

    def __init__(self, change: FileChange, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.file = change
        self.cursor = change.review_hunks[0]

    @property
    def accepted(self) -> bool | None:
        """True: every hunk accepted; False: none; None: some."""
        return True if self.file.accepted else None if self.file.partly_accepted else False

    def choice(self) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
        """The spans of the accepted and of the rejected hunks, in order."""
        lines = spans(self.file)
        accepted = tuple(lines[g.id] for g in self.file.groups if g.accepted)
        rejected = tuple(lines[g.id] for g in self.file.groups if not g.accepted)
        return accepted, rejected

    def set_all(self, value: bool) -> None:
        """Accept (or reject) every hunk (the file's tick)."""
        self.file.set_accepted(value)
        self._redraw()

    def on_mount(self) -> None:
        if self.size.width:  # else at the first resize, once its width is known
            self._redraw()

    def on_resize(self) -> None:
        if self._width() != self.width_drawn:
            self._redraw()

    def _width(self) -> int:
        return max(self.size.width - 2, 20)  # less the padding

    def _redraw(self) -> None:
        page_number = self.page_number
        self.show(self.file, self.file.review_hunks, self._width())
        self.page_number = page_number
        self._draw()

    def header_style(self, hunk: ReviewHunk, style: Style) -> Style:
        return style + Style(reverse=True) if hunk is self.cursor and self.has_focus else style

    def on_focus(self) -> None:
        self._draw()
        self._show_cursor()

    def on_blur(self) -> None:
        self._draw()

    def action_toggle(self) -> None:
        self.cursor.toggle()
        self._draw()
        self.post_message(self.Toggled(self))

    def action_move(self, step: int) -> None:
        """The next (previous) hunk; a hunk taller than the view is scrolled through first."""
        body = self._scroller()
        top, bottom = self._cursor_rows()
        if body is not None:
            origin = self.virtual_region.y
            view_top, view_height = body.scroll_y, body.scrollable_content_region.height
            if step > 0 and origin + bottom > view_top + view_height:
                body.scroll_to(y=view_top + max(view_height - 1, 1), animate=False)
                return
            if step < 0 and origin + top < view_top:
                body.scroll_to(y=max(view_top - max(view_height - 1, 1), origin + top), animate=False)
                return
        hunks = self.file.review_hunks
        at = hunks.index(self.cursor) + step
        if not 0 <= at < len(hunks):
            return
        self.cursor = hunks[at]
        number = self._page_of(self.cursor)
        if number != self.page_number:
            self.page_number = number
        self._draw()
        self.call_after_refresh(self._show_cursor)

    def action_page(self, step: int) -> None:
        if self.turn_page(step):
            first = next((r.hunk for r in self.rows[self.page_number * PAGE_ROWS:] if r.kind == "header"), self.cursor)
            self.cursor = first
            self._draw()
            self.call_after_refresh(self._show_cursor)

    def _page_of(self, hunk: object) -> int:
        index = next((n for n, row in enumerate(self.rows) if row.kind == "header" and row.hunk is hunk), 0)
        return index // PAGE_ROWS

    def _cursor_rows(self) -> tuple[int, int]:
        """The first and the last row of the cursor's hunk on the page drawn (relative to the widget)."""
        rows = self.rows[self.page_number * PAGE_ROWS:(self.page_number + 1) * PAGE_ROWS]
        mine = [n for n, row in enumerate(rows) if row.hunk is self.cursor]
        return (mine[0], mine[-1] + 1) if mine else (0, 1)

    def _scroller(self) -> ScrollableContainer | None:
        parent = self.parent
        return parent if isinstance(parent, ScrollableContainer) else None

    def _show_cursor(self) -> None:
        """Scroll the modal's body so that the cursor's hunk starts at its top (or is whole on screen)."""
        body = self._scroller()
        if body is None:
            return
        top, bottom = self._cursor_rows()
        origin = self.virtual_region.y
        tall = bottom - top > body.scrollable_content_region.height
        body.scroll_to_region(Region(0, origin + top, 1, bottom - top), animate=False, top=tall)
