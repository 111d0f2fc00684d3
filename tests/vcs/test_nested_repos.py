"""Nested git repositories a session creates (``git init x`` inside the working tree, not a
submodule in the person's index): checkpoints leave them out and never fail or run code because
of them; review and ``--commit`` make them loud. Real git, temp folders."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.commit import CommitFailed
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession, commit_session_changes
from frogtui.vcs.snapshot import snapshot
from tests.vcs.cases import git

BASH = ToolCall(id="c1", name="Bash", arguments={"command": "…"})


@pytest.fixture
def repo(py_repo: Path) -> Path:
    """calc.py and test_calc.py, committed."""
    return py_repo


def nested(folder: Path, *, commit: bool) -> None:
    """A repository of its own in ``folder``, with one commit or none."""
    folder.mkdir(parents=True)
    git(folder, "init", "-q")
    if commit:
        (folder / "y.txt").write_text("y\n")
        git(folder, "add", "y.txt")
        git(folder, "-c", "user.name=m", "-c", "user.email=m@example.invalid", "commit", "-q", "-m", "inner")


def test_an_empty_nested_repository_does_not_break_checkpoints(repo: Path) -> None:
    state = discover(repo, "empty")
    checkpoints = Checkpoints(state)
    nested(repo / "x", commit=False)
    (repo / "g.txt").write_text("g\n")
    checkpoints.before_action(1, BASH)
    taken = checkpoints.taken[-1]
    assert taken.nested == ("x",)
    assert git(repo, "ls-tree", "--name-only", taken.tree).split() == ["calc.py", "g.txt", "test_calc.py"]


def test_a_nested_repository_is_left_out_of_the_snapshot_not_recorded_as_a_gitlink(repo: Path) -> None:
    nested(repo / "deep" / "y", commit=True)
    (repo / "deep" / "z.txt").write_text("z\n")
    taken = snapshot(discover(repo, "gitlink").repo)
    assert taken.nested == ("deep/y",)
    assert "deep/z.txt" in git(repo, "ls-tree", "-r", "--name-only", taken.tree).split()
    assert "160000" not in git(repo, "ls-tree", "-r", taken.tree)


def test_a_submodule_in_the_persons_index_stays_a_gitlink(repo: Path, tmp_path: Path) -> None:
    nested(tmp_path / "lib", commit=True)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(tmp_path / "lib"), "lib")
    git(repo, "commit", "-q", "-m", "sub")
    taken = snapshot(discover(repo, "sub").repo)
    assert taken.nested == () and "160000 commit" in git(repo, "ls-tree", taken.tree, "lib")


def test_a_start_with_a_nested_repository_works_and_records_it(repo: Path) -> None:
    nested(repo / "x", commit=False)
    state = discover(repo, "start")
    assert state is not None and state.start_nested == ("x",)


def test_review_and_commit_refuse_a_run_that_created_a_nested_repository(repo: Path) -> None:
    nested(repo / "old", commit=False)  # there before the session: not the run's doing
    state = discover(repo, "loud")
    (repo / "calc.py").write_text("changed\n")
    nested(repo / "nest", commit=False)
    git(repo / "nest", "config", "core.fsmonitor", "touch X")
    review = ReviewSession(state)
    review.load()
    assert review.nested_created() == ["nest"]
    with pytest.raises(CommitFailed) as caught:
        commit_session_changes(state, None)
    assert "nest" in str(caught.value) and "old" not in str(caught.value) and "\n" not in str(caught.value)
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == " M calc.py\n"  # changes kept


@pytest.mark.parametrize("name", ["a*", ":(top)b", "sp ace/in[n]er", "ünï"])
def test_odd_names_of_empty_nested_repositories_are_left_out_exactly(repo: Path, name: str) -> None:
    nested(repo / name, commit=False)
    (repo / "a.txt").write_text("kept\n")  # matched by the glob a*, must not be excluded with it
    taken = snapshot(discover(repo, "odd").repo)
    assert taken.nested == (name,)
    assert git(repo, "ls-tree", "-r", "--name-only", taken.tree).split() == ["a.txt", "calc.py", "test_calc.py"]


@pytest.mark.parametrize("commit", [True, False])
def test_frogtuis_git_runs_nothing_a_nested_repository_configures(repo: Path, tmp_path: Path, commit: bool) -> None:
    state = discover(repo, "quiet")
    marker = tmp_path / "PWNED"
    nested(repo / "nest", commit=commit)
    git(repo / "nest", "config", "core.fsmonitor", f"touch {marker}")
    hook = repo / "nest" / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    ReviewSession(state).load()
    checkpoints.rewind(1)
    assert checkpoints.taken[-1].nested == ("nest",) and not marker.exists()
