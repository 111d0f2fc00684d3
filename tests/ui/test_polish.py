"""Issue 5: the chat's tool-call lines (live and resumed), the highlighted trajectory viewer, and
the footer at 80 columns."""
from __future__ import annotations

from pathlib import Path

from textual.widgets import Footer

from frogtui.config import Config
from frogtui.session import Session
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.chat import AnswerBlock, ReasoningBlock, UserMessage
from frogtui.ui.toolline import ToolCallLine
from tests.support import turn, write_replay, xml_call
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for

BRACKETS = "echo '[b]as typed[/b]'"


def run_over(app: FrogApp) -> bool:
    return app.last_exit_reason is not None and not app.busy


def chat_story(app: FrogApp) -> list[str]:
    """The chat's children in order, one short label each."""
    story = []
    for child in app.chat.children:
        if isinstance(child, ToolCallLine):
            story.append(f"call {child.entry.call.name}")
        elif isinstance(child, (ReasoningBlock, AnswerBlock, UserMessage)):
            story.append(type(child).__name__)
    return story


def lines(app: FrogApp) -> list[str]:
    return [line.plain for line in app.query(ToolCallLine)]


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
        read, bash = app.query(ToolCallLine)
        assert read.plain.startswith("● Read  calc.py  ✓ rule")
        assert bash.plain == f"● Bash  {BRACKETS}  ? waiting for you"
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.name == "Edit", what="the Edit modal")
        await pilot.press("r", *"use pytest -x", "enter")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.pause(0.1)
        # updated in place: the same widgets, one per call
        assert list(app.query(ToolCallLine))[:2] == [read, bash]
        live = lines(app)
        assert live[0].startswith("● Read  calc.py  ✓ rule · ") and live[0].endswith("s")
        # set as plain text: the brackets are shown as typed, not read as markup
        assert live[1].startswith(f"● Bash  {BRACKETS}  ✓ person · ") and live[1].endswith("s · exit 0")
        assert live[2] == '● Edit  calc.py  ✗ denied by person: "use pytest -x"'
        # in order with the reasoning and the answer of its step
        assert chat_story(app) == [
            "UserMessage",
            "ReasoningBlock", "call Read",
            "ReasoningBlock", "AnswerBlock", "call Bash",
            "ReasoningBlock", "call Edit",
            "ReasoningBlock", "AnswerBlock",
        ]
        story = chat_story(app)
        # colours are the theme's: a green bullet for a call that ran, red for a denied one
        variables = app.get_css_variables()
        for line, colour in ((read, variables["success"]), (list(app.query(ToolCallLine))[2], variables["error"])):
            first = next(seg for seg in line.render_line(0) if seg.text.startswith("●"))
            assert first.style.color.triplet.hex.lower() == colour.lower()
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    session = Session.latest(py_repo)
    assert session is not None
    follow_up = write_replay(home / "follow.jsonl", [turn("ok", answer="ok")])
    config = Config(repo=py_repo, model_spec=f"replay:{follow_up}", theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=session, clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: len(resumed.query(ToolCallLine)) == 3, what="the resumed lines")
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
        line = app.query_one(ToolCallLine)
        text = line.plain
        assert len(text) <= line.size.width
        # the arguments give way, then the duration; what happened stays visible
        assert text.startswith("● Bash  echo runn") and "…" in text and text.endswith("✓ mode · exit 0")
        assert line.entry.duration_s is not None
