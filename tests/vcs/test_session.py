"""A whole session against a real repository: checkpoints and rewind through the agent loop, the
person's own changes and index left alone, undo, hooks, identity, discard."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from frogtui.agent.loop import Agent
from frogtui.approval import Approver, PolicyEngine
from frogtui.config import sessions_dir
from frogtui.models.replay import ReplayModel
from frogtui.tools import ToolRunner, Workspace
from frogtui.vcs.checkpoints import Checkpoints, NoCheckpoint
from frogtui.vcs.commit import CommitFailed, NoIdentity
from frogtui.vcs.repository import discover, init_repo, not_a_repo_message
from frogtui.vcs.review import ConfirmationNeeded, ReviewSession
from frogtui.vcs.snapshot import snapshot_tree
from tests.support import turn, write_replay, xml_call
from tests.vcs.cases import git


class Quiet:
    def emit(self, event: object) -> None:
        pass


def run_agent(repo: Path, tmp_path: Path, turns: list[str], checkpoints: Checkpoints) -> None:
    model = ReplayModel(write_replay(tmp_path / "replay.jsonl", turns))
    workspace = Workspace(repo)
    approver = Approver(PolicyEngine.load(workspace, None), mode="all")
    agent = Agent(model, ToolRunner(workspace), approver, Quiet(), before_action=checkpoints.before_action)
    assert agent.run("do it").exit_reason == "agent"


@pytest.fixture
def dirty_repo(py_repo: Path) -> Path:
    """py_repo with the person's own work: a staged change, an unstaged one, an untracked file."""
    (py_repo / "README.md").write_text("readme\n")
    git(py_repo, "add", "README.md")
    git(py_repo, "commit", "-q", "-m", "readme")
    (py_repo / "README.md").write_text("readme, staged edit\n")
    git(py_repo, "add", "README.md")
    (py_repo / "test_calc.py").write_text((py_repo / "test_calc.py").read_text() + "# my note\n")
    (py_repo / "notes.txt").write_text("my untracked notes\n")
    (py_repo / ".gitignore").write_text("*.log\n")
    (py_repo / "keep.log").write_text("ignored, must survive\n")
    return py_repo


def person_state(repo: Path) -> tuple[str, str, str]:
    return (
        git(repo, "diff", "--cached"),
        git(repo, "ls-files", "-s", "README.md", "test_calc.py"),
        (repo / "test_calc.py").read_text() + (repo / "notes.txt").read_text() + (repo / "README.md").read_text(),
    )


