"""The diff viewer: a virtualised (Line API) view of a ``FileDiff``, unified or side by side.

Only the rows on screen are rendered and highlighted, so a 10,000-line change scrolls without
a freeze. Colours come from theme variables through component classes; syntax colours from the
theme's pygments style.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pygments.styles import get_style_by_name
from pygments.token import _TokenType
from pygments.util import ClassNotFound
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from frogtui.ui.diffmodel import FileDiff, HighlightedLines, TokenLine
from frogtui.ui.themes import pygments_style_for

SPLIT_MIN_WIDTH = 140
"""At least this many columns: side by side; fewer: unified (in ``auto`` layout)."""


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
    """Shows one file's proposed change. ``layout_mode`` is ``auto``, ``unified`` or ``split``.

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

    def __init__(self, diff: FileDiff, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.diff = diff
        width = len(str(max(len(diff.old_lines), len(diff.new_lines), 1)))
        self._gutter = width

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
        self.virtual_size = Size(self.size.width if self.is_split else self._content_width(), self._row_count())

    def _content_width(self) -> int:
        longest = max((len(row.text) for row in self.diff.unified), default=0)
        return max(len(self.diff.header), 2 * self._gutter + 3 + longest)

    def on_mount(self) -> None:
        self._update_virtual_size()

    def on_resize(self) -> None:
        self._update_virtual_size()

    def watch_layout_mode(self) -> None:
        self._update_virtual_size()
        self.refresh()

    def action_cycle_layout(self) -> None:
        self.layout_mode = "unified" if self.is_split else "split"

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
        width = self.size.width
        styles = self._line_styles()
        if index == 0:
            strip = Strip([Segment(f" {self.diff.header}", styles["header"])])
        elif self.is_split:
            return self._split_line(index - 1, width, styles) if index - 1 < len(self.diff.split) else Strip.blank(width)
        elif index - 1 < len(self.diff.unified):
            strip = self._unified_line(index - 1, styles)
        else:
            return Strip.blank(width)
        base = styles["header"] if index == 0 else styles[self._kind_at(index - 1)]
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _kind_at(self, row: int) -> str:
        kind = self.diff.unified[row].kind
        return "context" if kind == "changed" else kind

    def _code(self, lines: HighlightedLines, index: int, base: Style) -> list[Segment]:
        syntax = self._syntax()
        tokens: TokenLine = lines.tokens(index)
        segments = []
        for token_type, text in tokens:
            style = syntax.get(token_type)
            while style is None and token_type.parent is not None:
                token_type = token_type.parent
                style = syntax.get(token_type)
            segments.append(Segment(text.expandtabs(4), base + style if style else base))
        return segments

    def _unified_line(self, row: int, styles: dict[str, Style]) -> Strip:
        item = self.diff.unified[row]
        lineno = styles["lineno"]
        if item.kind == "hunk":
            return Strip([Segment(item.text, styles["hunk"])])
        base = styles[item.kind]
        old = "" if item.old_no is None else str(item.old_no + 1)
        new = "" if item.new_no is None else str(item.new_no + 1)
        sign = {"added": "+", "removed": "-"}.get(item.kind, " ")
        gutter = [Segment(f"{old:>{self._gutter}} {new:>{self._gutter}} ", base + lineno), Segment(sign + " ", base)]
        if item.kind == "removed":
            code = self._code(self.diff.old, item.old_no or 0, base)
        else:
            code = self._code(self.diff.new, item.new_no or 0, base)
        return Strip(gutter + code)

    def _split_line(self, row: int, width: int, styles: dict[str, Style]) -> Strip:
        item = self.diff.split[row]
        if item.kind == "hunk":
            return Strip([Segment(item.header, styles["hunk"])]).crop_extend(0, width, styles["hunk"])
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
        return strip.crop_extend(0, width, base)
