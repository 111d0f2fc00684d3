"""What the review's diff pane draws, row by row, and which change group each row shows.

Every line of every hunk can be drawn: a line wider than the pane is wrapped into several rows
(nothing hides past the right edge), control and bidirectional-override characters are drawn as
visible marks (nothing hides in plain sight), and the rows are drawn a page of ``PAGE_ROWS`` at a
time (a 20,000-line rewrite is not highlighted at once). Each row carries a key, so the screen can
tell when every row of a change group has been on screen: only then is the group *seen*
(``ChangeGroup.seen``). Pure data: no Textual here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rich.cells import cell_len

from frogtui.terminal_text import HIDDEN, visible
from frogtui.vcs.hunks import FileChange, ReviewHunk, diff_lines

PAGE_ROWS = 500
"""Rows drawn at once (the pane scrolls inside a page; ``]`` and ``[`` move between pages)."""
MIN_WIDTH = 8
"""Rows are never narrower (a pane narrower than this cannot show a row whole: nothing counts as seen)."""
TAB_SIZE = 8
NOT_UTF8 = re.compile("[\udc80-\udcff]")
"""A byte that is not UTF-8, as ``surrogateescape`` reads it (``vcs.hunks.decode``)."""


def display_text(value: str) -> str:
    """A diff line as drawn: without its line end, tabs expanded, hidden characters marked (a NUL
    as ``␀``), and each byte that is not UTF-8 (read with ``surrogateescape``) as ``⟨xFF⟩``."""
    text = value[:-1] if value.endswith("\n") else value
    crlf = text.endswith("\r")
    text = text[:-1] if crlf else text
    text = HIDDEN.sub(lambda m: visible(m.group()), text.expandtabs(TAB_SIZE))
    text = NOT_UTF8.sub(lambda m: f"⟨x{ord(m.group()) - 0xDC00:02X}⟩", text)
    return text + "␍" if crlf else text


def pieces(text: str, width: int) -> list[tuple[int, str]]:
    """``text`` cut into pieces of at most ``width`` cells: (start offset, piece). One piece for
    a text that fits (an empty text too)."""
    if text.isascii():
        return [(start, text[start : start + width]) for start in range(0, max(len(text), 1), width)]
    out: list[tuple[int, str]] = []
    start, cells = 0, 0
    for index, char in enumerate(text):
        size = cell_len(char)
        if cells + size > width and index > start:
            out.append((start, text[start:index]))
            start, cells = index, 0
        cells += size
    out.append((start, text[start:]))
    return out


@dataclass(frozen=True)
class Row:
    """One row of the diff pane."""

    kind: str
    """``header`` (a hunk's label), ``line`` (a diff line, or a piece of a wrapped one) or ``note``."""
    hunk: ReviewHunk
    text: str
    line_type: str = ""
    """``+``, ``-``, `` `` or ``\\`` for a line row."""
    start: int = 0
    """Where this piece starts in the line's display text (0: the line's first row)."""
    group: int | None = None
    """The change group this row shows (None: context, or a header of a hunk with lines)."""
    key: tuple[int, int, int] = (0, 0, 0)
    """Identifies the piece: (unidiff hunk index, position in the hunk, start)."""
    line_number: int = 0
    """1-based count of diff lines in the pane, for ``line`` rows."""
    line: str = ""
    """The whole display text of the line this row is a piece of."""

    @property
    def cells(self) -> int:
        return 1 + cell_len(self.text)


def layout(change: FileChange | None, hunks: list[ReviewHunk], width: int) -> list[Row]:
    """Every row of ``hunks`` (of ``change``), lines wrapped at ``width`` cells (prefix included)."""
    if change is None:
        return []
    width = max(width, MIN_WIDTH) - 1  # the +/- column
    rows: list[Row] = []
    count = 0
    for hunk in hunks:
        if hunk.hunk_index < 0:  # whole file or mode: its label, and the raw text when it has one
            body = _whole_body(change)
            rows.append(Row("header", hunk, hunk.label, group=hunk.group_ids[0] if not body else None, key=(-1, hunk.group_ids[0], -1)))
            for position, value in enumerate(body):
                count += 1
                text = display_text(value[1:])
                for start, piece in pieces(text, width):
                    rows.append(Row("line", hunk, piece, value[:1], start, hunk.group_ids[0], (-1, position, start), count, text))
            continue
        rows.append(Row("header", hunk, hunk.label))
        owners = change.line_groups[hunk.hunk_index]
        first = hunk.span()[0]
        for offset, line in enumerate(hunk.lines()):
            position = first + offset
            count += 1
            if line.line_type == "\\":
                note = "\\ No newline at end of file"
                rows.append(Row("line", hunk, note, "\\", 0, owners[position], (hunk.hunk_index, position, 0), count, note))
                continue
            text = display_text(line.value)
            for start, piece in pieces(text, width):
                key = (hunk.hunk_index, position, start)
                rows.append(Row("line", hunk, piece, line.line_type, start, owners[position], key, count, text))
    return rows


def _whole_body(change: FileChange) -> list[str]:
    """The text lines of a change taken whole (an empty file, a symlink's target), or [] for a
    binary one or a mode change."""
    if change.status == "binary" or not change.whole:
        return []
    lines = diff_lines(change.raw)
    at = next((i for i, line in enumerate(lines) if line.startswith("@@ ")), len(lines))
    return [line for line in lines[at + 1 :] if line[:1] in "+- \\"]


def page_count(rows: list[Row]) -> int:
    return max(1, -(-len(rows) // PAGE_ROWS))


def page(rows: list[Row], number: int) -> list[Row]:
    return rows[number * PAGE_ROWS : (number + 1) * PAGE_ROWS]


def page_lines(rows: list[Row], number: int) -> tuple[int, int, int]:
    """The first and last diff line a page shows (1-based, 0 when none) and how many there are."""
    total = max((r.line_number for r in rows), default=0)
    shown = [r.line_number for r in page(rows, number) if r.line_number]
    return (shown[0], shown[-1], total) if shown else (0, 0, total)
