"""The trace's table of calls (``tracetable.TraceTable``): a change to one call draws that call's
line only, and the keys, the mouse and Enter do what a ``DataTable``'s row cursor did."""
from __future__ import annotations

from rich.text import Text

from frogtui.ui.trace import REDRAW_S
from frogtui.ui.tracetable import TraceTable
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for

STEPS = 100


def reads(steps: int = STEPS) -> list[str]:
    return [turn(f"Step {i}.", xml_call("Read", file_path="calc.py")) for i in range(steps)] + [turn("Done.", answer="Read.")]


def run_over(app) -> bool:
    return app.last_exit_reason is not None and not app.busy


async def settle(pilot, app, rows: int = STEPS) -> TraceTable:
    await submit(pilot, "read it")
    await wait_for(pilot, lambda: run_over(app), timeout=60, what="the run")
    table = app.query_one(TraceTable)
    await wait_for(pilot, lambda: table.row_count == rows and table.cursor_row == rows - 1, what="every call in the trace")
    await pilot.pause(2 * REDRAW_S)
    return table


def count_cell_renders(table, monkeypatch) -> list[int]:
    """Count the cells (``Text``) rendered while the table draws its lines (a ``DataTable`` drew
    every cell it showed again after any change)."""
    count, inside = [0], [False]
    render, render_line = Text.render, table.render_line

    def counted_render(self, *args, **kwargs):
        count[0] += inside[0]
        return render(self, *args, **kwargs)

    def counted_render_line(y):
        inside[0] = True
        try:
            return render_line(y)
        finally:
            inside[0] = False

    monkeypatch.setattr(Text, "render", counted_render)
    table.render_line = counted_render_line
    return count


async def test_a_changed_call_draws_its_own_line_only(make_app, monkeypatch) -> None:
    app = make_app(reads(), approve="all")
    async with app.run_test(size=SIZE) as pilot:
        table = await settle(pilot, app)
        shown = table.size.height - 1
        assert shown > 5 and table.scroll_y == table.max_scroll_y > 0  # the newest calls on screen
        count = count_cell_renders(table, monkeypatch)
        entry = app.trace.entries[list(table.rows)[STEPS - 3]]  # on screen, not under the cursor
        app.trace.update(entry.call, status="failed", exit_code=3)
        await wait_for(pilot, lambda: table.get_row_at(STEPS - 3)[-1].plain == "3", what="the new exit code")
        await pilot.pause(2 * REDRAW_S)
        assert 0 < count[0] <= len(table.columns), f"{count[0]} cells drawn for one changed row"
        # the other rows' lines were kept; scrolling back draws the rows it brings in, once
        count[0] = 0
        table.scroll_to(y=0, animate=False)
        await pilot.pause(2 * REDRAW_S)
        assert count[0] <= (shown + 1) * len(table.columns)
        count[0] = 0
        table.scroll_to(y=table.max_scroll_y, animate=False)
        await pilot.pause(2 * REDRAW_S)
        assert count[0] == 0, "lines drawn before were drawn again"


