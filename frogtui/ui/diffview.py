"""The diff viewer: a virtualised (Line API) view of a ``FileDiff``, unified or side by side.

Only the rows on screen are rendered and highlighted, so a 10,000-line change scrolls without
a freeze. Colours come from theme variables through component classes; syntax colours from the
theme's pygments style.

What is drawn is the file's text: every character a terminal would not draw as itself is drawn as
a visible mark (``terminal_text.marked``), and the highlighter only colours it (where its tokens
do not give the line back exactly, the line is drawn uncoloured). With ``wrap`` (the approval
modal) a line wider than the view is wrapped into rows, each continuation marked ``↪``: nothing
hides past the right edge, in either layout. Without it, a line cut at an edge is marked there
(``›``, and ``‹`` when scrolled).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pygments.styles import get_style_by_name
from pygments.token import Text as PlainText
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from frogtui.terminal_text import marked
from frogtui.ui.diffmodel import FileDiff, HighlightedLines, SplitRow, TokenLine, UnifiedRow
from frogtui.ui.themes import pygments_style_for

SPLIT_MIN_WIDTH = 140
"""At least this many columns: side by side; fewer: unified (in ``auto`` layout)."""
TAB_SIZE = 4
CONTINUED = "↪"
"""Starts each further row of a wrapped line (in its gutter)."""
CUT_RIGHT = "›"
CUT_LEFT = "‹"
"""Drawn over the last (first) cell of a row whose line goes on past the view's edge (without wrap)."""
MIN_CODE_WIDTH = 4
"""A wrapped line gets at least this many cells per row, however narrow the view."""


def display_text(line: str) -> str:
    """A line as drawn: tabs expanded, every hidden character a visible mark."""
    return marked(line.expandtabs(TAB_SIZE), keep_lines=False)


def pieces(segments: list[Segment], width: int) -> list[list[Segment]]:
    """``segments`` cut into rows of at most ``width`` cells, never inside a character (one row
    for an empty line)."""
    rows: list[list[Segment]] = [[]]
    used = 0
    for segment in segments:
        text, style = segment.text, segment.style
        while text:
            if text.isascii():
                take = min(len(text), width - used)
            else:
                take, cells = 0, used
                for char in text:
                    size = cell_len(char)
                    if cells + size > width and (take or used):
                        break
                    cells, take = cells + size, take + 1
            if take == 0:
                rows.append([])
                used = 0
                continue
            part, text = text[:take], text[take:]
            rows[-1].append(Segment(part, style))
            used += cell_len(part)
            if text:
                rows.append([])
                used = 0
    return rows


