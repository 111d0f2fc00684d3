"""Snapshots (pytest-textual-snapshot) of the main screen mid-run, the approval modal with a diff,
and the expanded trace. Deterministic: fixed size, fake clock, ``~/repo`` paths, no timestamps.

Update after a deliberate change with ``pytest tests/ui --snapshot-update``.
"""
from __future__ import annotations

from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.diffview import DiffView
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for


def test_main_screen_mid_run(make_app, snap_compare) -> None:
    app = make_app(
        [
            turn("Read the code first.", xml_call("Read", file_path="calc.py")),
            turn("Now run the tests and wait for them.", xml_call("Bash", command="sleep 30"), answer="Running the **tests**."),
        ],
        approve="all",
    )

    async def run_before(pilot) -> None:
        await submit(pilot, "fix the add function")
        await wait_for(pilot, lambda: any(e.status == "running" for e in app.trace.entries.values()), what="the command to run")
        await wait_for(pilot, lambda: app.status.git is not None, what="git state")
        app.query_one("#trace-table").focus()
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_approval_modal_with_a_diff(make_app, snap_compare) -> None:
    edit = xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")
    app = make_app([turn("The sign is wrong.", edit)])

    async def run_before(pilot) -> None:
        await submit(pilot, "fix the add function")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await wait_for(pilot, lambda: app.screen.query(DiffView), what="the diff")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_expanded_trace(make_app, snap_compare) -> None:
    app = make_app(
        [
            turn("Look.", xml_call("Read", file_path="calc.py"), xml_call("Bash", command="printf 'one\\ntwo\\nthree\\n'")),
            turn("Done.", answer="The file has one function."),
        ],
        approve="all",
    )

    async def run_before(pilot) -> None:
        await submit(pilot, "look around")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
        await wait_for(pilot, lambda: app.status.git is not None, what="git state")
        table = app.query_one("#trace-table")
        table.focus()
        table.move_cursor(row=1)
        await wait_for(pilot, lambda: app.focused is table, what="the table focused")  # else Enter may reach the prompt
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.trace.expanded and table.outer_size.height == 8, what="the detail expanded, laid out")
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
