"""The trace's table of calls as lines: a header that stays while the rows scroll, one line a call,
a row cursor; drawn, keyed and clicked like Textual's ``DataTable`` with ``cursor_type="row"``
(``RowHighlighted``, ``RowSelected``, with ``row_key`` a ``str``), at a fraction of the cost.

A ``DataTable`` keys its render caches on a count of all its updates, so adding a row or changing a
cell draws every row it shows again through Rich at the next frame (2-7 ms a row on 2 cores; frames
of 30-120 ms while calls came in, docs/PERFORMANCE.md). Here each row's line is drawn once and kept
until that row, the cursor or hover on it, the width or the styles change; a changed row refreshes
its own line; a new row grows the virtual size and leaves the others' lines as they are.
"""
from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size, Spacing
from textual.message import Message
from textual.renderables.styled import Styled
from textual.scroll_view import ScrollView
from textual.strip import Strip

HEADER_HEIGHT = 1
NO_ROW = -2
"""The hover row when the mouse is over no row (the header is row -1, as in ``DataTable``)."""


@dataclass
class Column:
    """A column: its key, the label in the header, its width without the padding."""

    key: str
    label: Text
    width: int

    def get_render_width(self, table: TraceTable) -> int:
        """The width with the padding on each side (as ``DataTable.Column``)."""
        return self.width + 2 * table.cell_padding


