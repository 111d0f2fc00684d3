"""The approval modal for a command that ran as a proposal (real app, Pilot, real bubblewrap on a
real overlay): it shows the command's output and each effect with its diff, deletions included
(a changed text file as the review's hunks); ``y`` applies them all, ``n`` applies none and the
model is told; a hunk rejected with space is left out of its file, exactly."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Checkbox

from frogtui.agent.saved import Conversation
from frogtui.config import Config
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.diffview import DiffView
from frogtui.ui.proposal_hunks import ProposalHunks
from tests.overlay import WAYS, needs_overlay
from tests.support import git, turn, write_replay, xml_call
from tests.ui.conftest import SIZE, fake_clock, submit, wait_for

pytestmark = needs_overlay

COMMAND = "sed -i 's/a - b/a + b/' calc.py && rm test_calc.py && echo edited"


def app_for(py_repo: Path, home: Path, way: str = "auto") -> FrogApp:
    replay = write_replay(home / "replay.jsonl", [turn("Fix.", xml_call("Bash", command=COMMAND)), turn("Done.", answer="ok")])
    rules = home / "rules.toml"
    rules.write_text(f'[bash]\nread_only = false\nproposals = "{way}"\n')  # the sandbox on (bwrap), proposals on (the default)
    return FrogApp(Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules), clock=fake_clock())


def drawn_hunks(screen: object) -> bool:
    """The modal's hunk view is drawn (at its first resize, once its width is known)."""
    views = screen.query(ProposalHunks)  # type: ignore[attr-defined]
    return bool(views) and bool(views.first().rows)


def tool_messages(app: FrogApp) -> list[str]:
    assert app.core.agent is not None
    return [m["content"] for m in app.core.agent.messages if m["role"] == "tool"]


@pytest.mark.parametrize("way", WAYS)  # the fallbacks (fuse-overlayfs, run then undo) show and land the same
async def test_the_modal_shows_what_the_command_did_and_y_applies_it(py_repo: Path, home: Path, way: str) -> None:
    app = app_for(py_repo, home, way)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query(".proposal-diff"), what="the modal")
        assert app.core.proposals_line.startswith(("proposals: on", "proposals: WARNING on")), app.core.proposals_line
        screen = app.screen
        assert "apply what Bash did" in screen.query_one("#approval-dialog").border_title
        assert "edited" in screen.query_one("#approval-output").render().plain
        effects = [str(box.label) for box in screen.query(Checkbox)]
        assert effects == ["modified calc.py: needs a person (Write: ask (default))",
                           "deleted test_calc.py: needs a person (Write: ask (default))"]
        diffs = {view.diff.path: view.diff for view in screen.query(DiffView)}
        assert set(diffs) == {"test_calc.py"}, "a deletion is taken whole, its old text shown"
        assert diffs["test_calc.py"].removed == len((py_repo / "test_calc.py").read_text().splitlines()), "every deleted line shown"
        (hunks,) = screen.query(ProposalHunks)  # a changed text file: as the review's hunks
        assert hunks.file.path == "calc.py" and [(g.removed, g.added) for g in hunks.file.groups] == [(("    return a - b\n",),
                                                                                                       ("    return a + b\n",))]
        assert tool_messages(app) == [], "the model sees nothing before the decision"
        assert (py_repo / "test_calc.py").exists() and "a - b" in (py_repo / "calc.py").read_text()
        await pilot.press("y")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    assert "a + b" in (py_repo / "calc.py").read_text() and not (py_repo / "test_calc.py").exists()
    (observation,) = tool_messages(app)
    assert observation.startswith("Exit code: 0") and "edited" in observation
    checkpoint = app.core.next_undo()  # the landing is one checkpointed step: undo puts the tree back
    assert checkpoint is not None and checkpoint.tool == "Bash"
    app.core.undo(checkpoint)
    assert "a - b" in (py_repo / "calc.py").read_text() and (py_repo / "test_calc.py").exists()


@pytest.mark.parametrize("way", WAYS)
async def test_n_rejects_and_the_model_is_told_what_was_not_applied(py_repo: Path, home: Path, way: str) -> None:
    app = app_for(py_repo, home, way)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    assert (py_repo / "test_calc.py").exists() and "a - b" in (py_repo / "calc.py").read_text()
    (observation,) = tool_messages(app)
    assert observation.startswith("The user denied this tool call. Reason: this command ran as a proposal")
    assert "the user rejected its changes" in observation
    assert "deleted test_calc.py" in observation and "edited" in observation


