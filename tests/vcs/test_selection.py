"""Random selections of hunks over a real multi-file diff with every hard case: the commit
frogtui makes is exactly what ``git apply --cached`` of the same selected hunks gives, and what
was not selected is neither committed nor lost."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogtui.vcs.hunks import HunkSelection
from frogtui.vcs.repository import discover, run_git, temporary_index, tree_of
from frogtui.vcs.review import ReviewSession
from frogtui.vcs.snapshot import snapshot_tree
from tests.vcs.cases import git, make_base_repo, make_session_changes

TEMPLATE: dict[str, Path] = {}


def fresh_repo(base: Path) -> Path:
    """A copy of the prepared repository (base commit + session changes, start recorded), in a new
    folder under ``base`` (the test's ``tmp_path``: pytest removes it, nothing is left in /tmp)."""
    if "path" not in TEMPLATE:
        root = base / "template" / "repo"
        make_base_repo(root)
        TEMPLATE["path"] = root
    target = Path(tempfile.mkdtemp(prefix="example-", dir=base)) / "repo"
    shutil.copytree(TEMPLATE["path"], target, symlinks=True)
    return target


def applied_tree(review: ReviewSession, selection: HunkSelection, head: str) -> str:
    """The tree ``git apply --cached`` of the selection's patch makes on HEAD (the oracle)."""
    with temporary_index(review.repo, tree_of(review.repo, head)) as env:
        run_git(review.repo, "apply", "--cached", "--binary", env=env, stdin=selection.to_patch())
        return run_git(review.repo, "write-tree", env=env).decode().strip()


def blob(repo: Path, treeish: str, path: str) -> str | None:
    out = git(repo, "ls-tree", "-z", treeish, "--", path)
    return out.split("\t")[0] if out else None


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_selection_commits_exactly_the_selected_hunks(tmp_path: Path, data: st.DataObject) -> None:
    repo = fresh_repo(tmp_path)
    state = discover(repo, "prop")
    assert state is not None
    make_session_changes(repo)
    review = ReviewSession(state, trailer="Assisted-by: test")
    selection = review.load()
    # split some hunks first, as a person would
    for change in selection.files:
        for hunk in list(change.review_hunks):
            if hunk.can_split and data.draw(st.booleans(), label=f"split {change.path}"):
                change.split(hunk)
    groups = selection.groups()
    chosen = data.draw(st.lists(st.booleans(), min_size=len(groups), max_size=len(groups)), label="accepted")
    for (_, group), keep in zip(groups, chosen, strict=True):
        group.accepted = keep
    if not any(chosen):
        chosen[0] = True
        groups[0][1].accepted = True
    head = git(repo, "rev-parse", "HEAD").strip()
    worktree = snapshot_tree(state.repo)
    expected = applied_tree(review, selection, head)

    result = review.commit(selection, "Test commit\n\nbody")

    assert git(repo, "rev-parse", f"{result.sha}^{{tree}}").strip() == expected
    assert git(repo, "rev-parse", f"{result.sha}^").strip() == head
    for change in selection.files:
        if not any(g.accepted for g in change.groups):
            assert blob(repo, result.sha, change.path) == blob(repo, head, change.path), change.path
        elif change.accepted and change.status != "deleted":
            assert blob(repo, result.sha, change.path) == blob(repo, worktree, change.path), change.path
    # nothing in the working tree changed, and committing the rest gives the working tree
    assert snapshot_tree(state.repo) == worktree
    rest = review.load()
    for _, group in rest.groups():
        group.accepted = True
    if rest.accepted_count:
        second = review.commit(rest, "The rest")
        assert git(repo, "rev-parse", f"{second.sha}^{{tree}}").strip() == worktree
    else:
        assert git(repo, "rev-parse", "HEAD^{tree}").strip() == worktree


def test_everything_selected_commits_the_working_tree(tmp_path: Path) -> None:
    repo = make_base_repo(tmp_path / "repo")
    state = discover(repo, "all")
    make_session_changes(repo)
    review = ReviewSession(state)
    selection = review.load()
    assert {f.path for f in selection.files} >= {
        "renamed.py",
        "rename_me.py",
        "img.bin",
        "crlf.txt",
        'we"ird.txt',
        "dir with space/new file ü.txt",
        "empty.txt",
        "link",
        "run.sh",
    }
    assert "debug.log" not in {f.path for f in selection.files}
    result = review.commit(selection, "Everything")
    assert git(repo, "rev-parse", "HEAD^{tree}").strip() == snapshot_tree(state.repo)
    assert git(repo, "show", "HEAD:crlf.txt").encode() == b"one\r\nTWO\r\nthree\r\nfour\r\nfive\r\n"
    assert git(repo, "ls-tree", "HEAD", "run.sh").startswith("100755")
    assert git(repo, "log", "-1", "--format=%B").strip().endswith("Assisted-by: frogtui")
    assert result.paths and "debug.log" not in result.paths
    # the index follows the commit: git status shows no staged change
    assert git(repo, "diff", "--cached", "--name-only").strip() == ""


def test_split_hunk_selects_one_group(tmp_path: Path) -> None:
    repo = make_base_repo(tmp_path / "repo")
    state = discover(repo, "split")
    make_session_changes(repo)
    review = ReviewSession(state)
    selection = review.load()
    many = next(f for f in selection.files if f.path == "many.txt")
    first = many.review_hunks[0]
    assert first.can_split and len(first.group_ids) == 2
    pieces = many.split(first)
    assert len(pieces) == 2 and not pieces[0].can_split
    selection_off = [f for f in selection.files if f is not many]
    for change in selection_off:
        change.set_accepted(False)
    many.set_accepted(False)
    pieces[1].toggle()
    review.commit(selection, "Only line 9")
    committed = git(repo, "show", "HEAD:many.txt")
    assert "line nine\nline 9b\n" in committed and "line 5\n" in committed and "line 30\n" in committed
    assert git(repo, "diff", "--stat", "HEAD~1", "HEAD").count("|") == 1
