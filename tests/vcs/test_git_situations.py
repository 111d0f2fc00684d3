"""The situations careful git users really have: unfinished merges, detached and unborn HEADs,
hidden index bits, sparse checkouts, broken filters, signing, hooks, worktrees, odd paths, and
rewinds over the person's own edits. Each against a real repository in a temp folder."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.commit import CommitFailed
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession
from frogtui.vcs.snapshot import SnapshotFailed
from tests.vcs.cases import git

BASH = ToolCall(id="c1", name="Bash", arguments={"command": "…"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """One commit holding f.txt = a/b/c."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "f.txt").write_text("a\nb\nc\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def hook(repo: Path, name: str, body: str) -> None:
    path = repo / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def test_commit_and_undo_are_refused_in_the_middle_of_a_merge(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "f.txt").write_text("a\nB other\nc\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "f.txt").write_text("a\nB main\nc\n")
    git(repo, "commit", "-q", "-am", "main")
    assert subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True).returncode == 1
    state = discover(repo, "merge")
    (repo / "new.txt").write_text("from the session\n")
    review = ReviewSession(state)
    selection = review.load()
    head, index = git(repo, "rev-parse", "HEAD"), git(repo, "ls-files", "-s")
    with pytest.raises(CommitFailed, match="a merge is in progress"):
        review.commit(selection, "Add new")
    # no merge commit holding only the session's file; the conflict is still the person's to resolve
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "ls-files", "-s") == index
    assert (repo / ".git" / "MERGE_HEAD").exists() and "UU f.txt" in git(repo, "status", "--porcelain")
    git(repo, "merge", "--abort")
    git(repo, "update-ref", "refs/worktree/frogtui/last-commit", "HEAD")  # as if frogtui made HEAD
    assert subprocess.run(["git", "merge", "-q", "other"], cwd=repo, capture_output=True).returncode == 1
    assert "a merge is in progress" in (review.undo_problem() or "")


def test_signing_without_a_key_says_so_and_loses_nothing(repo: Path) -> None:
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "user.signingkey", "NO-SUCH-KEY")
    git(repo, "config", "gpg.program", str(repo / "no-such-gpg"))
    state = discover(repo, "sign")
    (repo / "f.txt").write_text("a\nB\nc\n")
    review = ReviewSession(state)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(CommitFailed) as caught:
        review.commit(review.load(), "Change b")
    assert "could not sign the commit" in str(caught.value) and "git config commit.gpgsign false" in str(caught.value)
    assert "hook" not in str(caught.value).split("\n")[0]
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "diff", "--cached") == ""
    assert (repo / "f.txt").read_text() == "a\nB\nc\n"


def test_commit_msg_hook_rejection_is_shown_and_loses_nothing(repo: Path) -> None:
    hook(repo, "commit-msg", "echo 'subject must start with JIRA-' >&2\nexit 1\n")
    state = discover(repo, "msg")
    (repo / "f.txt").write_text("a\nB\nc\n")
    review = ReviewSession(state)
    with pytest.raises(CommitFailed, match="subject must start with JIRA-"):
        review.commit(review.load(), "Change b")
    assert git(repo, "log", "--format=%s") == "base\n" and (repo / "f.txt").read_text() == "a\nB\nc\n"


def test_a_pre_commit_hook_that_adds_files_is_reported(repo: Path) -> None:
    hook(repo, "pre-commit", "sed -i s/SESSION/formatted/ f.txt && git add f.txt\n")
    (repo / "f.txt").write_text("a\nb\nc\nmine\n")  # the person's own line, before the session
    state = discover(repo, "fmt")
    (repo / "f.txt").write_text("SESSION\nb\nc\nmine\n")
    review = ReviewSession(state)
    selection = review.load()
    assert [(h.origin, h.accepted) for h in selection.files[0].review_hunks] == [("session", True), ("earlier", False)]
    result = review.commit(selection, "Format")
    # the hook pulled in the rejected line: git did it, frogtui says so
    assert git(repo, "show", "HEAD:f.txt") == "formatted\nb\nc\nmine\n"
    assert any("A hook changed what was committed" in note and "f.txt" in note for note in result.notes)