def test_rewind_restores_a_tree_changed_by_bash(dirty_repo: Path, tmp_path: Path) -> None:
    state = discover(dirty_repo, "rw")
    checkpoints = Checkpoints(state)
    start = snapshot_tree(state.repo)
    turns = [
        turn("fix", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn(
            "shell",
            xml_call(
                "Bash",
                command="rm notes.txt && mkdir -p out/deep && echo hi > out/deep/made.txt && echo x >> calc.py && echo log > build.log",
            ),
        ),
    ]
    run_agent(dirty_repo, tmp_path, turns, checkpoints)
    assert [(c.step, c.tool) for c in checkpoints.taken] == [(1, "Edit"), (2, "Bash")]
    assert not (dirty_repo / "notes.txt").exists() and (dirty_repo / "out/deep/made.txt").exists()

    result = checkpoints.rewind(2)
    assert result.removed == ["out/deep/made.txt"] and set(result.restored) == {"calc.py", "notes.txt"}
    assert (dirty_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not (dirty_repo / "out").exists()
    assert "step 2 (Bash)" in result.message and "out/deep/made.txt" in result.message
    assert (dirty_repo / "build.log").exists()  # ignored files are left alone

    checkpoints.rewind(1)
    assert snapshot_tree(state.repo) == start
    assert (dirty_repo / "keep.log").read_text() == "ignored, must survive\n"
    with pytest.raises(NoCheckpoint):
        checkpoints.rewind(7)
    # the person's index was never touched
    assert "readme, staged edit" in git(dirty_repo, "diff", "--cached")


def test_person_changes_and_index_survive_a_whole_session(dirty_repo: Path, tmp_path: Path) -> None:
    before = person_state(dirty_repo)
    state = discover(dirty_repo, "keep")
    checkpoints = Checkpoints(state)
    turns = [
        turn("fix", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("more", xml_call("Write", file_path="docs/usage.md", content="# Usage\n")),
        turn(
            "tests",
            xml_call(
                "Edit", file_path="test_calc.py", old_string="from calc import add\n", new_string="from calc import add  # the adder\n"
            ),
        ),
    ]
    run_agent(dirty_repo, tmp_path, turns, checkpoints)
    review = ReviewSession(state)
    selection = review.load()
    origins = {f.path: f.origin for f in selection.files}
    assert origins["calc.py"] == "session" and origins["docs/usage.md"] == "session"
    assert origins["README.md"] == "earlier" and origins["notes.txt"] == "earlier"
    test_file = next(f for f in selection.files if f.path == "test_calc.py")
    assert sorted(h.origin for h in test_file.review_hunks) == ["earlier", "session"]
    assert [h.accepted for h in test_file.review_hunks if h.origin == "earlier"] == [False]

    result = review.commit(selection, "Fix add")
    committed = git(dirty_repo, "show", "--stat", "--format=", "HEAD")
    assert set(result.paths) == {"calc.py", "docs/usage.md", "test_calc.py"}
    assert "README.md" not in committed and "notes.txt" not in committed
    assert "# my note" not in git(dirty_repo, "show", "HEAD:test_calc.py")
    # the person's staged change is still staged, their unstaged and untracked work still there
    staged, entries, text = person_state(dirty_repo)
    assert staged == before[0]
    assert text == before[2].replace("from calc import add\n", "from calc import add  # the adder\n")
    status = git(dirty_repo, "status", "--porcelain")
    assert "M  README.md" in status and " M test_calc.py" in status and "?? notes.txt" in status
    assert "calc.py" not in status.replace("test_calc.py", "")

    undo = review.undo_last_commit()
    assert undo.sha == result.sha and git(dirty_repo, "diff", "--cached") == before[0]
    assert (dirty_repo / "calc.py").read_text().endswith("a + b\n")
    assert " M calc.py" in git(dirty_repo, "status", "--porcelain")
    with pytest.raises(CommitFailed, match="no commit"):
        review.undo_last_commit()


def test_undo_refused_when_something_was_committed_on_top(py_repo: Path) -> None:
    state = discover(py_repo, "u")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    review = ReviewSession(state)
    review.commit(review.load(), "Fix")
    (py_repo / "other.txt").write_text("x\n")
    git(py_repo, "add", "other.txt")
    git(py_repo, "commit", "-q", "-m", "mine")
    assert "no longer HEAD" in (review.undo_problem() or "")
    with pytest.raises(CommitFailed):
        review.undo_last_commit()
    assert git(py_repo, "log", "-1", "--format=%s").strip() == "mine"


def test_undo_of_a_first_commit_leaves_an_unborn_branch(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    assert discover(repo, "x") is None and "not in a git repository" in not_a_repo_message(repo)
    init_repo(repo)
    state = discover(repo, "x")
    (repo / "a b.txt").write_text("hello\n")
    review = ReviewSession(state)
    review.commit(review.load(), "First")
    assert git(repo, "ls-files") == "a b.txt\n"
    review.undo_last_commit()
    assert git(repo, "ls-files") == "" and (repo / "a b.txt").read_text() == "hello\n"


def test_failing_pre_commit_hook_is_reported_and_nothing_lost(py_repo: Path) -> None:
    hook = py_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: calc.py is ugly' >&2\nexit 1\n")
    hook.chmod(0o755)
    state = discover(py_repo, "h")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    review = ReviewSession(state)
    head = git(py_repo, "rev-parse", "HEAD")
    with pytest.raises(CommitFailed) as caught:
        review.commit(review.load(), "Fix")
    assert "lint: calc.py is ugly" in str(caught.value)
    assert git(py_repo, "rev-parse", "HEAD") == head and git(py_repo, "diff", "--cached") == ""
    assert (py_repo / "calc.py").read_text().endswith("a + b\n")
    hook.write_text("#!/bin/sh\ngit diff --cached --name-only > ../hook-saw.txt\n")
    review.commit(review.load(), "Fix")
    assert (py_repo.parent / "hook-saw.txt").read_text() == "calc.py\n"  # the hook sees what is committed


def test_no_identity_says_how_to_set_it(py_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("[user]\n\tuseConfigOnly = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    state = discover(py_repo, "id")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    review = ReviewSession(state)
    with pytest.raises(NoIdentity, match="git config --global user.email"):
        review.commit(review.load(), "Fix")
    assert git(py_repo, "log", "--oneline").count("\n") == 1


def test_discard_needs_confirmation_and_keeps_earlier_changes(dirty_repo: Path) -> None:
    state = discover(dirty_repo, "d")
    (dirty_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    (dirty_repo / "scratch.py").write_text("print('tmp')\n")
    review = ReviewSession(state)
    selection = review.load()
    next(f for f in selection.files if f.path == "scratch.py").set_accepted(False)
    calc = next(f for f in selection.files if f.path == "calc.py")
    with pytest.raises(ConfirmationNeeded):
        review.discard_unaccepted(selection, confirm=False)
    assert (dirty_repo / "scratch.py").exists()
    result = review.discard_unaccepted(selection, confirm=True)
    assert result.paths == ["scratch.py"] and not (dirty_repo / "scratch.py").exists()
    assert calc.accepted and (dirty_repo / "calc.py").read_text().startswith("def add(a, b):\n    return a + b")
    assert (dirty_repo / "notes.txt").exists() and "# my note" in (dirty_repo / "test_calc.py").read_text()
    assert "readme, staged edit" in git(dirty_repo, "diff", "--cached")


def test_snapshot_sees_a_same_size_edit_made_in_the_second_the_index_was_written(tmp_path: Path) -> None:
    repo = tmp_path / "racy"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "initial")  # writes the index with this file's stat data
    state = discover(repo, "racy")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")  # same size, same second
    time.sleep(1.1)  # the snapshot's copy of the index is made in a later second
    tree = snapshot_tree(state.repo)
    assert git(repo, "show", f"{tree}:calc.py").endswith("return a + b\n")


def test_the_person_s_edits_during_the_session_are_theirs_and_not_accepted(py_repo: Path, tmp_path: Path) -> None:
    """Between the session's steps (an approval open, the run over) the person edits files: the
    review marks those changes as theirs, made during the session, and leaves them unaccepted; a
    file both changed mixes the two; what only the session changed is accepted."""
    (sessions_dir() / "during").mkdir(parents=True)  # the session's folder: its checkpoints' record
    state = discover(py_repo, "during")
    assert state is not None
    checkpoints = Checkpoints(state)

    def person_then_checkpoint(step: int, call) -> None:
        if step == 2:  # while step 2's call waited for approval
            (py_repo / "mine.txt").write_text("my own new file\n")
            (py_repo / "test_calc.py").write_text((py_repo / "test_calc.py").read_text() + "# mine\n")
            (py_repo / "new.txt").write_text((py_repo / "new.txt").read_text() + "mine too\n")
        checkpoints.before_action(step, call)

    model = ReplayModel(write_replay(tmp_path / "replay.jsonl", [
        turn("", xml_call("Write", file_path="new.txt", content="session\n")),
        turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("", answer="done"),
    ]))
    workspace = Workspace(py_repo)
    approver = Approver(PolicyEngine.load(workspace, None), mode="all")
    agent = Agent(model, ToolRunner(workspace), approver, Quiet(), before_action=person_then_checkpoint,
                  after_action=checkpoints.after_action)
    assert agent.run("do it").exit_reason == "agent"
    checkpoints.flush()
    (py_repo / "later.txt").write_text("after the run\n")
    selection = ReviewSession(state).load()
    origins = {f.path: {g.origin for g in f.groups} for f in selection.files}
    assert origins == {"calc.py": {"session"}, "new.txt": {"mixed"}, "test_calc.py": {"during"}, "mine.txt": {"during"},
                       "later.txt": {"during"}}
    accepted = {f.path for f in selection.files if any(g.accepted for g in f.groups)}
    assert accepted == {"calc.py"}
    # an undo is the session's doing: what it put back (and removed: later.txt) is not the person's
    checkpoints.rewind(2)
    selection = ReviewSession(state).load()
    origins = {f.path: {g.origin for g in f.groups} for f in selection.files}
    assert origins == {"new.txt": {"mixed"}, "test_calc.py": {"during"}, "mine.txt": {"during"}}


def test_a_commit_of_only_the_person_s_own_changes_has_no_assisted_by_trailer(py_repo: Path, tmp_path: Path) -> None:
    """The review commits what the person accepted: when none of it is the session's (their own
    edits, made before or during it), the commit does not say the model assisted; once a change of
    the session's is in it, the trailer is there."""
    (sessions_dir() / "mine").mkdir(parents=True)
    state = discover(py_repo, "mine")
    assert state is not None
    checkpoints = Checkpoints(state)
    trailer = "Assisted-by: SmolLM2-135M via frogtui"
    (py_repo / "test_calc.py").write_text((py_repo / "test_calc.py").read_text() + "# mine\n")  # no step ran yet
    review = ReviewSession(state, trailer=trailer)
    selection = review.load()
    assert {g.origin for f in selection.files for g in f.groups} == {"during"}
    for change in selection.files:
        for group in change.groups:
            group.accepted = True
    review.commit(selection, "Note in the tests")
    assert trailer not in git(py_repo, "log", "-1", "--format=%B")
    run_agent(py_repo, tmp_path, [turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
                                  turn("", answer="done")], checkpoints)
    checkpoints.flush()
    selection = review.load()
    assert {g.origin for f in selection.files for g in f.groups} == {"session"}
    review.commit(selection, "Fix add")
    assert git(py_repo, "log", "-1", "--format=%B").rstrip().endswith(trailer)
