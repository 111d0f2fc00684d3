"""The chat's steps as lines: each step's reasoning (folded to its title, or open) and the line of
each of its tool calls, drawn by one widget for a run of steps.

A widget per reasoning block (a ``Collapsible`` of five) and per call line cost Textual a mount, a
CSS match and a layout pass each: about 10 ms a step on 2 cores, so 100 replayed Read steps took
1-4 s to show against 0.06 s headless (docs/PERFORMANCE.md). Here a step appends an item to a list;
the widget's height is the sum of its items' lines, and only the lines on screen are rendered
(``render_line``), each item's lines kept for the width until the item changes; the layout asks
each item only its height (``height``), so lines are built for the items drawn.

    ▶ thinking (step 3) · The test fails because add subtracts…
    ● Edit  calc.py  ✓ person · 0.1s

A title is clicked (or ``ctrl+t`` pressed in the app) to open or fold a step's reasoning; the
step still streaming is open. Reasoning is appended: the lines of finished paragraphs are wrapped
once, only the paragraph still being written is wrapped again.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from textual import events
from textual.content import Content
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

from frogtui.ui.toolline import line_content
from frogtui.ui.trace import TraceEntry

PREVIEW_CHARS = 72
"""How much of a folded step's reasoning its title shows."""
INDENT = 2
"""Open reasoning is indented under its title by this many cells."""
REASONING_STYLE = "$reasoning"
TEXT_STYLE = "$reasoning italic"


def reasoning_preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of the reasoning on one line, cut at a word near ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(",.;:") + "…"


@dataclass(eq=False)
class StepReasoning:
    """One step's thinking."""

    step: int
    text: str = ""
    collapsed: bool = False
    _wrapped: list[Content] = field(default_factory=list, repr=False)
    """The wrapped lines of the finished lines of the text (``_prefix``) at ``_width``."""
    _prefix: str = ""
    _width: int = 0

    @property
    def title(self) -> str:
        preview = reasoning_preview(self.text)
        return f"thinking (step {self.step})" + (f" · {preview}" if preview else "")

    @property
    def shown(self) -> str:
        return self.text.strip()

    def body(self, width: int) -> list[Content]:
        """The text's lines wrapped to ``width`` cells; after an append only what follows the last
        finished line is wrapped again."""
        width, shown = max(1, width), self.shown
        if width != self._width or not shown.startswith(self._prefix):
            self._wrapped, self._prefix, self._width = [], "", width
        end = shown.rfind("\n")
        if end >= len(self._prefix):
            self._wrapped += _wrap(shown[len(self._prefix) : end], width)
            self._prefix = shown[: end + 1]
        return self._wrapped + _wrap(shown[len(self._prefix) :], width)

    def height(self, width: int) -> int:
        """How many lines ``lines(width)`` has (folded: one, without building it)."""
        return 1 if self.collapsed else 1 + len(self.body(width - INDENT))

    def lines(self, width: int) -> list[Content]:
        head = Content.styled(f"{'▶' if self.collapsed else '▼'} {self.title}", REASONING_STYLE)
        if self.collapsed:
            return [head]
        return [head, *(Content(" " * INDENT) + line for line in self.body(width - INDENT))]


@dataclass(eq=False)
class CallLine:
    """One tool call's line (``toolline.line_content``): redrawn in place as the call goes on."""

    entry: TraceEntry

    def height(self, width: int) -> int:
        return 1

    def lines(self, width: int) -> list[Content]:
        return [line_content(self.entry, width)]


Item = StepReasoning | CallLine


def _wrap(text: str, width: int) -> list[Content]:
    lines: list[Content] = []
    for paragraph in text.split("\n"):
        lines += Content.styled(paragraph, TEXT_STYLE).wrap(width) or [Content("")]
    return lines


