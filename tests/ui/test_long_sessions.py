"""Long sessions in the app (Pilot, replay models, a real git repository): the hand-off when a small
context fills (edited by the person, continued to a final answer, review showing both runs'
changes, the chain read back by --resume), a repeated call caught in the approval modal, and
messages typed while the agent works, queued and delivered after the run in order."""
from __future__ import annotations

from pathlib import Path

from frogtui.config import Config, Limits
from frogtui.session import Session
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.chat import Notice, UserMessage
from frogtui.ui.handoff_screen import HandoffScreen
from frogtui.ui.queue import QueuePanel
from frogtui.ui.review import ReviewScreen
from tests.support import git, turn, write_replay, xml_call
from tests.test_headless_long import LONG_TURNS, NOTES
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for

SMALL = Limits(max_context_tokens=1000, handoff_margin=400)


def showing(app: FrogApp, screen: type, widget: str) -> bool:
    """``screen`` is on top and composed (a pushed screen mounts its widgets a moment later)."""
    return isinstance(app.screen, screen) and bool(app.screen.query(widget))


def run_over(app: FrogApp) -> bool:
    return app.last_exit_reason is not None and not app.busy


def users(app: FrogApp) -> list[str]:
    return [m.render().plain for m in app.query(UserMessage)]


async def test_a_full_context_hands_off_edited_by_the_person_and_review_shows_both_runs(make_app, py_repo: Path, home: Path) -> None:
    (py_repo / "notes.txt").write_text(NOTES)
    git(py_repo, "add", "notes.txt")
    git(py_repo, "commit", "-qm", "notes")
    app = make_app(LONG_TURNS, approve="all", limits=SMALL)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add and record it")
        await wait_for(pilot, lambda: showing(app, HandoffScreen, "#handoff-text"), what="the hand-off editor")
        assert app.last_exit_reason == "max_context_len"
        assert app.status.context_used > SMALL.max_context_tokens - SMALL.handoff_margin and app.status.context_size == 1000
        editor = app.screen
        assert editor.text.startswith("# Hand-off\n") and "## Task\nfix add and record it\n" in editor.text
        assert "- calc.py (+1 -1)" in editor.text
        area = editor.query_one("#handoff-text")
        area.move_cursor(area.document.end)
        area.insert("\nThe person adds: keep notes.txt as it is.\n")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: run_over(app) and app.last_exit_reason == "agent", what="the second conversation")
        assert app.core.agent is not None and app.core.agent.trajectory.run == 2
        first = app.core.agent.messages[1]["content"]
        assert first.startswith("# Hand-off\n") and first.endswith("The person adds: keep notes.txt as it is.")
        assert app.core.agent.messages[-1]["content"] == "add() is fixed and the change is recorded."
        assert users(app)[-1] == first and any("Hand-off: a fresh conversation starts" in str(n.render()) for n in app.query(Notice))
        assert app.status.session_tokens > app.status.context_used
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.selection is not None, what="review")
        assert sorted(f.path for f in app.screen.selection.files) == ["CHANGES.md", "calc.py"]
    session = Session.latest(py_repo)
    assert [c.run for c in session.load_chain()] == [1, 2]
    # --resume reads the chain: both conversations in the chat, the second one continued
    follow = write_replay(home / "follow.jsonl", [turn("", answer="Still fixed.")])
    config = Config(repo=py_repo, model_spec=f"replay:{follow}", theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=session, clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: resumed.model is not None, what="the model")
        assert users(resumed) == ["fix add and record it", first]
        assert any("conversation 2 started" in str(n.render()) for n in resumed.query(Notice))
        await submit(pilot, "is it still fixed?")
        await wait_for(pilot, lambda: run_over(resumed), what="the follow-up")
        assert resumed.core.agent.messages[1]["content"] == first and resumed.core.agent.trajectory.run == 2
    assert session.load_trajectory().final_message == "Still fixed."


