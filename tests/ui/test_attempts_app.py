"""Attempts in the app (``/attempts N TASK``, the palette's "Run as N attempts"): the real app on a
real git repository with a replay model (attempt 1 plays the first turns, attempt 2 the next), the
results screen at 80 and 120 columns, the pick applied as one step that undo takes back."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import Future
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from frogtui.approval.decision import Decision
from frogtui.config import Config, sessions_dir
from frogtui.protocol import ApprovalRequest, ToolCall
from frogtui.session import Session
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.attempts_run import USAGE, AttemptAsks, parse
from frogtui.ui.attempts_screen import AttemptsScreen
from frogtui.ui.check_screen import CheckScreen
from frogtui.ui.diffview import DiffView
from frogtui.ui.messages import ApprovalRequested
from tests.support import git, turn, write_replay, xml_call
from tests.test_attempts import fix_turns, person_state
from tests.ui.conftest import fake_clock, rules_file, submit, wait_for

ORIGINAL = "def add(a, b):\n    return a - b\n"


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
@pytest.mark.parametrize("width", [80, 120])
async def test_attempts_table_and_diffs_then_the_pick_is_one_undoable_step(make_app, py_repo: Path, width: int, monkeypatch) -> None:
    monkeypatch.delenv("CI", raising=False)  # the check's pytest writes its report otherwise under CI=true (its summary line moves)
    app = make_app(fix_turns("a * b", "a + b"), approve="all")
    before = person_state(py_repo)
    async with app.run_test(size=(width, 40)) as pilot:
        await submit(pilot, "/attempts 2 fix add")
        await wait_for(pilot, lambda: isinstance(app.screen, CheckScreen), what="the proposed check, to confirm")
        assert app.screen.query_one("#check-command").value == "python -m pytest -q"
        await pilot.press("enter")  # confirmed as proposed
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptsScreen), timeout=120, what="the attempts' results")
        assert person_state(py_repo) == before, "nothing of either attempt is in the working tree before the pick"
        screen = app.screen
        await wait_for(pilot, lambda: screen.query(DataTable) and screen.query_one(DataTable).row_count == 2, what="the table")
        table = screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[:5] for row in rows] == [["1", "failed", "1", "+1", "-1"], ["2", "passed", "2", "+2", "-1"]]
        assert "python -m pytest -q" in str(screen.query_one("#attempts-title", Static).render())
        await wait_for(pilot, lambda: screen.query(DiffView), what="attempt 1's diff")
        await wait_for(pilot, lambda: screen.query_one(DiffView).region.width > 0, what="the diff laid out")
        diff = screen.query_one(DiffView)
        assert diff.diff.path == "calc.py" and "return a * b" in diff.diff.new_lines[1]
        assert "FAILED test_calc.py::test_add" in str(screen.query_one("#attempts-tail", Static).render())
        if width >= 110:  # the diff beside the table
            assert diff.region.x >= table.region.right and diff.region.y <= table.region.bottom
        else:  # below it
            assert diff.region.y >= table.region.bottom and diff.region.width >= width - 2
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.shown == 2, what="attempt 2 shown")
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: "file 2 of 2" in str(screen.query_one("#attempts-file", Static).render()), what="the next file")
        assert screen.query_one(DiffView).diff.path == "calc.py"  # git orders NOTE.txt first
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Applied attempt 2" in " ".join(str(n.render()) for n in app.chat.query("Notice")),
                       what="the pick applied")
        assert (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
        assert (py_repo / "NOTE.txt").read_text() == "from attempt two\n"
        assert git(py_repo, "diff", "--cached") == ""
        app.action_undo()  # the pick is one step of the session: undo takes it back
        await wait_for(pilot, lambda: (py_repo / "calc.py").read_text() == ORIGINAL and not (py_repo / "NOTE.txt").exists(),
                       what="the undo")


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
async def test_none_picked_leaves_the_tree_and_always_allow_holds_for_every_attempt(make_app, py_repo: Path) -> None:
    edit = turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b"))
    app = make_app([edit, turn("", answer="one"), edit, turn("", answer="two")])  # --approve policy: an Edit is asked about
    before = person_state(py_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await submit(pilot, '/attempts 2 --check "python -m pytest -q" fix add')  # given: not asked
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query("#approval-dialog"), timeout=60,
                       what="attempt 1's question")  # (its dialog mounted: under load the screen comes a frame before it)
        assert "Attempt 1 of 2" in str(app.screen.query_one("#approval-dialog").border_title)  # the modal names the attempt
        await pilot.press("a")  # always allow: attempt 2's same edit is not asked about
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptsScreen), timeout=120, what="the attempts' results")
        screen = app.screen
        await wait_for(pilot, lambda: screen.query(DataTable) and screen.query_one(DataTable).row_count == 2, what="the table")
        table = screen.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[1] for row in rows] == ["passed", "passed"] and "=#1" in rows[1][-1]  # the same patch, grouped
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, AttemptsScreen), what="the screen closed")
        assert person_state(py_repo) == before


@pytest.mark.parametrize(("text", "expected"), [
    ("/attempts 4 fix it", (4, "fix it", None)),
    ('/attempts 2 --check "python -m pytest -q" fix it', (2, "fix it", "python -m pytest -q")),
    ("/attempts 2 --check 'npm test' fix it", (2, "fix it", "npm test")),
    ("/attempts 2 --check=true fix --check it", (2, "fix --check it", "true")),
    ("/attempts 2 fix --check it", (2, "fix --check it", None)),
    ('/attempts 2 --check "" fix it', 'The check is empty: give the command that checks an attempt, e.g. --check "python -m pytest -q".'),
    ('/attempts 2 --check "true"', "Say what the 2 attempts should do: /attempts 2 TASK."),
    ('/attempts 2 --check "unclosed fix it', USAGE),
    ("/attempts 9 fix it", USAGE),
    ("/attempts 2", "Say what the 2 attempts should do: /attempts 2 TASK."),
    ("/attemptsx 2 y", None),
    ("fix /attempts 2 y", None),
])
def test_parse(text: str, expected: object) -> None:
    assert parse(text) == expected


async def test_the_palette_entry_starts_the_prompt_with_the_prefix(make_app) -> None:
    app = make_app([])
    async with app.run_test(size=(80, 30)) as pilot:
        prompt = app.query_one("#prompt")
        prompt.value = "fix the test"
        app.action_attempts()
        await pilot.pause()
        assert prompt.value == "/attempts 4 fix the test"
        await submit(pilot, "/attempts 9 fix")
        await pilot.pause()
        assert prompt.value == "/attempts 9 fix" and any("N from 1 to 8" in n.message for n in app._notifications)


def _rows(screen: AttemptsScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_proposed_check_is_edited_at_80x24_and_the_edited_command_decides(make_app, py_repo: Path) -> None:
    app = make_app(fix_turns("a * b", "a + b"), approve="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "/attempts 2 fix add")
        await wait_for(pilot, lambda: isinstance(app.screen, CheckScreen), what="the proposed check")
        screen = app.screen
        box = screen.query_one("#check-command")
        assert box.value == "python -m pytest -q" and box.has_focus
        keys = screen.query_one("#check-keys")
        assert keys.region.bottom <= 24 and keys.region.right <= 80 and "run without a check" in str(keys.render())
        box.value = ""
        await pilot.press(*"test -f NOTE.txt")  # typed: only attempt 2 writes NOTE.txt
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptsScreen), timeout=120, what="the attempts' results")
        results = app.screen
        await wait_for(pilot, lambda: results.query(DataTable) and results.query_one(DataTable).row_count == 2, what="the table")
        assert [row[1] for row in _rows(results)] == ["failed", "passed"]
        assert "test -f NOTE.txt" in str(results.query_one("#attempts-title", Static).render())


async def test_the_check_declined_runs_without_one_and_esc_runs_nothing(make_app, py_repo: Path) -> None:
    app = make_app(fix_turns("a * b", "a + b"), approve="all")
    before = person_state(py_repo)
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, "/attempts 2 fix add")
        await wait_for(pilot, lambda: isinstance(app.screen, CheckScreen), what="the proposed check")
        await pilot.press("escape")  # not run: the command is back in the prompt
        await wait_for(pilot, lambda: not isinstance(app.screen, CheckScreen), what="the question closed")
        assert app.query_one("#prompt").value == "/attempts 2 fix add" and not app.busy
        assert not list(sessions_dir().glob("*/attempts.json")) and person_state(py_repo) == before
        await submit(pilot, "/attempts 2 fix add")
        await wait_for(pilot, lambda: isinstance(app.screen, CheckScreen), what="the proposed check, again")
        await pilot.press("ctrl+n")  # run without a check
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptsScreen), timeout=120, what="the attempts' results")
        results = app.screen
        await wait_for(pilot, lambda: results.query(DataTable) and results.query_one(DataTable).row_count == 2, what="the table")
        assert [row[1] for row in _rows(results)] == ["-", "-"]
        assert "check: none" in str(results.query_one("#attempts-title", Static).render())


def _question(number: int, command: str) -> AttemptAsks:
    """Attempt ``number`` of 2 asks about ``command`` (what its approver would post)."""
    request = ApprovalRequest(ToolCall(id=f"c{number}", name="Bash", arguments={"command": command}), step=1, root="/tmp")
    return AttemptAsks(number, 2, ApprovalRequested(request, Decision("ask", "Bash: ask (default)", ""), "", True, Future()))


async def test_questions_of_attempts_at_once_queue_in_one_modal_that_names_the_attempt(make_app) -> None:
    app = make_app([])
    first, second = _question(1, "echo one"), _question(2, "echo two")
    async with app.run_test(size=(80, 24)) as pilot:
        app.post_message(first)
        app.post_message(second)  # asked while attempt 1's question is open
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the first question")
        await pilot.pause()
        assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1, "one modal, never stacked"
        assert "Attempt 1 of 2" in str(app.screen.query_one("#approval-dialog").border_title)
        await pilot.press("y")
        await wait_for(pilot, lambda: first.request.future.done(), what="attempt 1 answered")
        assert first.request.future.result().choice == "once" and not second.request.future.done()
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.asked is second.request,
                       what="attempt 2's question, next")
        assert sum(isinstance(s, ApprovalScreen) for s in app.screen_stack) == 1
        assert "Attempt 2 of 2" in str(app.screen.query_one("#approval-dialog").border_title)
        await pilot.press("n")
        await wait_for(pilot, lambda: second.request.future.done(), what="attempt 2 answered")
        assert second.request.future.result().choice == "deny"
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal closed")


def _resumed(home: Path, py_repo: Path, session: Session) -> FrogApp:
    follow = write_replay(home / "follow.jsonl", [turn("", answer="nothing more")])
    config = Config(repo=py_repo, model_spec=f"replay:{follow}", theme="frog-dark", rules_file=rules_file(home), approve="all")
    return FrogApp(config, resume=session, clock=fake_clock())


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
async def test_resume_reopens_the_table_of_the_last_task_run_as_attempts_and_a_pick_from_it_applies(
        make_app, py_repo: Path, home: Path) -> None:
    app = make_app(fix_turns("a * b", "a + b"), approve="all")
    async with app.run_test(size=(80, 24)) as pilot:
        await submit(pilot, '/attempts 2 --check "python -m pytest -q" fix add')
        await wait_for(pilot, lambda: isinstance(app.screen, AttemptsScreen), timeout=120, what="the attempts' results")
        await pilot.press("n")  # none applied
        session = app.session
    resumed = _resumed(home, py_repo, session)
    async with resumed.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(resumed.screen, AttemptsScreen), timeout=30, what="the table, reopened")
        screen = resumed.screen
        await wait_for(pilot, lambda: screen.query(DataTable) and screen.query_one(DataTable).row_count == 2, what="the table")
        assert [row[:2] for row in _rows(screen)] == [["1", "failed"], ["2", "passed"]]
        assert "reopened: none was applied" in str(screen.query_one("#attempts-title", Static).render())
        await wait_for(pilot, lambda: screen.query(DiffView), what="attempt 1's diff")
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.shown == 2, what="attempt 2 shown")
        await pilot.press("enter")
        await wait_for(pilot, lambda: (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n", what="the pick applied")
        assert (py_repo / "NOTE.txt").read_text() == "from attempt two\n" and git(py_repo, "diff", "--cached") == ""
        await submit(pilot, "anything more?")  # a plain task: the next resume no longer reopens the table
        await wait_for(pilot, lambda: resumed.status.state == "ready" and resumed.core.agent is not None, what="the plain task")
    assert not (session.folder / "last_attempts.json").exists()
    (record,) = list(sessions_dir().glob("*/attempts.json"))
    assert json.loads(record.read_text())["picked"] == 2


async def test_resume_of_a_headless_attempts_session_shows_a_pruned_attempt_as_gone(py_repo: Path, home: Path) -> None:
    replay = write_replay(home / "r.jsonl", fix_turns("a * b", "a + b"))
    done = subprocess.run([sys.executable, "-m", "frogtui", "run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}",
                           "--approve", "all", "--attempts", "2", "--check", "python -m pytest -q"],
                          capture_output=True, text=True, timeout=180, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    (record,) = list(sessions_dir().glob("*/attempts.json"))
    parent = Session.by_id(record.parent.name)
    assert parent is not None
    git(py_repo, "branch", "-D", f"frogtui/{parent.id}/attempt-1")  # attempt 1's branch deleted, its commit pruned
    git(py_repo, "reflog", "expire", "--expire=now", "--all")
    git(py_repo, "gc", "-q", "--prune=now")
    before = (py_repo / "calc.py").read_text()
    resumed = _resumed(home, py_repo, parent)
    async with resumed.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(resumed.screen, AttemptsScreen), timeout=30, what="the table, reopened")
        screen = resumed.screen
        await wait_for(pilot, lambda: screen.query(DataTable) and screen.query_one(DataTable).row_count == 2, what="the table")
        rows = _rows(screen)
        assert rows[0][-1].endswith("gone") and not rows[1][-1].endswith("gone")
        await wait_for(pilot, lambda: screen.shown == 1, what="attempt 1 shown")
        assert "is gone" in str(screen.query_one("#attempts-file", Static).render())
        assert "no longer in the repository" in str(screen.query_one("#attempts-tail", Static).render())
        await pilot.press("enter")  # gone: nothing to apply, the table stays
        await pilot.pause()
        assert resumed.screen is screen and (py_repo / "calc.py").read_text() == before
        await pilot.press("down")
        await wait_for(pilot, lambda: screen.query(DiffView) and screen.shown == 2, what="attempt 2's diff")
        assert screen.query_one(DiffView).diff.path == "NOTE.txt"  # attempt 2's change: NOTE.txt, then calc.py
        assert "attempt 2 · file 1 of 2" in str(screen.query_one("#attempts-file", Static).render())
