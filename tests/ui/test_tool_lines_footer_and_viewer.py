"""Issue 5: the chat's tool-call lines (live and resumed), the highlighted trajectory viewer, and
the footer at 80 columns."""
from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from textual.widgets import Footer

from frogtui.config import Config
from frogtui.session import Session
from frogtui.ui.answer import AnswerBlock
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.chat import UserMessage
from frogtui.ui.steplog import CallLine, StepLog
from frogtui.ui.trajectory_screen import JsonView, TrajectoryScreen, read_trajectory
from tests.support import turn, write_replay, xml_call
from tests.ui.conftest import SIZE, call_texts, drawn, fake_clock, rules_file, submit, wait_for

BRACKETS = "echo '[b]as typed[/b]'"


def run_over(app: FrogApp) -> bool:
    return app.last_exit_reason is not None and not app.busy


def chat_story(app: FrogApp) -> list[str]:
    """The chat's children in order, one short label each."""
    story = []
    for child in app.chat.children:
        if isinstance(child, StepLog):
            story += [f"call {item.entry.call.name}" if isinstance(item, CallLine) else "reasoning" for item in child.items]
        elif isinstance(child, (AnswerBlock, UserMessage)):
            story.append(type(child).__name__)
    return story


def lines(app: FrogApp) -> list[str]:
    return call_texts(app)


async def test_tool_lines_follow_each_call_and_come_back_on_resume(make_app, py_repo: Path, home: Path) -> None:
    app = make_app([
        turn("Read it.", xml_call("Read", file_path="calc.py")),
        turn("Run it.", xml_call("Bash", command=BRACKETS), answer="Trying a command."),
        turn("Fix it.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("Done.", answer="Summary."),
    ])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the Bash modal")
        await pilot.pause(0.05)
        read, bash = app.chat.call_lines
        assert lines(app)[0].startswith("● Read  calc.py  ✓ rule")
        assert lines(app)[1] == f"● Bash  {BRACKETS}  ? waiting for you"
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.name == "Edit", what="the Edit modal")
        await pilot.press("r", *"use pytest -x", "enter")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.pause(0.1)
        # updated in place: the same lines, one per call
        assert app.chat.call_lines[:2] == [read, bash]
        live = lines(app)
        assert live[0].startswith("● Read  calc.py  ✓ rule · ") and live[0].endswith("s")
        # set as plain text: the brackets are shown as typed, not read as markup
        # (the argument may be cut to fit the pane; the outcome never is)
        assert live[1].startswith("● Bash  echo '[b]as typed") and live[1].endswith("  ✓ person · 0.5s · exit 0")
        assert live[2] == '● Edit  calc.py  ✗ denied by person: "use pytest -x"'
        # in order with the reasoning and the answer of its step
        assert chat_story(app) == [
            "UserMessage",
            "reasoning", "call Read",
            "reasoning", "AnswerBlock", "call Bash",
            "reasoning", "call Edit",
            "reasoning", "AnswerBlock",
        ]
        story = chat_story(app)
        # colours are the theme's: a green bullet for a call that ran, red for a denied one
        variables = app.get_css_variables()
        for line, colour in ((read, variables["success"]), (app.chat.call_lines[2], variables["error"])):
            first = next(seg for seg in drawn(app, line)[0] if seg.text.startswith("●"))
            assert first.style.color.triplet.hex.lower() == colour.lower()
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    session = Session.latest(py_repo)
    assert session is not None
    follow_up = write_replay(home / "follow.jsonl", [turn("ok", answer="ok")])
    config = Config(repo=py_repo, model_spec=f"replay:{follow_up}", theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=session, clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(resumed.chat.call_lines) == 3, what="the resumed lines")
        await pilot.pause(0.05)
        assert lines(resumed) == live
        assert chat_story(resumed) == story