async def test_a_third_identical_call_is_asked_about_as_a_repeat_though_the_rules_allow_it(make_app) -> None:
    read = xml_call("Read", file_path="calc.py")
    app = make_app([turn("a", read), turn("b", read), turn("c", read), turn("", answer="ok")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: showing(app, ApprovalScreen, "#approval-rule"), what="the repeat to be asked about")
        said = str(app.screen.query_one("#approval-repeat").render())
        assert "this exact call ran twice already in a row, with the same result" in said
        assert "rule Read: allow (default) would allow it" in str(app.screen.query_one("#approval-rule").render())
        await pilot.press("n")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        entries = list(app.trace.entries.values())
        assert [bool(e.repeat) for e in entries] == [False, False, True] and entries[2].decision == "deny"
    steps = Session.latest(app.config.repo).load_trajectory().steps
    assert steps[2].approvals[0]["repeat"].startswith("this exact call ran twice")


WAIT = xml_call("Bash", command="while [ ! -e release ]; do sleep 0.05; done", description="wait for the test")
"""A command that runs until the test creates ``release`` in the repository."""


async def test_messages_typed_mid_run_are_queued_editable_and_delivered_after_it_in_order(make_app, py_repo: Path) -> None:
    app = make_app([turn("wait", WAIT), turn("", answer="waited"), turn("", answer="one"), turn("", answer="three")], approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait a bit")
        await wait_for(pilot, lambda: app.status.state == "running Bash", what="the command")
        for text in ("first follow-up", "second follow-up", "third follow-up"):
            await submit(pilot, text)
        panel = app.query_one(QueuePanel)
        await wait_for(pilot, lambda: panel.display and len(panel.children) == 3, what="the queue shown")
        assert app.busy and users(app) == ["wait a bit"]
        panel.focus()
        panel.index = 1
        await pilot.press("x")  # removed
        await wait_for(pilot, lambda: len(app.queue) == 2, what="the removal")
        (py_repo / "release").touch()
        await wait_for(pilot, lambda: run_over(app) and len(app.core.agent.messages) >= 9 and not app.busy, timeout=30, what="all runs")
        sent = [m["content"] for m in app.core.agent.messages if m["role"] == "user"]
        assert sent == ["wait a bit", "first follow-up", "third follow-up"]
        answers = [m["content"] for m in app.core.agent.messages if m["role"] == "assistant" and m["content"]]
        assert answers == ["waited", "one", "three"]
        assert users(app) == sent and not panel.display
        marks = [str(n.render()) for n in app.query(Notice) if "queued during step 1" in str(n.render())]
        assert len(marks) == 2


async def test_esc_then_send_interrupts_and_sends_at_once_and_a_plain_esc_holds_the_queue(make_app) -> None:
    long = xml_call("Bash", command="sleep 20")
    app = make_app([turn("wait", long), turn("", answer="now then"), turn("wait", long), turn("", answer="held one")], approve="all")

    def sent() -> list[str]:
        return [m["content"] for m in app.core.agent.messages if m["role"] == "user"]

    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait long")
        await wait_for(pilot, lambda: app.status.state == "running Bash", what="the command")
        await submit(pilot, "later")
        await pilot.press("escape")
        await submit(pilot, "stop and do this")  # goes before "later", as soon as the run has stopped
        await wait_for(pilot, lambda: len(sent()) == 3 and app.status.state == "running Bash", what="the queue to go on")
        assert sent() == ["wait long", "stop and do this", "later"]
        assert app.core.agent.messages[2]["tool_calls"] and "Interrupted" in app.core.agent.messages[3]["content"]
        await submit(pilot, "held")
        await pilot.press("escape")  # a plain Esc: the queue waits for the person
        await wait_for(pilot, lambda: run_over(app) and app.last_exit_reason == "cancelled", what="the interrupt")
        await pilot.pause(0.2)
        assert [q.text for q in app.queue.items] == ["held"] and sent()[-1] == "later"
        app.query_one("#prompt").focus()
        await pilot.press("enter")  # the empty prompt sends the next queued message
        await wait_for(pilot, lambda: not app.queue.items and run_over(app) and app.last_exit_reason == "agent", what="the held message")
        assert sent()[-1] == "held" and app.core.agent.messages[-1]["content"] == "held one"


async def test_the_palette_hands_off_between_runs_and_esc_keeps_the_conversation(make_app) -> None:
    app = make_app([turn("", answer="one"), turn("", answer="fresh")])
    async with app.run_test(size=SIZE) as pilot:
        app.action_handoff()  # nothing to hand off yet
        await submit(pilot, "say one")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        app.action_handoff()
        await wait_for(pilot, lambda: showing(app, HandoffScreen, "#handoff-text"), what="the editor")
        assert "which ended: the person asked for a fresh conversation." in app.screen.text
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HandoffScreen), what="the editor to close")
        assert app.core.agent.trajectory.run == 1 and any("Kept this conversation" in str(n.render()) for n in app.query(Notice))
        app.action_handoff()
        await wait_for(pilot, lambda: showing(app, HandoffScreen, "#handoff-text"), what="the editor again")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.core.agent.trajectory.run == 2 and run_over(app), what="the fresh conversation")
        assert app.core.agent.messages[-1]["content"] == "fresh" and app.status.session_tokens > app.status.context_used
