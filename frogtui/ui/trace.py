"""The tool-call trace: one row per call (tool, short arguments, decision and who made it,
duration, exit code), the current step's rows highlighted, and a detail view of the selected
row: its diff for Write/Edit, else its output. Enter expands the detail to the whole observation.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from frogtui.ui.tracetable import TraceTable

if TYPE_CHECKING:  # the tools, the protocol and pygments (a diff) come after the first paint
    from frogtui.agent.events import ToolFinished
    from frogtui.protocol import ToolCall
    from frogtui.ui.diffmodel import FileDiff
    from frogtui.ui.diffview import DiffView

COLLAPSED_LINES = 8
REDRAW_S = 0.1
"""The table's rows are added and redrawn at most this often while calls come in: a call's row
changes three or four times a step, and a burst of steps then draws each row once, in its last
state (about half the row lines drawn for 100 Read steps, ``tracetable.TraceTable``)."""
ARGS_WIDTH = 20
"""The arguments column before the pane knows its width."""
MIN_ARGS_WIDTH = 12
"""Below this the narrow layout drops the time and exit columns (they stay in the detail)."""
FIXED_WIDTHS = {"#": 3, "tool": 5, "decision": 8, "time": 5, "exit": 4}
"""The width of every column but the arguments (each adds 2 of padding). The columns never grow:
every value is made to fit (``decision_text``, ``duration_text``, ``STOPPED``), so the table never
scrolls sideways."""
CHROME = 4
"""The table's border and vertical scrollbar."""


@dataclass
class TraceEntry:
    """What the trace knows about one call."""

    step: int
    call: ToolCall
    status: str = "proposed"
    """``proposed``, ``asking``, ``running``, ``done``, ``failed``, ``interrupted``, ``timed out``,
    ``denied`` or ``skipped``."""
    decision: str = ""
    by: str = ""
    rule: str = ""
    duration_s: float | None = None
    exit_code: int | None = None
    observation: str = ""
    diff: FileDiff | None = None
    """The Write/Edit change, when it was computed."""
    edited: bool = False
    """The person edited the call before it ran."""
    reason: str = ""
    """The approver's reason (a person's denial reason is shown in the chat)."""
    repeat: str = ""
    """Why the call counts as a repeat (``agent.repeats``), '' when it does not."""
    undone: bool = False
    """Undo (``ctrl+z``) rewound what the call changed."""


UNDONE = "↶ undone"
"""The decision column and the chat line of a call whose change undo rewound (no ✓ left)."""


def undone_call(entries: Iterable[TraceEntry], step: int, action: int) -> TraceEntry | None:
    """The call a checkpoint was taken before: the ``action``-th file-changing call of ``step``
    that ran (``vcs.checkpoints``: one checkpoint before each)."""
    from frogtui.tools import MUTATING_TOOLS

    ran = [e for e in entries if e.step == step and e.call.name in MUTATING_TOOLS and e.decision == "allow" and e.status != "skipped"]
    return ran[action - 1] if 0 < action <= len(ran) else None


def decision_text(entry: TraceEntry) -> str:
    """``✓ person``, ``✗ rule``, ``✓ edited`` (the person edited the call, then allowed it)…; the
    status while the call is asked about or running; a repeated call reads ``↻✓person``. At most
    8 cells (``FIXED_WIDTHS``)."""
    if entry.undone:
        return UNDONE
    if entry.status in ("running", "asking") or entry.decision not in MARKS:
        return entry.status
    who = "edited" if entry.edited else entry.by
    return f"↻{MARKS[entry.decision]}{who}" if entry.repeat else f"{MARKS[entry.decision]} {who}"


def duration_text(seconds: float | None) -> str:
    """``0.4s``, ``12.3s``, ``123s``, ``17m``: at most 5 cells."""
    if seconds is None:
        return ""
    if seconds < 99.95:
        return f"{seconds:.1f}s"
    return f"{seconds:.0f}s" if seconds < 999.5 else f"{seconds / 60:.0f}m"


def finished_state(event: ToolFinished) -> str:
    """The trace status of a finished call: done, failed, interrupted, timed out or skipped (read
    from its outcome's data, never its text)."""
    if not event.ran:
        return "skipped"
    if event.outcome.cancelled:
        return "interrupted"
    if event.outcome.timed_out:
        return "timed out"
    return "done" if event.ok else "failed"


STOPPED = {"interrupted": "stop", "timed out": "t/o"}
"""The exit column of a command that did not exit by itself (the chat line and details say it whole)."""