class TraceTable(ScrollView, can_focus=True):
    """Rows of ``Text`` cells under a fixed header, with a row cursor. Colours come from component
    classes: the cursor (focused or not), the hovered row, the header, and ``trace-table--current``,
    ``--allow`` and ``--deny`` that the trace pane gives its cells."""

    ALLOW_SELECT = False

    BINDINGS = [
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("up", "cursor_up", "Cursor up", show=False), Binding("down", "cursor_down", "Cursor down", show=False),
        Binding("pageup", "page_up", "Page up", show=False), Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,ctrl+home", "scroll_top", "Top", show=False), Binding("end,ctrl+end", "scroll_bottom", "Bottom", show=False),
    ]

    COMPONENT_CLASSES = {"trace-table--cursor", "trace-table--hover", "trace-table--header", "trace-table--header-hover",
                         "trace-table--current", "trace-table--allow", "trace-table--deny"}

    DEFAULT_CSS = """
    TraceTable {
        background: $surface;
        color: $foreground;
        height: auto;
        max-height: 100%;
        &:focus {
            background-tint: $foreground 5%;
            & > .trace-table--cursor {
                background: $block-cursor-background; color: $block-cursor-foreground; text-style: $block-cursor-text-style;
            }
            & > .trace-table--header { background-tint: $foreground 5%; }
        }
        & > .trace-table--header { text-style: bold; background: $panel; color: $foreground; }
        &:ansi > .trace-table--header { background: ansi_bright_blue; color: ansi_default; }
        & > .trace-table--cursor {
            background: $block-cursor-blurred-background; color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .trace-table--header-hover { background: $accent 30%; }
        & > .trace-table--hover { background: $block-hover-background; }
        & > .trace-table--current { color: $accent; text-style: bold; }
        & > .trace-table--allow { color: $success; }
        & > .trace-table--deny { color: $error; }
    }
    """

    class RowHighlighted(Message):
        """The cursor moved to a row (or the first row appeared under it)."""

        def __init__(self, table: TraceTable, cursor_row: int, row_key: str) -> None:
            super().__init__()
            self.table, self.cursor_row, self.row_key = table, cursor_row, row_key

        @property
        def control(self) -> TraceTable:
            return self.table

    class RowSelected(RowHighlighted):
        """Enter on the cursor row, or a click on it."""

    def __init__(self, *, cell_padding: int = 1, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.cell_padding = cell_padding
        self.columns: dict[str, Column] = {}
        self.rows: dict[str, list[Text]] = {}
        """Each row's cells by its key, in the order shown."""
        self._keys: list[str] = []
        self._index: dict[str, int] = {}
        self.cursor_row, self.hover_row = 0, NO_ROW
        self._show_hover = False
        self._strips: dict[str, tuple[bool, bool, Strip]] = {}
        """Each row's line as drawn (under the cursor?, hovered?, the line) at ``_drawn_for``."""
        self._header: tuple[bool, Strip] | None = None
        self._style_cache: dict[tuple[bool, bool, bool], tuple[list[Style], Style, Style]] = {}
        self._partial_styles: dict[str, Style] = {}
        self._drawn_for: tuple[object, ...] = ()
        """The width and styles the kept lines were drawn with."""
        self._grown = False
        """Rows were added since the last frame: the virtual size is not laid out yet."""

    # the table's contents ----------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self._keys)

    def add_column(self, label: str | Text, *, key: str, width: int) -> str:
        self.columns[key] = Column(key, Text.from_markup(label) if isinstance(label, str) else label, width)
        for cells in self.rows.values():
            cells.append(Text(""))
        self._redraw_all()
        return key

    def add_row(self, *cells: Text, key: str) -> str:
        if key in self._index:
            raise ValueError(f"the row key {key!r} already exists")
        if len(cells) > len(self.columns):
            raise ValueError("more cells than columns")
        self._index[key] = len(self._keys)
        self._keys.append(key)
        self.rows[key] = list(cells) + [Text("") for _ in range(len(self.columns) - len(cells))]
        self._grown = True
        self._update_virtual_size()
        if self.row_count == 1 and self.columns:  # a cursor where there was none
            self._highlight(0)
        return key

    def update_row(self, key: str, cells: list[Text]) -> None:
        """Give the row ``key`` new cells (one per column): only its line is drawn again."""
        if key not in self._index:
            raise KeyError(f"no row {key!r}")
        self.rows[key] = list(cells) + [Text("") for _ in range(len(self.columns) - len(cells))]
        self._strips.pop(key, None)
        self._refresh_row(self._index[key])

    def clear(self, columns: bool = False) -> TraceTable:
        self.rows.clear()
        self._keys.clear()
        self._index.clear()
        if columns:
            self.columns.clear()
        self.cursor_row, self.hover_row = 0, NO_ROW
        self._redraw_all()
        self.scroll_to(0, 0, animate=False, force=True)
        return self

    def get_row_at(self, row_index: int) -> list[Text]:
        return list(self.rows[self._keys[row_index]])

    def get_row_index(self, row_key: str) -> int:
        return self._index[row_key]

    def _update_virtual_size(self) -> None:
        width = sum(column.get_render_width(self) for column in self.columns.values())
        self.virtual_size = Size(width, self.row_count + HEADER_HEIGHT)

    def _redraw_all(self) -> None:
        self._forget()
        self._update_virtual_size()
        self.refresh()

    def _refresh_row(self, row_index: int) -> None:
        """Draw the line of row ``row_index`` (-1: the header) again at the next frame, if shown."""
        y = row_index + HEADER_HEIGHT - int(self.scroll_y) if row_index >= 0 else 0
        if (row_index == -1 or 0 <= row_index < self.row_count) and 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    # the cursor --------------------------------------------------------------------------
    def move_cursor(self, *, row: int | None = None, animate: bool = False, scroll: bool = True) -> None:
        """Put the cursor on ``row`` (kept in the table) and, with ``scroll``, bring it into view."""
        if not self._set_cursor(self.cursor_row if row is None else row, animate) and scroll:
            self._scroll_soon(animate)

    def _set_cursor(self, row: int, animate: bool = False) -> bool:
        """Move the cursor; when it moved, say so (``RowHighlighted``) and bring it into view."""
        row = max(0, min(row, self.row_count - 1))
        old, self.cursor_row = self.cursor_row, row
        if old != row:
            self._refresh_row(old)
            self._highlight(row)
            self._scroll_soon(animate)
        return old != row

    def _scroll_soon(self, animate: bool) -> None:
        if self._grown:  # the new rows are not laid out yet: scroll once they are
            self.call_after_refresh(self._scroll_cursor_into_view, animate=animate)
        else:
            self._scroll_cursor_into_view(animate=animate)

    def _highlight(self, row: int) -> None:
        self._refresh_row(row)
        if row < self.row_count:
            self.post_message(self.RowHighlighted(self, row, self._keys[row]))

    def _scroll_cursor_into_view(self, animate: bool = False) -> None:
        if not 0 <= self.cursor_row < self.row_count:
            return
        width = max(self.size.width, self.virtual_size.width)
        region = Region(int(self.scroll_x), self.cursor_row + HEADER_HEIGHT, width, 1)
        self.scroll_to_region(region, animate=animate, spacing=Spacing(HEADER_HEIGHT, 0, 0, 0), force=True)

    def _set_hover(self, active: bool, row: int | None = None) -> None:
        old = (self.hover_row, self._show_hover)
        self._show_hover = active
        if row is not None:
            self.hover_row = row
        if (self.hover_row, self._show_hover) != old:
            self._refresh_row(old[0])
            self._refresh_row(self.hover_row)

    def action_cursor_up(self) -> None:
        self._set_hover(False)
        self._set_cursor(max(0, self.cursor_row - 1))

    def action_cursor_down(self) -> None:
        self._set_hover(False)
        self._set_cursor(self.cursor_row + 1)

    def action_page_down(self) -> None:
        """As ``DataTable``: scroll a page and move the cursor by as many rows."""
        self._set_hover(False)
        height = self.scrollable_content_region.height - HEADER_HEIGHT
        rows = min(height + 1, self.row_count - self.cursor_row)
        self.scroll_relative(y=height, animate=False, force=True)
        self.move_cursor(row=self.cursor_row + rows - 1, scroll=False)

    def action_page_up(self) -> None:
        self._set_hover(False)
        height = self.scrollable_content_region.height - HEADER_HEIGHT
        rows = min(height + 1, self.cursor_row + 1)
        self.scroll_relative(y=-height, animate=False)
        self.move_cursor(row=self.cursor_row - rows + 1, scroll=False)

    def action_scroll_top(self) -> None:
        self._set_hover(False)
        self._set_cursor(0)

    def action_scroll_bottom(self) -> None:
        self._set_hover(False)
        self._set_cursor(self.row_count - 1)

    def action_select_cursor(self) -> None:
        self._set_hover(False)
        if self.row_count:
            self.post_message(self.RowSelected(self, self.cursor_row, self._keys[self.cursor_row]))

    # the mouse (as DataTable's row cursor) -----------------------------------------------
    def _row_under(self, event: events.MouseEvent) -> int | None:
        """The row under the mouse: -1 for the header, None below the rows or off the content."""
        offset = event.get_content_offset(self)
        if offset is None:
            return None
        if offset.y < HEADER_HEIGHT:
            return -1
        row = offset.y - HEADER_HEIGHT + int(self.scroll_y)
        return row if row < self.row_count else None

    async def on_click(self, event: events.Click) -> None:
        self._set_hover(True)
        row = self._row_under(event)
        if row is None or row < 0:
            return
        selected = row == self.cursor_row
        self._set_cursor(row)
        if selected:
            self.post_message(self.RowSelected(self, row, self._keys[row]))
        self._scroll_cursor_into_view(animate=True)
        event.stop()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        row = self._row_under(event)
        self._set_hover(row is not None, NO_ROW if row is None else row)

    def on_leave(self, event: events.Leave) -> None:
        self._set_hover(False)

    # drawing -----------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        """The theme or the CSS changed: lines drawn before have the old colours."""
        super().notify_style_update()
        self._forget()
        self._drawn_for = ()

    def _forget(self) -> None:
        self._strips.clear()
        self._style_cache.clear()
        self._partial_styles.clear()
        self._header = None

    def render_lines(self, crop: Region) -> list[Strip]:
        drawn_for = (self.size.width, self.has_focus, self.rich_style)
        if drawn_for != self._drawn_for:  # focus (the cursor's colours), width or styles changed
            self._drawn_for = drawn_for
            self._forget()
        self._grown = False
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if not self._drawn_for:
            self._drawn_for = (width, self.has_focus, self.rich_style)
        if y < HEADER_HEIGHT:
            hover = self._show_hover and self.hover_row == -1
            if self._header is None or self._header[0] != hover:
                self._header = (hover, self._draw(-1, [column.label for column in self.columns.values()], False, hover))
            strip = self._header[1]
        else:
            index = y - HEADER_HEIGHT + int(self.scroll_y)
            if not 0 <= index < self.row_count:
                return Strip.blank(width, self._drawn_for[2])
            key = self._keys[index]
            cursor, hover = index == self.cursor_row, self._show_hover and index == self.hover_row
            kept = self._strips.get(key)
            if kept is None or kept[:2] != (cursor, hover):
                kept = self._strips[key] = (cursor, hover, self._draw(index, self.rows[key], cursor, hover))
            strip = kept[2]
        scroll_x = int(self.scroll_x)
        if scroll_x or strip.cell_length != width:
            strip = strip.crop(scroll_x, scroll_x + width).adjust_cell_length(width, self._drawn_for[2])
        return strip

    def component_style(self, name: str) -> Style:
        """``get_component_rich_style(name, partial=True)``, kept until the styles change."""
        style = self._partial_styles.get(name)
        if style is None:
            style = self._partial_styles[name] = self.get_component_rich_style(name, partial=True)
        return style

    def _styles(self, header: bool, cursor: bool, hover: bool) -> tuple[list[Style], Style, Style]:
        """Each column's style under a cell's own, the colour over it, and the style of the rest of
        the line (as ``DataTable._get_styles_to_render_cell``: the cursor's foreground wins over the
        cell's, the cell's background over the cursor's). The meta keeps the cells apart in a
        screenshot, as in a ``DataTable``'s."""
        styles = self._style_cache.get((header, cursor, hover))
        if styles is None:
            get = self.get_component_rich_style
            row = self.get_component_styles("trace-table--header").rich_style if header else self._drawn_for[2]
            over = (get("trace-table--hover") if hover else Style()) + (get("trace-table--header-hover") if hover and header else Style())
            over += get("trace-table--cursor") if cursor else Style()
            columns = [row + Style.from_meta({"column": number}) + over for number in range(len(self.columns))]
            rest = row + over + Style.from_meta({"column": 0, "out_of_bounds": True})
            styles = self._style_cache[header, cursor, hover] = (columns, Style.from_color(color=over.color), rest)
        return styles

    def _draw(self, index: int, cells: list[Text], cursor: bool, hover: bool) -> Strip:
        """Row ``index``'s line (-1: the header), each cell padded and cropped to its column, the
        rest of the width in the row's style, as ``DataTable`` draws it."""
        styles, post, rest = self._styles(index == -1, cursor, hover)
        segments = []
        for column, cell, style in zip(self.columns.values(), cells, styles, strict=False):
            segments += self.cell_segments(cell, column.width, style, post)
        extend = self.size.width - Strip(segments).cell_length
        if extend > 0:
            segments.append(Segment(" " * extend, rest))
        return Strip(segments).simplify()

    def cell_segments(self, cell: Text, width: int, style: Style, post: Style) -> list[Segment]:
        """``cell`` padded and cropped to ``width`` cells, in ``style`` under its own and ``post``
        over it: the segments a ``DataTable`` gets from Rich (``Styled(Padding(cell))``), made
        directly for a cell of one line that fits (a tenth of the time); Rich makes the others."""
        plain, pad = cell.plain, self.cell_padding
        length = cell_len(plain)
        if length > width or "\n" in plain or "\t" in plain or cell.justify not in (None, "default"):
            return self.rich_cell_segments(cell, width, style, post)
        line = Text()
        line.append(cell)  # its style becomes a span, as in Rich's rendering of a Text
        outer = style + post if post else style
        segments = [Segment(" " * pad, outer)]
        for text, own, _ in line.render(self.app.console):
            segments.append(Segment(text, (style + own + post if post else style + own) if own else outer))
        segments.append(Segment(" " * (width - length + pad), outer))
        return segments

    def rich_cell_segments(self, cell: Text, width: int, style: Style, post: Style) -> list[Segment]:
        padded = Styled(Padding(cell, (0, self.cell_padding)), pre_style=style, post_style=post)
        options = self.app.console_options.update_dimensions(width + 2 * self.cell_padding, 1).update(no_wrap=True)
        return self.app.console.render_lines(padded, options)[0]