class StepLog(Widget):
    """A run of steps in the chat (one per stretch between the person's messages, answers and
    notices). The chat appends to it and says when an item changed."""

    DEFAULT_CSS = """
    StepLog { height: auto; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; color: $text; }
    """

    def __init__(self) -> None:
        super().__init__()
        # no links in these lines: Textual's link styling walked the widget's ancestors for every
        # line drawn (a fifth of a line's cost; 15 ms of the frame after a 100-step burst)
        self.set_reactive(Widget.auto_links, False)
        self.items: list[Item] = []
        self._lines: dict[int, list[Content]] = {}
        """Each item's lines (by ``id``) at ``_width``."""
        self._strips: dict[tuple[int, int], Strip] = {}
        """Lines drawn, by (``id`` of the item, line of the item), at ``_width``."""
        self._width = 0
        """The content width of the last layout (``get_content_height``)."""
        self._starts: list[int] | None = None
        """The first line of each item; None when an item's height may have changed."""
        self._due: bool | None = None
        """A refresh is scheduled (True: with a new layout)."""

    def add(self, item: Item) -> None:
        self.items.append(item)
        if self._starts is not None:  # the others' lines did not move: one more start
            self._starts.append(self._starts[-1] + self.height_of(item))
        self._refresh_soon(layout=True)

    def changed(self, item: Item) -> None:
        """``item`` changed: a call's line keeps its height, reasoning may change it."""
        lines = self._lines.pop(id(item), None)
        for row in range(len(lines or ())):
            self._strips.pop((id(item), row), None)
        if isinstance(item, CallLine):
            self._refresh_soon(layout=False)
        else:
            self._starts = None
            self._refresh_soon(layout=True)

    def _refresh_soon(self, layout: bool) -> None:
        """One refresh for all the changes of a burst of events (a refresh locates the widget on
        the screen, which costs more than drawing one of its lines)."""
        if self._due is None:
            self.call_later(self._refresh_due)
        self._due = bool(self._due) or layout

    def _refresh_due(self) -> None:
        layout, self._due = bool(self._due), None
        self.refresh(layout=layout)

    def lines_of(self, item: Item) -> list[Content]:
        width = self._width or 80
        lines = self._lines.get(id(item))
        if lines is None:
            lines = self._lines[id(item)] = item.lines(width)
        return lines

    def height_of(self, item: Item) -> int:
        """``item``'s number of lines, from its lines when they are kept (an item's lines are
        built only to be drawn: the layout of a long log builds none of those off screen)."""
        lines = self._lines.get(id(item))
        return len(lines) if lines is not None else item.height(self._width or 80)

    def _layout(self) -> list[int]:
        if self._starts is None:
            starts, at = [], 0
            for item in self.items:
                starts.append(at)
                at += self.height_of(item)
            self._starts = starts + [at]
        return self._starts

    def notify_style_update(self) -> None:
        """The theme or the CSS changed: lines drawn before have the old colours."""
        super().notify_style_update()
        self._strips.clear()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._width:
            self._lines.clear()
            self._strips.clear()
            self._width, self._starts = width, None
        return self._layout()[-1]

    def item_at(self, y: int) -> tuple[Item, int] | None:
        """The item drawn on line ``y`` and which of its lines that is."""
        starts = self._layout()
        index = bisect_right(starts, y) - 1
        if 0 <= index < len(self.items):
            return self.items[index], y - starts[index]
        return None

    def render_line(self, y: int) -> Strip:
        width = self._width
        found = self.item_at(y)
        if found is None or not width:
            return Strip.blank(width, self.visual_style.rich_style)
        item, row = found
        span = self.text_selection.get_span(y) if self.text_selection is not None else None
        strip = self._strips.get((id(item), row)) if span is None else None
        if strip is None:
            lines = self.lines_of(item)
            if row >= len(lines):
                return Strip.blank(width, self.visual_style.rich_style)
            line = lines[row]
            if span is not None:  # a mouse selection: drawn in the screen's selection colours, not kept
                selected = Style.from_rich_style(self.screen.get_component_rich_style("screen--selection"))
                line = line.stylize(selected, span[0], len(line.plain) if span[1] == -1 else span[1])
            strips = Visual.to_strips(self, line, width, 1, self.visual_style, pad=True, apply_selection=False)
            strip = strips[0] if strips else Strip.blank(width, self.visual_style.rich_style)
            if span is None:
                self._strips[(id(item), row)] = strip
        return strip.apply_offsets(0, y)  # where a mouse selection starts and ends (kept per strip)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text under a mouse selection (Textual's copy)."""
        return selection.extract(self.text()), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        found = self.item_at(offset.y) if offset is not None else None
        if found is not None and isinstance(found[0], StepReasoning) and found[1] == 0:
            event.stop()
            found[0].collapsed = not found[0].collapsed
            self.changed(found[0])

    def drawn(self, item: Item) -> list[Strip]:
        """``item``'s lines as drawn now (for tests)."""
        start = self._layout()[self.items.index(item)]
        return [self.render_line(y) for y in range(start, start + len(self.lines_of(item)))]

    def text(self) -> str:
        """Every line as plain text at the current width (for tests and screen readers)."""
        return "\n".join(line.plain for item in self.items for line in self.lines_of(item))