COLUMNS = ("#", "tool", "arguments", "decision", "time", "exit")
MARKS = {"allow": "✓", "deny": "✗"}


def fit_columns(width: int) -> tuple[tuple[str, ...], int]:
    """The columns to show in a table ``width`` cells wide, and the arguments column's width.

    Wide tables give the arguments everything the other columns leave; narrow ones drop ``time``
    and then ``exit`` before squeezing the arguments under ``MIN_ARGS_WIDTH``.
    """
    columns = list(COLUMNS)
    while True:
        others = sum(FIXED_WIDTHS[c] for c in columns if c != "arguments")
        args = width - CHROME - others - 2 * len(columns)
        if args >= MIN_ARGS_WIDTH or len(columns) == 4:
            return tuple(columns), max(args, MIN_ARGS_WIDTH // 2)
        columns.remove("time" if "time" in columns else "exit")


class TracePane(Vertical):
    """The trace table with the selected call's detail below it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[str, TraceEntry] = {}
        self.current_step = 0
        self.expanded = False
        self._shown_key: str | None = None
        self.columns: tuple[str, ...] = COLUMNS
        self.args_width = ARGS_WIDTH
        self._built = False
        """The columns exist (made at the first resize, when the pane's width is known)."""
        self._cursor_key: str | None = None
        self._detail_due: str | None = None
        """The row whose detail is shown after the next refresh."""
        self._rows_due: dict[str, TraceEntry] | None = None
        """Rows to add or draw at the next redraw of the table (None: none scheduled)."""
        self._follow = False
        """Move the cursor to the last row then (a call was added)."""

    def compose(self) -> ComposeResult:
        table = TraceTable(id="trace-table")
        table.border_title = "Tool calls"
        yield table
        with VerticalScroll(id="trace-detail") as detail:
            detail.border_title = "Details (Enter expands)"
            yield Static("Select a call to see its diff or output.", id="trace-detail-text")

    def on_resize(self) -> None:
        layout = fit_columns(self.size.width)
        if layout != (self.columns, self.args_width) or not self._built:
            self.columns, self.args_width = layout
            self._build_table()

    def _build_table(self) -> None:
        """(Re)create the columns for the current width and put the rows back, cursor kept."""
        table = self.query_one(TraceTable)
        cursor = table.cursor_row
        self._built = True
        table.clear(columns=True)
        for column in self.columns:
            table.add_column(column, key=column, width=self.args_width if column == "arguments" else FIXED_WIDTHS[column])
        for entry in self.entries.values():
            table.add_row(*self._cells(entry), key=entry.call.id)
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)

    # updates from the app ----------------------------------------------------------------
    def start_step(self, step: int) -> None:
        """The rows of the step before and of this one change colour (the current step's are marked)."""
        previous, self.current_step = self.current_step, step
        for entry in reversed(self.entries.values()):  # the newest first: the two steps are at the end
            if entry.step in (previous, step):
                self._render_row(entry)
            elif entry.step < min(previous, step):
                break

    def add_call(self, step: int, call: ToolCall) -> None:
        if call.id in self.entries:
            return
        if not self._built:  # a row before the first layout: the columns at their default widths
            self._build_table()
        entry = TraceEntry(step, call)
        self.entries[call.id] = entry
        self._follow = True  # the cursor follows the newest call
        self._render_row(entry)  # added then, under the cursor: plain, so the cursor's colours show

    def update(self, call: ToolCall, **changes: object) -> None:
        entry = self.entries.get(call.id)
        if entry is None:
            self.add_call(self.current_step, call)
            entry = self.entries[call.id]
        for name, value in changes.items():
            setattr(entry, name, value)
        if call.arguments != entry.call.arguments:
            entry.call = call
        self._render_row(entry)
        if self._shown_key == call.id:
            self._show_detail(entry)

    async def clear(self) -> None:
        self.entries.clear()
        self.query_one(TraceTable).clear()
        self._shown_key = self._cursor_key = None
        await self.query_one("#trace-detail").remove_children()
        await self.query_one("#trace-detail").mount(Static("Select a call to see its diff or output.", id="trace-detail-text"))

    # rendering ---------------------------------------------------------------------------
    def _under_cursor(self, entry: TraceEntry) -> bool:
        table = self.query_one(TraceTable)
        if not table.row_count or entry.call.id not in table.rows:
            return False
        return table.get_row_index(entry.call.id) == table.cursor_row

    def _cells(self, entry: TraceEntry, under_cursor: bool | None = None) -> list[Text]:
        """The row's cells; the row under the cursor (``under_cursor``, or where the cursor is now)
        is left unstyled (a green ✓ on the green cursor would vanish)."""
        from frogtui.tools import short_arguments

        table = self.query_one(TraceTable)
        styled = not (self._under_cursor(entry) if under_cursor is None else under_cursor)
        current = styled and entry.step == self.current_step
        base = table.component_style("trace-table--current") if current else None
        decision_style = {"allow": "trace-table--allow", "deny": "trace-table--deny"}.get(entry.decision) if styled else None
        values = {
            "#": str(entry.step),
            "tool": entry.call.name,
            "arguments": short_arguments(entry.call, self.args_width),
            "decision": decision_text(entry),
            "time": duration_text(entry.duration_s),
            "exit": str(entry.exit_code) if entry.exit_code is not None else STOPPED.get(entry.status, ""),
        }
        cells = {column: Text(values[column], style=base or "") for column in self.columns}
        if decision_style:
            cells["decision"].stylize(table.component_style(decision_style))
        return list(cells.values())

    def _render_row(self, entry: TraceEntry) -> None:
        """Add or redraw the row at the table's next redraw, at most ``REDRAW_S`` from now."""
        if self._rows_due is None:
            self._rows_due = {}
            self.set_timer(REDRAW_S, self._render_due)
        self._rows_due[entry.call.id] = entry

    def _render_due(self) -> None:
        """Add the new rows and draw the changed ones, each once, styled for where the cursor ends
        up (it follows the newest call)."""
        due, self._rows_due = self._rows_due or {}, None
        table = self.query_one(TraceTable)
        new = [key for key in due if key not in table.rows and key in self.entries]
        follow, self._follow = self._follow and bool(table.row_count or new), False
        cursor_key = (new[-1] if new else next(reversed(table.rows))) if follow else None
        for key in new:
            table.add_row(*self._cells(due[key], under_cursor=key == cursor_key), key=key)
        if follow:
            table.move_cursor(row=table.row_count - 1)
        for key, entry in due.items():
            if key in table.rows and key not in new:
                table.update_row(key, self._cells(entry))

    def on_trace_table_row_highlighted(self, event: TraceTable.RowHighlighted) -> None:
        event.stop()
        key = event.row_key
        previous, self._cursor_key = self._cursor_key, key
        if previous in self.entries and previous != key:
            self._render_row(self.entries[previous])
        if key is not None and key in self.entries:
            self._render_row(self.entries[key])
            if self._detail_due is None:  # once per frame: a burst of steps moves the cursor many times
                self.call_after_refresh(self._show_due_detail)
            self._detail_due = key

    def _show_due_detail(self) -> None:
        key, self._detail_due = self._detail_due, None
        if key is not None and key in self.entries and key == self._cursor_key:
            self._show_detail(self.entries[key])

    def on_trace_table_row_selected(self, event: TraceTable.RowSelected) -> None:
        event.stop()
        self.expanded = not self.expanded
        self.set_class(self.expanded, "-expanded")
        key = event.row_key
        if key is not None and key in self.entries:
            self._show_detail(self.entries[key])

    def _show_detail(self, entry: TraceEntry) -> None:
        self._shown_key = entry.call.id
        detail = self.query_one("#trace-detail", VerticalScroll)
        args = " ".join(f"{k}={v!r}" for k, v in entry.call.arguments.items() if k not in ("content", "old_string", "new_string"))
        who = f"{entry.decision} by {entry.by}" + (f" ({entry.rule})" if entry.rule else "") if entry.decision else entry.status
        if entry.edited:
            who += ", after the person edited the call"
        if entry.duration_s is not None:
            who += f" · {entry.duration_s:.1f}s"
        if entry.exit_code is not None:
            who += f" · exit {entry.exit_code}"
        head = f"step {entry.step} · {entry.call.name} {args}\n{who}" + (f"\nrepeat: {entry.repeat}" if entry.repeat else "")
        body = entry.observation or "(no output yet)"
        if not self.expanded:
            lines = body.splitlines()
            if len(lines) > COLLAPSED_LINES:
                body = "\n".join(lines[:COLLAPSED_LINES]) + f"\n… {len(lines) - COLLAPSED_LINES} more lines (Enter expands)"
        widgets: list[Static | DiffView] = [Static(Text(head), classes="detail-head")]
        if entry.diff is not None:
            from frogtui.ui.diffview import DiffView

            widgets.append(DiffView(entry.diff, classes="detail-diff"))
        widgets.append(Static(Text(body), classes="detail-body"))
        with self.app.batch_update():
            detail.remove_children()
            detail.mount_all(widgets)