def piece_count(text: str, width: int) -> int:
    """How many rows ``pieces`` cuts a line drawn as ``text`` into."""
    if text.isascii():
        return max(1, -(-len(text) // width))
    return len(pieces([Segment(text)], width))


def _mark_cut(strip: Strip, start: int, end: int, style: Style) -> Strip:
    """``strip`` cropped to cells ``start``..``end``, with a mark where its line goes on past either edge."""
    total = strip.cell_length
    shown = strip.crop_extend(start, end, style)
    width = end - start
    if width < 2:
        return shown
    if total > end:
        shown = Strip.join([shown.crop(0, width - 1), Strip([Segment(CUT_RIGHT, style + Style(bold=True, reverse=True))])])
    if start > 0 and total > 0:
        shown = Strip.join([Strip([Segment(CUT_LEFT, style + Style(bold=True, reverse=True))]), shown.crop(1, width)])
    return shown


@lru_cache(maxsize=8)
def token_styles(style_name: str) -> dict[_TokenType, Style]:
    """Rich styles for each pygments token type of a pygments style (``default`` when unknown)."""
    try:
        style_class = get_style_by_name(style_name)
    except ClassNotFound:
        style_class = get_style_by_name("default")
    styles: dict[_TokenType, Style] = {}
    for token_type, spec in style_class:
        styles[token_type] = Style(
            color=f"#{spec['color']}" if spec["color"] else None,
            bold=spec["bold"] or None,
            italic=spec["italic"] or None,
            underline=spec["underline"] or None,
        )
    return styles


class DiffView(ScrollView, can_focus=True):
    """Shows one file's proposed change. ``layout_mode`` is ``auto``, ``unified`` or ``split``;
    ``wrap``: long lines are wrapped into rows (else cut at the view's edge, the cut marked).

    Its colours are frogtui's theme variables: the app must provide them
    (``get_theme_variable_defaults`` returning ``themes.VARIABLE_DEFAULTS``).
    """

    COMPONENT_CLASSES = {
        "diff-view--header",
        "diff-view--hunk",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--context",
        "diff-view--lineno",
    }

    DEFAULT_CSS = """
    DiffView { background: $surface; }
    DiffView > .diff-view--header { color: $text; background: $panel; text-style: bold; }
    DiffView > .diff-view--hunk { color: $diff-hunk; }
    DiffView > .diff-view--added { color: $diff-added; background: $diff-added-background; }
    DiffView > .diff-view--removed { color: $diff-removed; background: $diff-removed-background; }
    DiffView > .diff-view--context { color: $text; }
    DiffView > .diff-view--lineno { color: $text-muted; }
    """

    BINDINGS = [
        ("s", "cycle_layout", "Unified / side by side"),
    ]

    layout_mode: reactive[Literal["auto", "unified", "split"]] = reactive("auto")

    def __init__(
        self, diff: FileDiff, *, wrap: bool = False, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.diff = diff
        self.wrap = wrap
        width = len(str(max(len(diff.old_lines), len(diff.new_lines), 1)))
        self._gutter = width
        self._rows: list[tuple[int, int]] = []
        """With ``wrap``: each row drawn, as (row of the diff (0: the header), piece of it)."""
        self._rows_for: tuple[int, bool] | None = None
        self._pieces: dict[int, list[Strip]] = {}
        if wrap:  # nothing to scroll sideways to
            self.styles.overflow_x = "hidden"

    def _width(self) -> int:
        """The columns a row is drawn in: the view's, less a vertical scrollbar's (a row is never
        drawn under it; with ``wrap``, the rows are cut again when it comes or goes)."""
        return self.scrollable_size.width or self.size.width

    # layout ------------------------------------------------------------------------------
    @property
    def is_split(self) -> bool:
        """True when the view currently shows old and new side by side."""
        if self.layout_mode == "auto":
            return self.size.width >= SPLIT_MIN_WIDTH
        return self.layout_mode == "split"

    def _row_count(self) -> int:
        return 1 + (len(self.diff.split) if self.is_split else len(self.diff.unified))

    def _update_virtual_size(self) -> None:
        if self.wrap:
            self._wrap_rows()
            if self.virtual_size.height != len(self._rows):  # the height follows the width: laid out again
                self.virtual_size = Size(0, len(self._rows))
                self.refresh(layout=True)
            return
        self.virtual_size = Size(self._width() if self.is_split else self._content_width(), self._row_count())

    def _content_width(self) -> int:
        longest = max((cell_len(display_text(row.text)) for row in self.diff.unified), default=0)
        return max(cell_len(marked(self.diff.header, keep_lines=False)) + 1, 2 * self._gutter + 4 + longest)

    def on_mount(self) -> None:
        self._update_virtual_size()

    def on_resize(self) -> None:
        self._update_virtual_size()

    def watch_layout_mode(self) -> None:
        self._update_virtual_size()
        self.refresh()

    def action_cycle_layout(self) -> None:
        self.layout_mode = "unified" if self.is_split else "split"

    # wrapping ----------------------------------------------------------------------------
    def _unified_code_width(self, width: int) -> int:
        return max(width - (2 * self._gutter + 4), MIN_CODE_WIDTH)

    def _halves(self, width: int) -> tuple[int, int]:
        half = (width - 1) // 2
        return half, width - half - 1

    def _half_code_width(self, half: int) -> int:
        return max(half - self._gutter - 1, MIN_CODE_WIDTH)

    def _wrap_rows(self) -> None:
        """The rows drawn for the view's width and layout (each diff row as many as its pieces)."""
        width = max(self._width(), 1)
        key = (width, self.is_split)
        if key == self._rows_for:
            return
        self._rows_for, self._pieces = key, {}
        diff = self.diff
        counts = [piece_count(" " + marked(diff.header, keep_lines=False), width)]
        if self.is_split:
            left, right = (self._half_code_width(h) for h in self._halves(width))
            for row in diff.split:
                if row.kind == "hunk":
                    counts.append(piece_count(row.header, width))
                    continue
                old = piece_count(display_text(diff.old_lines[row.old_no]), left) if row.old_no is not None else 1
                new = piece_count(display_text(diff.new_lines[row.new_no]), right) if row.new_no is not None else 1
                counts.append(max(old, new))
        else:
            code = self._unified_code_width(width)
            for item in diff.unified:
                counts.append(piece_count(item.text, width) if item.kind == "hunk" else piece_count(display_text(item.text), code))
        self._rows = [(index, piece) for index, count in enumerate(counts) for piece in range(count)]

    def _wrapped(self, index: int, width: int, styles: dict[str, Style]) -> list[Strip]:
        """Every row drawn for row ``index`` of the diff (0: the header), wrapped at ``width``."""
        found = self._pieces.get(index)
        if found is not None:
            return found
        if len(self._pieces) > 512:
            self._pieces.clear()
        diff = self.diff
        if index == 0:
            style = styles["header"]
            header = [Segment(" " + marked(diff.header, keep_lines=False), style)]
            rows = [Strip(p).crop_extend(0, width, style) for p in pieces(header, width)]
        elif self.is_split:
            rows = self._wrapped_split(diff.split[index - 1], width, styles)
        else:
            rows = self._wrapped_unified(index - 1, width, styles)
        self._pieces[index] = rows
        return rows

    def _wrapped_unified(self, row: int, width: int, styles: dict[str, Style]) -> list[Strip]:
        item = self.diff.unified[row]
        if item.kind == "hunk":
            style = styles["hunk"]
            return [Strip(p).crop_extend(0, width, style) for p in pieces([Segment(item.text, style)], width)]
        kind = self._kind_at(row)
        base = styles[kind]
        first = self._unified_gutter(item, base, styles)
        blank = [Segment(" " * (2 * self._gutter + 2), base + styles["lineno"]), Segment(self._sign(item.kind) + CONTINUED, base)]
        code = self._row_code(item)
        return [
            Strip((first if n == 0 else blank) + piece).crop_extend(0, width, base)
            for n, piece in enumerate(pieces(code, self._unified_code_width(width)))
        ]

    def _wrapped_split(self, item: SplitRow, width: int, styles: dict[str, Style]) -> list[Strip]:
        if item.kind == "hunk":
            style = styles["hunk"]
            return [Strip(p).crop_extend(0, width, style) for p in pieces([Segment(item.header, style)], width)]
        left_width, right_width = self._halves(width)
        left_kind = "context" if item.kind == "context" else "removed"
        right_kind = "context" if item.kind == "context" else "added"
        left = self._wrapped_half(self.diff.old, item.old_no, styles[left_kind], styles, left_width)
        right = self._wrapped_half(self.diff.new, item.new_no, styles[right_kind], styles, right_width)
        count = max(len(left), len(right))
        left += [Strip.blank(left_width, styles["context"])] * (count - len(left))
        right += [Strip.blank(right_width, styles["context"])] * (count - len(right))
        bar = Strip([Segment("│", styles["lineno"])])
        return [Strip.join([a, bar, b]) for a, b in zip(left, right, strict=True)]

    def _wrapped_half(self, lines: HighlightedLines, index: int | None, base: Style, styles: dict[str, Style], width: int) -> list[Strip]:
        if index is None:
            return [Strip.blank(width, styles["context"])]
        gutter = Segment(f"{index + 1:>{self._gutter}} ", base + styles["lineno"])
        blank = Segment(" " * self._gutter + CONTINUED, base + styles["lineno"])
        code = self._code(lines, index, base)
        return [
            Strip([gutter if n == 0 else blank, *piece]).crop_extend(0, width, base)
            for n, piece in enumerate(pieces(code, self._half_code_width(width)))
        ]

    # rendering ---------------------------------------------------------------------------
    def _line_styles(self) -> dict[str, Style]:
        return {
            name: self.get_component_rich_style(f"diff-view--{name}")
            for name in ("header", "hunk", "added", "removed", "context", "lineno")
        }

    def _syntax(self) -> dict[_TokenType, Style]:
        return token_styles(pygments_style_for(self.app.current_theme))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = y + scroll_y
        width = self._width()
        styles = self._line_styles()
        if self.wrap:
            if self._rows_for != (max(width, 1), self.is_split):
                self._update_virtual_size()
            if index >= len(self._rows):
                return Strip.blank(width)
            row, piece = self._rows[index]
            drawn = self._wrapped(row, width, styles)
            return drawn[piece] if piece < len(drawn) else Strip.blank(width, styles["context"])
        if index == 0:
            strip = Strip([Segment(f" {marked(self.diff.header, keep_lines=False)}", styles["header"])])
        elif self.is_split:
            return self._split_line(index - 1, width, styles) if index - 1 < len(self.diff.split) else Strip.blank(width)
        elif index - 1 < len(self.diff.unified):
            strip = self._unified_line(index - 1, styles)
        else:
            return Strip.blank(width)
        base = styles["header"] if index == 0 else styles[self._kind_at(index - 1)]
        return _mark_cut(strip, scroll_x, scroll_x + width, base)

    def _kind_at(self, row: int) -> str:
        kind = self.diff.unified[row].kind
        return "context" if kind == "changed" else kind

    def _code(self, lines: HighlightedLines, index: int, base: Style) -> list[Segment]:
        """Line ``index`` of ``lines`` as drawn (``display_text``), coloured by the highlighter's
        tokens where they give the line back exactly."""
        syntax = self._syntax()
        line = lines.lines[index]
        tokens: TokenLine = lines.tokens(index)
        if "".join(text for _, text in tokens) != line:  # the lexer dropped or changed something (a BOM...)
            tokens = [(PlainText, line)]
        segments = []
        column = 0
        for token_type, text in tokens:
            style = syntax.get(token_type)
            while style is None and token_type.parent is not None:
                token_type = token_type.parent
                style = syntax.get(token_type)
            expanded = (" " * column + text).expandtabs(TAB_SIZE)[column:] if "\t" in text else text
            column += len(expanded)
            segments.append(Segment(marked(expanded, keep_lines=False), base + style if style else base))
        return segments

    def _row_code(self, item: UnifiedRow) -> list[Segment]:
        kind = item.kind
        base = self._line_styles()["context" if kind == "changed" else kind]
        if kind == "removed":
            return self._code(self.diff.old, item.old_no or 0, base)
        return self._code(self.diff.new, item.new_no or 0, base)

    @staticmethod
    def _sign(kind: str) -> str:
        return {"added": "+", "removed": "-"}.get(kind, " ")

    def _unified_gutter(self, item: UnifiedRow, base: Style, styles: dict[str, Style]) -> list[Segment]:
        old = "" if item.old_no is None else str(item.old_no + 1)
        new = "" if item.new_no is None else str(item.new_no + 1)
        numbers = Segment(f"{old:>{self._gutter}} {new:>{self._gutter}} ", base + styles["lineno"])
        return [numbers, Segment(self._sign(item.kind) + " ", base)]

    def _unified_line(self, row: int, styles: dict[str, Style]) -> Strip:
        item = self.diff.unified[row]
        if item.kind == "hunk":
            return Strip([Segment(item.text, styles["hunk"])])
        base = styles[item.kind]
        return Strip(self._unified_gutter(item, base, styles) + self._row_code(item))

    def _split_line(self, row: int, width: int, styles: dict[str, Style]) -> Strip:
        item = self.diff.split[row]
        if item.kind == "hunk":
            return _mark_cut(Strip([Segment(item.header, styles["hunk"])]), 0, width, styles["hunk"])
        half = (width - 1) // 2
        left_kind = "context" if item.kind == "context" else "removed"
        right_kind = "context" if item.kind == "context" else "added"
        left = self._half(self.diff.old, item.old_no, styles[left_kind], styles, half)
        right = self._half(self.diff.new, item.new_no, styles[right_kind], styles, width - half - 1)
        return Strip.join([left, Strip([Segment("│", styles["lineno"])]), right])

    def _half(self, lines: HighlightedLines, index: int | None, base: Style, styles: dict[str, Style], width: int) -> Strip:
        if index is None:
            return Strip.blank(width, styles["context"])
        gutter = Segment(f"{index + 1:>{self._gutter}} ", base + styles["lineno"])
        strip = Strip([gutter, *self._code(lines, index, base)])
        return _mark_cut(strip, 0, width, base)