async def test_an_unticked_effect_is_left_out_and_the_model_is_told(py_repo: Path, home: Path) -> None:
    app = app_for(py_repo, home)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query(".proposal-diff"), what="the modal")
        app.screen.query_one("#proposal-pick-1", Checkbox).value = False  # the deletion of test_calc.py
        await pilot.press("y")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    assert "a + b" in (py_repo / "calc.py").read_text() and (py_repo / "test_calc.py").exists()
    (observation,) = tool_messages(app)
    assert observation.startswith("Note: this command ran as a proposal") and "not applied: deleted test_calc.py" in observation


async def test_x_runs_the_command_for_real_instead(py_repo: Path, home: Path) -> None:
    """For a command that needs what a proposal lacks (the network, when the sandbox has it): run
    it directly, checkpointed, as an allowed command runs."""
    app = app_for(py_repo, home)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query(".proposal-diff"), what="the modal")
        await pilot.press("x")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    assert "a + b" in (py_repo / "calc.py").read_text() and not (py_repo / "test_calc.py").exists()
    (observation,) = tool_messages(app)
    assert observation.startswith("Exit code: 0") and "edited" in observation
    assert app.core.next_undo() is not None, "checkpointed like any command"


@pytest.mark.parametrize("way", WAYS)
async def test_space_rejects_one_of_two_hunks_and_the_file_gets_exactly_the_other(py_repo: Path, home: Path, way: str) -> None:
    """On each way a proposal runs (a kernel overlay, fuse-overlayfs, or run in place and undone)."""
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a / b\n")
    git(py_repo, "commit", "-qam", "mul")
    command = "sed -i -e 's/a - b/a + b/' -e 's|a / b|a * b|' calc.py && echo edited"
    replay = write_replay(home / "replay.jsonl", [turn("Fix.", xml_call("Bash", command=command)), turn("Done.", answer="ok")])
    rules = home / "rules.toml"
    rules.write_text(f'[bash]\nread_only = false\nproposals = "{way}"\n')
    app = FrogApp(Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules), clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and drawn_hunks(app.screen), what="the modal")
        screen = app.screen
        view = screen.query_one(ProposalHunks)
        assert [h.label.split(" · ")[0] for h in view.file.review_hunks] == ["@@ -1,6 +1,6 @@"] * 2, "one hunk per change"
        drawn = view.render().plain
        assert "a - b" in drawn and "a + b" in drawn and "a / b" in drawn and "a * b" in drawn, "every line, deletions too"
        assert ("space", "accept/reject the hunk", None) in screen.query_one("#approval-keys").items
        await pilot.press("tab", "tab")
        assert screen.focused is view, screen.focused
        await pilot.press("space")  # the first hunk (a - b -> a + b) rejected
        await pilot.pause()
        assert [g.accepted for g in view.file.groups] == [False, True] and "[rejected]" in view.render().plain
        assert screen.query_one("#proposal-pick-0", Checkbox).value, "the file stays ticked: one of its hunks is accepted"
        await pilot.press("down", "space", "space", "up")  # the second toggled twice: accepted again
        assert [g.accepted for g in view.file.groups] == [False, True] and view.cursor is view.file.review_hunks[0]
        await pilot.press("y")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    assert (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    (observation,) = tool_messages(app)
    where = "on the working tree, and its changes were taken back until approved" if way == "undo" else "on a copy of the repository"
    assert observation.startswith(f"Note: this command ran as a proposal, {where}; its changes to calc.py were "
                                  "applied except 1 of 2 hunks (line 2)\nExit code: 0"), observation
    saved = Conversation.read(json.loads(app.core.trajectory_file().read_text()))  # the session's file, as a resume reads it
    ((hunks,),) = [a.hunks for a in saved.approvals() if a.hunks]
    assert hunks.path == "calc.py" and hunks.rejected == ((1, 2, 1, 2),) and hunks.accepted == ((5, 6, 5, 6),)


async def test_unticking_a_file_rejects_its_hunks_and_rejecting_all_unticks_it(py_repo: Path, home: Path) -> None:
    app = app_for(py_repo, home)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and drawn_hunks(app.screen), what="the modal")
        screen = app.screen
        view, box = screen.query_one(ProposalHunks), screen.query_one("#proposal-pick-0", Checkbox)
        box.value = False
        await pilot.pause()
        assert view.accepted is False
        box.value = True
        await pilot.pause()
        assert view.accepted is True
        view.focus()
        await pilot.press("space")
        await pilot.pause()
        assert view.accepted is False and not box.value
        await pilot.press("y")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    assert "a - b" in (py_repo / "calc.py").read_text() and not (py_repo / "test_calc.py").exists()
    (observation,) = tool_messages(app)
    assert "not applied: modified calc.py" in observation