def test_a_plain_commit_has_no_hook_note(repo: Path) -> None:
    state = discover(repo, "plain")
    (repo / "f.txt").write_text("a\nB\nc\n")
    review = ReviewSession(state)
    assert review.commit(review.load(), "B").notes == []


@pytest.mark.parametrize("bit", ["--assume-unchanged", "--skip-worktree"])
def test_edits_to_files_with_hidden_index_bits_are_checkpointed_and_reviewed(repo: Path, bit: str) -> None:
    git(repo, "update-index", bit, "f.txt")
    state = discover(repo, "bits")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "f.txt").write_text("agent edit\n")
    assert [f.path for f in ReviewSession(state).load().files] == ["f.txt"]
    result = checkpoints.rewind(1)
    assert result.restored == ["f.txt"] and (repo / "f.txt").read_text() == "a\nb\nc\n"
    tag = git(repo, "ls-files", "-v", "f.txt")[0]
    assert tag == ("h" if bit == "--assume-unchanged" else "S")  # the person's index keeps its bit


def test_sparse_checkout_commit_keeps_files_outside_the_cone(repo: Path) -> None:
    for name in ("in/x.txt", "out/y.txt"):
        (repo / name).parent.mkdir()
        (repo / name).write_text("1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "dirs")
    git(repo, "sparse-checkout", "set", "in")
    assert not (repo / "out").exists()
    state = discover(repo, "sparse")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "in/x.txt").write_text("2\n")
    review = ReviewSession(state)
    selection = review.load()
    assert [f.path for f in selection.files] == ["in/x.txt"]  # out/y.txt is not taken as deleted
    review.commit(selection, "x")
    assert git(repo, "show", "HEAD:out/y.txt") == "1\n"
    assert checkpoints.rewind(1).restored == ["in/x.txt"] and not (repo / "out").exists()


def test_a_filter_that_is_not_installed_gives_one_clear_message(repo: Path) -> None:
    git(repo, "config", "filter.lfs.clean", "git-lfs-not-installed clean -- %f")
    git(repo, "config", "filter.lfs.required", "true")
    (repo / ".gitattributes").write_text("*.dat filter=lfs\n")
    (repo / "big.dat").write_text("data\n")
    with pytest.raises(SnapshotFailed) as caught:
        discover(repo, "lfs")
    text = str(caught.value)
    assert "clean filter 'lfs' failed" in text and "installed" in text and "\n" not in text


def test_rewind_leaves_a_nested_repository_alone_and_says_so(repo: Path) -> None:
    state = discover(repo, "nested")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    inner = repo / "inner"
    inner.mkdir()
    (inner / "y.txt").write_text("x\n")
    git(inner, "init", "-q")
    git(inner, "add", ".")
    git(inner, "commit", "-q", "-m", "inner")
    (repo / "f.txt").write_text("changed\n")
    result = checkpoints.rewind(1)
    assert result.kept == ["inner"] and result.restored == ["f.txt"] and result.removed == []
    assert (inner / ".git").is_dir() and (inner / "y.txt").read_text() == "x\n"
    assert "inner" in result.message and "inner" in result.summary


def test_rewinds_never_overwrite_the_saved_tree_and_the_persons_edit_comes_back(repo: Path) -> None:
    state = discover(repo, "mine")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "f.txt").write_text("a\nagent\nc\n")
    checkpoints.before_action(2, BASH)
    (repo / "f.txt").write_text("a\nagent 2\nc\n")
    (repo / "mine.txt").write_text("the person's own note, written mid-session\n")
    first = checkpoints.rewind(2)
    assert not (repo / "mine.txt").exists() and "git restore --source=" in first.summary
    second = checkpoints.rewind(1)
    assert first.saved_ref != second.saved_ref
    assert git(repo, "show", f"{first.saved_ref}:mine.txt").startswith("the person's own note")
    assert git(repo, "show", f"{first.saved_ref}:f.txt") == "a\nagent 2\nc\n"
    git(repo, "restore", f"--source={first.saved_ref}", "--", "mine.txt")  # what the summary says to run
    assert (repo / "mine.txt").read_text().startswith("the person's own note")


