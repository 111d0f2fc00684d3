"""What a person hit driving the app in a real terminal (tmux, 80x24 to 200x60), kept fixed:
Tab order, the trace's cursor row and column fit, the status bar and the approval keys at 80
columns, reasoning titles that say something, and undo notices that say what was undone."""
from __future__ import annotations

from pathlib import Path

from frogtui.ui.approval_screen import ApprovalScreen, KeyLegend
from frogtui.ui.chat import Notice
from frogtui.ui.status import StatusBar
from frogtui.ui.steplog import reasoning_preview
from frogtui.ui.trace import COLUMNS, MIN_ARGS_WIDTH, fit_columns
from frogtui.ui.tracetable import TraceTable
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for

LONG_COMMAND = "python -m pytest -q tests/test_calc.py --maxfail=1"


def three_steps() -> list[str]:
    return [
        turn("Let me [look] at the code first; brackets must not be read as markup.", xml_call("Read", file_path="calc.py")),
        turn("Run the tests to see the failure.", xml_call("Bash", command=LONG_COMMAND)),
        turn("The edit was denied.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("Done.", answer="Summary."),
    ]


def run_over(app) -> bool:
    return app.last_exit_reason is not None and not app.busy


async def test_tab_goes_prompt_chat_trace_and_cursor_row_stays_readable(make_app) -> None:
    app = make_app(three_steps(), approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await wait_for(pilot, lambda: len(app.chat.reasoning) == 4 and app.focused is not None, what="the chat to settle")
        # folded reasoning titles tell the story, brackets shown as typed
        titles = [block.title for block in app.chat.reasoning]
        assert titles[0] == "thinking (step 1) · Let me [look] at the code first; brackets must not be read as markup."
        assert len(titles) == 4
        # Tab: prompt -> chat -> trace table, whatever the number of reasoning blocks
        assert app.focused.id == "prompt"
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.focused.id == "chat", what="focus on the chat")
        await pilot.press("tab")
        await wait_for(pilot, lambda: isinstance(app.focused, TraceTable), what="focus on the trace")
        # the row under the cursor is plain (the cursor's colours show); the others keep theirs
        table = app.focused
        table.move_cursor(row=0)
        decision = list(COLUMNS).index("decision")
        await wait_for(pilot, lambda: not table.get_row_at(0)[decision].spans, what="the cursor row drawn plain")
        under, other = table.get_row_at(0)[decision], table.get_row_at(1)[decision]
        assert under.plain == "✓ rule" and not under.spans and not under.style
        assert other.plain == "✓ mode" and other.spans  # coloured as an allow
        await pilot.press("down")
        await wait_for(
            pilot,
            lambda: not table.get_row_at(1)[decision].spans and table.get_row_at(0)[decision].spans,
            what="the colouring to follow the cursor",
        )


def test_columns_fit_the_width() -> None:
    assert fit_columns(60) == (COLUMNS, 60 - 4 - 25 - 12)
    narrow, args = fit_columns(40)  # an 80-column terminal
    assert "decision" in narrow and "time" not in narrow and args >= MIN_ARGS_WIDTH
    wide, args = fit_columns(100)
    assert wide == COLUMNS and args > 50
    assert reasoning_preview("one two three four", limit=9) == "one two…"


async def test_80x24_trace_status_and_modal_fit(make_app) -> None:
    app = make_app(three_steps())
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "fix add")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query(KeyLegend)
                       and app.screen.query_one(KeyLegend).size.width > 0, what="the Bash modal, laid out")  # (under load: a frame late)
        screen = app.screen
        dialog = screen.query_one("#approval-dialog")
        assert dialog.region.y >= 0 and dialog.region.bottom <= 24  # the whole modal is on screen
        legend = screen.query_one(KeyLegend)
        lines = [line.plain for line in legend.lines(legend.size.width)]
        assert len(lines) > 1 and all(len(line) <= legend.size.width for line in lines)
        # every key sits on the same line as what it does
        for key, label, _short in legend.items:
            assert any(f" {key}  {label}" in line for line in lines), (key, lines)
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.name == "Edit", what="the Edit modal")
        await pilot.press("n")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.pause(0.1)
        # the trace keeps the decision column visible at 40 columns; time and exit go to the detail
        trace = app.trace
        assert "decision" in trace.columns and "time" not in trace.columns
        table = trace.query_one(TraceTable)
        assert sum(column.get_render_width(table) for column in table.columns.values()) <= table.size.width
        table.focus()
        table.move_cursor(row=1)
        await pilot.pause(0.1)
        head = trace.query_one("#trace-detail .detail-head").render().plain
        assert "exit " in head and "s ·" in head
        # the status bar drops the least useful parts, never the state, step or approval mode
        status = app.query_one(StatusBar).render().plain
        assert status.startswith("ready") and "step 4/" in status and "mode policy" in status
        assert "tok/s" not in status and len(status) <= 80
        # wider: the whole command fits in the arguments column, and the bar shows everything
        await pilot.resize_terminal(200, 60)
        await pilot.pause(0.2)
        assert trace.columns == COLUMNS
        assert table.get_row_at(1)[list(COLUMNS).index("arguments")].plain == LONG_COMMAND
        assert "tok/s" in app.query_one(StatusBar).render().plain


async def test_undo_notice_says_what_was_undone(make_app, py_repo: Path) -> None:
    app = make_app(
        [
            turn("Note.", xml_call("Write", file_path="NOTES.md", content="fixed add\n")),
            turn("Look.", xml_call("Bash", command="touch NOTES.md")),  # writes (so a checkpoint), changes no content
            turn("Done.", answer="Noted."),
        ],
        approve="all",
    )
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "take a note")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.press("ctrl+z")  # the last step changed nothing: undo goes to the Write, and says so (issue 33 item 8)
        await wait_for(pilot, lambda: "Undid step 1" in app.query(Notice).last().render().plain, what="the undo")
        notice = app.query(Notice).last().render().plain
        assert "Undid step 1 (Write): removed NOTES.md." in notice
        assert "Passed over step 2 (Bash): it changed no file." in notice
        assert "kept in refs/frogtui/" in notice and "git restore --source=refs/frogtui/" in notice
        assert not (py_repo / "NOTES.md").exists()
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: any("Nothing (more) to undo" in str(n.message) for n in app._notifications), what="the end")


async def test_the_palettes_quit_says_what_quitting_does(make_app) -> None:
    from frogtui.ui.app import QUIT_HELP

    app = make_app([turn("", answer="hi")])
    async with app.run_test(size=SIZE):
        quits = [c for c in app.get_system_commands(app.screen) if c.title == "Quit"]
    assert [c.help for c in quits] == [QUIT_HELP] and "save the session" in QUIT_HELP
