"""What each width shows (issue 11): the main screen and the review at 80, 120 and 200 columns.

- 200 columns: everything in full.
- 120 columns: the status bar's compact forms keep the model and tok/s; the trace's columns have
  fixed widths (``✓ edited``), so the table never scrolls sideways.
- 80 columns: the chat's tool lines keep their outcome whole in a short form (``✗ person``); the
  review's status line wraps and its footer keeps Commit and Back first.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.review import ReviewScreen
from frogtui.ui.steplog import StepLog
from frogtui.ui.tracetable import TraceTable
from tests.support import turn, xml_call
from tests.ui.conftest import call_texts, submit, wait_for

pytestmark = pytest.mark.slow  # each plays a whole run with three approvals (about 10 s on 2 busy cores)

WIDTHS = {80: (80, 24), 120: (120, 35), 200: (200, 50)}
TURNS = [
    turn("Run the tests.", xml_call("Bash", command="python -m pytest -q")),
    turn("Fix the sign.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
    turn("The person refused.", xml_call("Write", file_path="notes.txt", content="add() subtracted.\n")),
    turn("Done.", answer="I could not edit `calc.py`; I wrote notes.txt instead."),
]


async def play(pilot) -> None:
    """The run: an edited command allowed, an Edit denied with a reason, a Write allowed."""
    app = pilot.app
    await submit(pilot, "fix the add function")
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the Bash modal")
    await pilot.press("e")
    await pilot.press("ctrl+u", *"echo tests pass", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.arguments.get("command") == "echo tests pass",
                   what="the edited command's modal")
    await pilot.press("y")
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.name == "Edit", what="the Edit modal")
    await pilot.press("r", *"not before the tests run for real", "enter")
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.name == "Write", what="the Write modal")
    await pilot.press("y")
    await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
    await wait_for(pilot, lambda: app.status.git is not None and app.status.git.changed == 1, what="git state")
    app.query_one("#trace-table").focus()  # not the prompt: its blinking cursor would make the snapshots flaky
    app.chat.scroll_end(animate=False)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause(0.3)


@pytest.mark.parametrize("width", [80, 120, 200])
def test_main_screen_at_each_width(width: int, make_app, snap_compare) -> None:
    app = make_app(TURNS)
    assert snap_compare(app, terminal_size=WIDTHS[width], run_before=play)


@pytest.mark.parametrize("width", [80, 120])
def test_review_at_each_width(width: int, make_app, snap_compare) -> None:
    app = make_app(TURNS)

    async def run_before(pilot) -> None:
        await play(pilot)
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=WIDTHS[width], run_before=run_before)


@pytest.mark.parametrize("width", [80, 120, 200])
async def test_what_each_width_keeps(width: int, make_app, py_repo: Path) -> None:
    app = make_app(TURNS)
    async with app.run_test(size=WIDTHS[width]) as pilot:
        await play(pilot)
        status = app.status.render().plain
        table = app.query_one(TraceTable)
        assert table.max_scroll_x == 0, f"the trace scrolls sideways at {width} columns"
        if width >= 120:
            assert "replay:replay.j" in status and "tok/s" in status, status
        if width == 200:
            assert "ctx ░" in status and "git main 1 changed" in status and "mode policy" in status, status
        shown = app.chat.query_one(StepLog).size.width
        for text in call_texts(app):
            assert cell_len(text) <= shown, f"{text!r} is cut at {shown} cells"
        bash, edit, write = call_texts(app)
        if width == 80:
            assert bash.endswith("✓ person ✎ · exit 0") and edit.endswith("✗ person") and "✓ person" in write, (bash, edit, write)
        else:
            assert bash.endswith("✓ person (edited) · 0.5s · exit 0"), bash
            assert edit.startswith('● Edit  calc.py  ✗ denied by person: "not before'), edit
        if width == 200:
            assert edit.endswith('✗ denied by person: "not before the tests run for real"'), edit