def test_rewind_across_file_and_folder_swaps(repo: Path) -> None:
    (repo / "d").mkdir()
    (repo / "d/inside.txt").write_text("inside\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "d")
    state = discover(repo, "swap")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "f.txt").unlink()
    (repo / "f.txt").mkdir()
    (repo / "f.txt/new.txt").write_text("new\n")
    (repo / "d/inside.txt").unlink()
    (repo / "d").rmdir()
    (repo / "d").write_text("now a file\n")
    os.symlink("d", repo / "link")
    checkpoints.rewind(1)
    assert (repo / "f.txt").read_text() == "a\nb\nc\n" and (repo / "d/inside.txt").read_text() == "inside\n"
    assert not (repo / "link").is_symlink() and git(repo, "status", "--porcelain") == ""


def test_undo_is_per_worktree(repo: Path) -> None:
    git(repo, "worktree", "add", "-q", "-b", "side", str(repo.parent / "side"))
    side = repo.parent / "side"
    review_side = ReviewSession(discover(side, "s-side"))
    review_main = ReviewSession(discover(repo, "s-main"))
    (side / "f.txt").write_text("a\nside\nc\n")
    side_commit = review_side.commit(review_side.load(), "Side")
    (repo / "f.txt").write_text("a\nmain\nc\n")
    review_main.commit(review_main.load(), "Main")
    assert review_side.undo_problem() is None  # the main worktree's commit did not take it away
    assert review_side.undo_last_commit().sha == side_commit.sha
    assert git(side, "log", "--format=%s", "-1") == "base\n" and (side / "f.txt").read_text() == "a\nside\nc\n"
    assert git(repo, "log", "--format=%s", "-1") == "Main\n"


def test_undo_after_the_person_amended_is_refused(repo: Path) -> None:
    review = ReviewSession(discover(repo, "amend"))
    (repo / "f.txt").write_text("a\nB\nc\n")
    review.commit(review.load(), "B")
    git(repo, "commit", "-q", "--amend", "-m", "B, amended by me")
    assert "no longer HEAD" in (review.undo_problem() or "")
    with pytest.raises(CommitFailed):
        review.undo_last_commit()
    assert git(repo, "log", "--format=%s", "-1") == "B, amended by me\n"


