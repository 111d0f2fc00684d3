"""The attempts' results (``/attempts N TASK``, docs/ATTEMPTS.md): the table, and beside it (below
it under ``WIDE_MIN`` columns) the highlighted attempt's change, file by file, in the diff viewer.
Enter applies the highlighted attempt, ``n`` or Esc applies none; the screen returns the attempt's
number or None."""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from frogtui.ui.diffmodel import FileDiff
from frogtui.ui.diffview import DiffView
from frogtui.vcs.worktrees import DIFF_CAP

if TYPE_CHECKING:
    from frogtui.attempts.results import AttemptResult

WIDE_MIN = 110
"""At least this many columns: the diff beside the table; fewer: below it."""


def verdict(result: AttemptResult) -> str:
    if result.check is None:
        return "-"
    return "passed" if result.passed else "failed"


class AttemptsScreen(ModalScreen["int | None"]):
    """Args:
        results: the attempts, in order (``frogtui.attempts.results``).
        files: each attempt's changed files, by attempt number (made off the UI thread).
        check: the check command ('' for none).
        gone, marks, heading: for a table reopened by ``--resume``: the attempts gone (not
            applicable), a note per attempt, and a word after the title.
    """

    DEFAULT_CSS = """
    AttemptsScreen { background: $background; }
    #attempts-title { height: auto; padding: 0 1; background: $panel; text-style: bold; }
    #attempts-body { layout: horizontal; height: 1fr; }
    #attempts-body.narrow { layout: vertical; }
    #attempts-left { width: 1fr; height: 1fr; }
    #attempts-body.narrow #attempts-left { width: 100%; height: auto; max-height: 60%; }
    #attempts-right { width: 1fr; height: 1fr; }
    #attempts-body.narrow #attempts-right { width: 100%; }
    #attempts-table { height: auto; max-height: 12; }
    #attempts-tail { height: auto; max-height: 8; color: $text-muted; padding: 0 1; }
    #attempts-file { height: auto; padding: 0 1; background: $panel; }
    #attempts-help { height: auto; padding: 0 1; color: $text-muted; }
    """

    BINDINGS = [
        Binding("n", "none", "Apply none"),
        Binding("escape", "none", "Apply none"),
        Binding("right_square_bracket", "next_file", "Next file"),
        Binding("left_square_bracket", "previous_file", "Previous file"),
    ]

    def __init__(self, results: list[AttemptResult], files: dict[int, list[FileDiff]], check: str, *,
                 gone: dict[int, str] | None = None, marks: dict[int, str] | None = None, heading: str = "") -> None:
        super().__init__()
        self.gone = gone or {}
        """Attempts that cannot be shown or applied any more (a resumed session's), with why."""
        self.marks = marks or {}
        """What to say about an attempt under the table (why it is gone, its branch deleted)."""
        self.heading = heading
        self.results = results
        self.files = files
        self.check = check
        self.shown: int | None = None
        """The attempt whose change is shown."""
        self.file_index = 0

    def compose(self) -> ComposeResult:
        passed = sum(1 for r in self.results if r.passed)
        heading = f" · {self.heading}" if self.heading else ""
        capped = sum(1 for r in self.results if r.diff_over_cap)
        cap = f" · diffs kept up to {DIFF_CAP // 2**20} MiB" + (f" ({capped} over: not kept, applied from their commits)" if capped else "")
        yield Static(f"{len(self.results)} attempts · check: {self.check or 'none'} · {passed} passed{cap}{heading}", id="attempts-title",
                     markup=False)
        with Container(id="attempts-body"):
            with Vertical(id="attempts-left"):
                yield DataTable(id="attempts-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="attempts-tail", markup=False)
            with Vertical(id="attempts-right"):
                yield Static("", id="attempts-file", markup=False)
        yield Static("Enter: apply the highlighted attempt to the working tree · n/Esc: none · [ ]: files · s: unified/side by side",
                     id="attempts-help", markup=False)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("#", "check", "files", "+", "-", "steps", "tokens", "time", "end")
        for r in self.results:
            same = f" =#{r.same_as}" if r.same_as is not None else ""
            same += " diff>cap" if r.diff_over_cap else ""
            same += " gone" if r.number in self.gone else ""
            table.add_row(str(r.number), verdict(r), str(r.files), f"+{r.added}", f"-{r.removed}", str(r.steps), str(r.tokens),
                          f"{r.seconds:.0f}s", f"{r.exit_reason}{same}", key=str(r.number))
        self._layout(self.size.width)
        table.focus()
        if self.results:
            self.call_after_refresh(self._show_first)

    async def _show_first(self) -> None:
        if self.shown is None:  # unless the table's first highlight showed it already
            await self.show_attempt(self.results[0].number)

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size.width)

    def _layout(self, width: int) -> None:
        self.query_one("#attempts-body").set_class(width < WIDE_MIN, "narrow")

    def _result(self, number: int) -> AttemptResult | None:
        return next((r for r in self.results if r.number == number), None)

    async def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None and int(event.row_key.value) != self.shown:  # (set before the first await)
            await self.show_attempt(int(event.row_key.value))

    async def show_attempt(self, number: int, file_index: int = 0) -> None:
        """Show attempt ``number``'s check output and its ``file_index``-th changed file."""
        result = self._result(number)
        if result is None:
            return
        self.shown, self.file_index = number, file_index
        tail = result.check.tail if result.check is not None and not result.passed else ""
        self.query_one("#attempts-tail", Static).update(
            f"attempt {number}: {result.exit_reason}{(' · ' + result.error) if result.error else ''}"
            + (f" · {self.marks[number]}" if number in self.marks else "") + (f"\n{tail}" if tail else ""))
        right = self.query_one("#attempts-right")
        await right.query(DiffView).remove()
        files = self.files.get(number, [])
        label = self.query_one("#attempts-file", Static)
        if not files:
            gone = number in self.gone
            label.update(f"attempt {number} is gone: its change cannot be shown" if gone else f"attempt {number} changed nothing")
            return
        diff = files[file_index % len(files)]
        label.update(f"attempt {number} · file {file_index % len(files) + 1} of {len(files)}: {diff.header}")
        await right.mount(DiffView(diff, wrap=True, id="attempts-diff"))  # a pick applies it: drawn whole, long lines wrapped

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is None:
            return
        number = int(event.row_key.value)
        if number in self.gone:
            self.notify(f"Attempt {number} is {self.gone[number]}: there is nothing to apply.", severity="warning")
            return
        if not self.files.get(number):
            self.notify(f"Attempt {number} changed nothing: there is nothing to apply.", severity="warning")
            return
        self.dismiss(number)

    def action_none(self) -> None:
        self.dismiss(None)

    async def action_next_file(self) -> None:
        if self.shown is not None:
            await self.show_attempt(self.shown, self.file_index + 1)

    async def action_previous_file(self) -> None:
        if self.shown is not None:
            await self.show_attempt(self.shown, self.file_index - 1)