async def test_a_call_line_keeps_its_outcome_in_a_narrow_chat(make_app) -> None:
    long_command = "echo running the tests in tests/test_calc.py with --maxfail=1"
    app = make_app([turn("Run.", xml_call("Bash", command=long_command)), turn("Done.", answer="ok")], approve="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "test")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.pause(0.1)
        [line] = app.chat.call_lines
        [text] = call_texts(app)
        assert len(text) <= app.chat.query_one(StepLog).size.width
        # the arguments give way, then the duration; what happened stays visible
        assert text.startswith("● Bash  echo runn") and "…" in text and text.endswith("✓ mode · exit 0")
        assert line.entry.duration_s is not None


PALETTE_FOR_BINDING = {
    "interrupt": "Stop",
    "new_task": "New task",
    "review": "Review & commit",
    "undo": "Undo",
    "toggle_reasoning": "Toggle reasoning",
    "open_trajectory": "Open trajectory file",
    "cycle_approval_mode": "Approval mode",
    "next_theme": "Theme: frog-light",
    "quit_twice": "Quit",
}


def shown_keys(app) -> list[str]:
    keys = app.query_one(Footer).query("FooterKey")
    return [key.description for key in keys if key.display and not key.has_class("-command-palette")]


async def test_footer_at_80_columns_shows_whole_keys_and_the_palette_has_every_action(make_app) -> None:
    app = make_app([turn("ok", answer="ok")])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        wide = ["Quit×2", "Stop", "New", "Review", "Undo", "Think", "JSON", "Mode"]
        await wait_for(pilot, lambda: shown_keys(app) == wide, what="the footer laid out at 80 columns")
        footer = app.query_one(Footer)
        keys = list(footer.query("FooterKey"))
        palette = next(key for key in keys if key.has_class("-command-palette"))
        shown = [key for key in keys if key.display and key is not palette]
        # every key shown is whole, in one row, none under another or under the palette key
        regions = sorted((key.region for key in shown), key=lambda r: r.x)
        assert all(r.y == footer.region.y and r.width > 0 for r in regions)
        assert all(a.right <= b.x for a, b in itertools.pairwise(regions))
        assert regions[-1].right <= palette.region.x and palette.region.right <= 80
        for key in shown:
            assert key.render().plain.strip() == f"{key.key_display} {key.description}"
        assert [key.description for key in shown] == ["Quit×2", "Stop", "New", "Review", "Undo", "Think", "JSON", "Mode"]
        # narrower: keys are hidden whole from the right, never drawn over each other
        await pilot.resize_terminal(60, 24)
        await wait_for(pilot, lambda: len(shown_keys(app)) == 5 and palette.region.width > 0 and palette.region.right <= 60,
                       what="the footer laid out at 60 columns")
        shown = [key for key in footer.query("FooterKey") if key.display and not key.has_class("-command-palette")]
        assert [key.description for key in shown] == ["Quit×2", "Stop", "New", "Review", "Undo"]
        assert max(key.region.right for key in shown) <= palette.region.x
        # the palette lists every action, the ones the footer hides included
        titles = {command.title for command in app.get_system_commands(app.screen)}
        bound = {binding.action for binding in app.BINDINGS}
        assert bound == set(PALETTE_FOR_BINDING)
        assert {PALETTE_FOR_BINDING[action] for action in bound} <= titles


def big_trajectory(path: Path, megabytes: int = 5) -> None:
    """A trajectory-shaped JSON file of about ``megabytes`` MB, one long observation included."""
    step = {"step": 1, "observation": "x" * 200, "ok": True, "exit_code": 0, "note": None}
    steps = [dict(step, step=n) for n in range(megabytes * 1024 * 1024 // 300)]
    steps.append({"step": len(steps), "observation": "y" * 50_000})
    path.write_text(json.dumps({"trajectory_id": "t", "steps": steps}, indent=2) + "\n", encoding="utf-8")


@pytest.mark.timing
async def test_trajectory_viewer_highlights_a_5mb_file_without_a_freeze(make_app) -> None:
    app = make_app([turn("ok", answer="ok")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        big_trajectory(app.session.trajectory_path)
        size = app.session.trajectory_path.stat().st_size
        assert size > 5_000_000
        started = time.perf_counter()
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, TrajectoryScreen) and app.screen.query(JsonView), what="the viewer")
        view = app.screen.query_one(JsonView)
        await pilot.pause(0.05)
        opened = time.perf_counter() - started
        print(f"\n5 MB trajectory ({size / 1e6:.1f} MB, {view.line_count:,} lines) open in {opened:.2f} s")
        assert opened < 5 and app.focused is view
        # highlighted: keys, strings and numbers in different colours of the theme's pygments style
        colours = {}
        for y in (4, 5):  # "step": 0,  /  "observation": "xxx…",
            colours.update({s.text.strip(): s.style.color for s in view.render_line(y) if s.text.strip()})
        string = next(colour for text, colour in colours.items() if text.startswith('"xxx'))  # cut at the width
        assert colours['"step"'] != colours["0"] != string
        # jump to the end: only the rows on screen are lexed
        started = time.perf_counter()
        await pilot.press("end")
        await pilot.pause(0.05)
        assert view.scroll_offset.y > view.line_count - view.size.height - 2
        assert time.perf_counter() - started < 2
        lexed = len(view.highlighted._chunks)
        print(f"after End: {lexed} chunks of 200 lines lexed")
        assert lexed <= 4, f"{lexed} chunks lexed"
        # the long observation line is cut with a note
        long_line = next(line for line in view.highlighted.lines if "more characters" in line)
        assert long_line.endswith("… (48,023 more characters)") and len(long_line) < 2_100
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TrajectoryScreen), what="the viewer to close")


def test_a_huge_or_missing_trajectory_says_so(tmp_path: Path) -> None:
    lines, note = read_trajectory(tmp_path / "missing.json")
    assert "nothing saved yet" in lines[0] and note == ""
    path = tmp_path / "t.json"
    path.write_text("[\n" + "  1,\n" * 1000 + "  1\n]\n")
    lines, note = read_trajectory(path, limit=2048)
    assert len("\n".join(lines)) <= 2048 and "open the file in an editor" in note