def test_detached_head_commit_and_undo(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    base = git(repo, "rev-parse", "HEAD")
    review = ReviewSession(discover(repo, "detached"))
    (repo / "f.txt").write_text("a\nB\nc\n")
    review.commit(review.load(), "B")
    assert git(repo, "rev-parse", "HEAD") != base and git(repo, "branch", "--show-current") == ""
    review.undo_last_commit()
    assert git(repo, "rev-parse", "HEAD") == base and git(repo, "status", "--porcelain") == " M f.txt\n"


def test_unborn_branch_keeps_the_persons_staged_file_out(tmp_path: Path) -> None:
    root = tmp_path / "unborn"
    root.mkdir()
    git(root, "init", "-q")
    (root / "mine.txt").write_text("mine\n")
    git(root, "add", "mine.txt")
    review = ReviewSession(discover(root, "unborn"))
    (root / "a.txt").write_text("session\n")
    selection = review.load()
    assert {(f.path, f.accepted) for f in selection.files} == {("a.txt", True), ("mine.txt", False)}
    review.commit(selection, "First")
    assert git(root, "ls-tree", "--name-only", "HEAD") == "a.txt\n"
    assert git(root, "status", "--porcelain") == "A  mine.txt\n"


def test_partly_staged_file_keeps_the_staged_part_staged(repo: Path) -> None:
    lines = "".join(f"l{i}\n" for i in range(30))
    (repo / "g.txt").write_text(lines)
    git(repo, "add", "g.txt")
    git(repo, "commit", "-q", "-m", "g")
    staged = lines.replace("l2\n", "L2 staged\n")
    (repo / "g.txt").write_text(staged)
    git(repo, "add", "g.txt")  # as after `git add -p`: one hunk staged, one not
    (repo / "g.txt").write_text(staged.replace("l10\n", "L10 unstaged\n"))
    review = ReviewSession(discover(repo, "partial"))
    (repo / "g.txt").write_text((repo / "g.txt").read_text().replace("l25\n", "L25 session\n"))
    review.commit(review.load(), "Session line")
    assert git(repo, "show", "HEAD:g.txt") == lines.replace("l25\n", "L25 session\n")
    cached = git(repo, "diff", "--cached")
    assert "+L2 staged" in cached and "L10" not in cached and "L25" not in cached
    assert "+L10 unstaged" in git(repo, "diff")


def test_session_started_in_a_subfolder(repo: Path) -> None:
    (repo / "pkg").mkdir()
    (repo / "pkg/m.py").write_text("x = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "pkg")
    state = discover(repo / "pkg", "sub")
    assert state.root == repo
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "pkg/m.py").write_text("x = 2\n")
    (repo / "top.txt").write_text("t\n")
    assert [f.path for f in ReviewSession(state).load().files] == ["pkg/m.py", "top.txt"]
    assert checkpoints.rewind(1).removed == ["top.txt"] and git(repo, "status", "--porcelain") == ""


def test_paths_with_newlines_quotes_backslashes_and_tabs(repo: Path) -> None:
    names = ["new\nline.txt", 'q"uote.txt', "back\\slash.txt", "tab\there.txt", " lead.txt", "-dash.txt", ":colon*.txt"]
    for name in names:
        (repo / name).write_text("one\ntwo\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd names")
    state = discover(repo, "odd")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    for name in names:
        (repo / name).write_text("one\nTWO\n")
    (repo / "made\nby session.txt").write_text("x\n")
    review = ReviewSession(state)
    selection = review.load()
    assert sorted(f.path for f in selection.files) == sorted([*names, "made\nby session.txt"])
    next(f for f in selection.files if f.path == "tab\there.txt").set_accepted(False)
    result = review.commit(selection, "Odd")
    assert "tab\there.txt" not in result.paths and len(result.paths) == len(names)
    assert git(repo, "show", "HEAD:new\nline.txt") == "one\nTWO\n"
    assert git(repo, "status", "--porcelain", "-z") == " M tab\there.txt\0"
    rewound = checkpoints.rewind(1)
    assert rewound.removed == ["made\nby session.txt"] and (repo / "tab\there.txt").read_text() == "one\ntwo\n"
    review.undo_last_commit()
    assert git(repo, "status", "--porcelain") == "" and git(repo, "log", "--format=%s", "-1") == "odd names\n"


@pytest.mark.parametrize("setup", ["attributes", "autocrlf"])
def test_crlf_working_trees_commit_normalised_blobs_and_rewind_to_crlf(repo: Path, setup: str) -> None:
    if setup == "attributes":
        (repo / ".gitattributes").write_text("* text=auto\n*.txt eol=crlf\n")
        git(repo, "add", ".gitattributes")
        git(repo, "commit", "-q", "-m", "attributes")
    else:
        git(repo, "config", "core.autocrlf", "true")
    (repo / "f.txt").unlink()
    git(repo, "checkout", "--", "f.txt")
    assert (repo / "f.txt").read_bytes() == b"a\r\nb\r\nc\r\n"
    state = discover(repo, "crlf")
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "f.txt").write_bytes(b"a\r\nB\r\nc\r\nd\r\n")
    review = ReviewSession(state)
    selection = review.load()
    hunk = selection.files[0].review_hunks[0]
    assert [line.value for line in hunk.lines() if line.line_type == "+"] == ["B\n", "d\n"]
    review.commit(selection, "B and d")
    assert git(repo, "show", "HEAD:f.txt") == "a\nB\nc\nd\n" and git(repo, "status", "--porcelain") == ""
    checkpoints.rewind(1)
    assert (repo / "f.txt").read_bytes() == b"a\r\nb\r\nc\r\n"