async def test_keys_mouse_and_enter(make_app) -> None:
    app = make_app(reads(30), approve="all")
    async with app.run_test(size=SIZE) as pilot:
        table = await settle(pilot, app, rows=30)
        trace = app.trace
        blurred = table.render_line(table.cursor_row + 1 - int(table.scroll_y))
        table.focus()
        await pilot.pause()
        focused = table.render_line(table.cursor_row + 1 - int(table.scroll_y))
        assert focused.text == blurred.text and focused != blurred  # the focused cursor's colours
        page = table.scrollable_content_region.height - 1
        await pilot.press("home")
        await wait_for(pilot, lambda: table.cursor_row == 0 and table.scroll_y == 0, what="home")
        await pilot.press("down", "down", "up")
        assert table.cursor_row == 1
        await pilot.press("pagedown")
        assert table.cursor_row == 1 + page
        await pilot.press("pageup")
        assert table.cursor_row == 1
        await pilot.press("end")
        await wait_for(pilot, lambda: table.cursor_row == 29 and table.scroll_y == table.max_scroll_y, what="end")
        # the highlighted call's detail shows below; Enter expands it, again folds it
        await wait_for(pilot, lambda: "step 30 " in trace.query_one("#trace-detail .detail-head").render().plain, what="the detail")
        await pilot.press("enter")
        await wait_for(pilot, lambda: trace.expanded and trace.has_class("-expanded"), what="expanded")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not trace.expanded, what="folded")
        # a click moves the cursor to the row clicked; a click on the cursor row selects it
        await pilot.press("home")
        await pilot.pause()
        await pilot.click(table, offset=(5, 1 + 1 + 3))  # the border, the header, then the fourth row
        await wait_for(pilot, lambda: table.cursor_row == 3, what="the click to move the cursor")
        await wait_for(pilot, lambda: "step 4 " in trace.query_one("#trace-detail .detail-head").render().plain, what="its detail")
        assert not trace.expanded
        await pilot.click(table, offset=(5, 1 + 1 + 3))
        await wait_for(pilot, lambda: trace.expanded, what="the second click to expand")
        await pilot.click(table, offset=(5, 1))  # the header: nothing moves
        await pilot.pause()
        assert table.cursor_row == 3 and trace.expanded
        # the row under the mouse is drawn in the hover colours, until a key is pressed
        plain = table.render_line(1 + 2)
        await pilot.hover(table, offset=(5, 1 + 1 + 2))
        await pilot.pause()
        assert table.hover_row == 2 + int(table.scroll_y) != table.cursor_row and table.render_line(1 + 2) != plain
        await pilot.press("down")
        await pilot.pause()
        assert table.render_line(1 + 2) == plain


async def test_a_new_theme_redraws_the_kept_lines(make_app) -> None:
    app = make_app(reads(3), approve="all")
    async with app.run_test(size=SIZE) as pilot:
        table = await settle(pilot, app, rows=3)
        before = [table.render_line(y) for y in range(4)]
        app.theme = "frog-light" if "frog-light" in app.available_themes else "textual-light"
        await pilot.pause(2 * REDRAW_S)
        after = [table.render_line(y) for y in range(4)]
        for old, new in zip(before, after, strict=True):
            assert old.text == new.text and old != new


async def test_cells_are_drawn_as_rich_draws_them(make_app) -> None:
    """The cells' segments made directly are the ones Rich makes (``Styled(Padding(cell))``, as
    ``DataTable`` drew them), whatever the cell's style, spans and the cursor's styles."""
    from rich.style import Style
    from textual.strip import Strip

    app = make_app(reads(1), approve="all")
    async with app.run_test(size=SIZE) as pilot:
        table = await settle(pilot, app, rows=1)
        bold = Style(color="red", bold=True)
        allow = table.get_component_rich_style("trace-table--allow", partial=True)
        decision = Text("✓ person")
        decision.stylize(allow)
        mixed = Text("a ✗ b", style=bold)
        mixed.stylize(Style(color="green"), 2, 3)
        cells = [Text(""), Text("Read"), Text("calc.py", style=bold), decision, mixed, Text("表示"), Text("x", style="italic")]
        cursor = table.get_component_rich_style("trace-table--cursor")
        base = table.rich_style + Style.from_meta({"row": 0, "column": 1})
        for style, post in ((base, Style()), (base + cursor, Style.from_color(color=cursor.color))):
            for cell in cells:
                for width in (8, len(cell.plain)):
                    fast = Strip(table.cell_segments(cell, width, style, post)).simplify()
                    rich = Strip(table.rich_cell_segments(cell, width, style, post)).simplify()
                    assert list(fast) == list(rich), (cell, width, style)
        # a cell too long for its column, or of two lines, is left to Rich: cropped to the column
        assert Strip(table.cell_segments(Text("abcdef\nx"), 4, base, Style())).text == " abcd "
