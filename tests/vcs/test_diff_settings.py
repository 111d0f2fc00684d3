"""Per-hunk review whatever the person's git diff settings (git's own t3701, ``add -p``, as facts).

frogtui reads its own diffs (hunks to split and commit, the trajectory's ``output_patch``), so the
settings that change their shape are pinned for frogtui's git: a person who sets
``diff.suppressBlankEmpty``, ``diff.noprefix``, ``color.ui = always``... in their repository or in
``~/.gitconfig`` still gets hunks that split. Real repositories, real config files.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.vcs.repository import discover, session_patch
from frogtui.vcs.review import ReviewSession
from tests.vcs.cases import git

BEFORE = "a\nb\nc\nd\n\ne\nf\ng\nh\n"
AFTER = "a\nB\nc\nd\n\ne\nf\nG\nh\n"
"""Two changes in one hunk, a blank context line between them (t3701's suppressBlankEmpty case)."""

SETTINGS = [
    {"diff.suppressBlankEmpty": "true"},
    {"diff.context": "0"},
    {"diff.context": "8", "diff.interHunkContext": "20"},
    {"diff.noprefix": "true"},
    {"diff.mnemonicPrefix": "true"},
    {"diff.srcPrefix": "SRC/", "diff.dstPrefix": "DST/"},
    {"color.ui": "always", "color.diff": "always"},
    {"diff.external": "false"},
    {"diff.relative": "true"},
    {"diff.algorithm": "histogram", "diff.indentHeuristic": "false"},
    {"apply.whitespace": "fix", "apply.ignoreWhitespace": "change"},
    {
        "diff.suppressBlankEmpty": "true", "diff.noprefix": "true", "color.ui": "always", "diff.context": "1",
        "diff.mnemonicPrefix": "true", "diff.relative": "true", "diff.algorithm": "patience",
    },
]


def configure(repo: Path, home: Path, settings: dict[str, str], where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if where == "repository":
        for key, value in settings.items():
            git(repo, "config", key, value)
        return
    home.mkdir(exist_ok=True)
    lines = ["[user]", "\tname = Test Person", "\temail = test@example.invalid"]
    lines += [f"[{key.rsplit('.', 1)[0]}]\n\t{key.rsplit('.', 1)[1]} = {value}" for key, value in settings.items()]
    (home / ".gitconfig").write_text("\n".join(lines) + "\n")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    monkeypatch.setenv("HOME", str(home))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "f.txt").write_text(BEFORE)
    (root / "sub").mkdir()
    (root / "sub" / "g.txt").write_text("one\n\ntwo\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.mark.parametrize("where", ["repository", "home"])
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_a_hunk_splits_and_commits_one_change_whatever_the_settings(
    repo: Path, tmp_path: Path, settings: dict[str, str], where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(repo, tmp_path / "home", settings, where, monkeypatch)
    state = discover(repo / "sub", "settings")  # started in a subfolder: diff.relative must not narrow anything
    assert state is not None
    (repo / "f.txt").write_text(AFTER)
    (repo / "sub" / "g.txt").write_text("one  \n\ntwo\n")  # trailing spaces: apply.whitespace=fix must not touch them
    review = ReviewSession(state, trailer="Assisted-by: test")
    selection = review.load()

    change = next(f for f in selection.files if f.path == "f.txt")
    assert not change.whole and len(change.review_hunks) == 1, change.raw
    hunk = change.review_hunks[0]
    assert hunk.can_split and len(hunk.group_ids) == 2
    first, second = change.split(hunk)
    first.toggle()  # keep only G
    assert not first.accepted and second.accepted
    review.commit(selection, "Only the second change")

    assert git(repo, "show", "HEAD:f.txt") == BEFORE.replace("g\n", "G\n")
    assert git(repo, "show", "HEAD:sub/g.txt") == "one  \n\ntwo\n"
    assert (repo / "f.txt").read_text() == AFTER


@pytest.mark.parametrize("where", ["repository", "home"])
def test_only_a_blank_line_between_two_changes_splits_under_suppress_blank_empty(
    repo: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's own case (t3701, 'splitting handles diff.suppressBlankEmpty'): the blank line is the
    only context between the two changes; the second one alone is taken."""
    (repo / "file").write_text("1\n2\n\n3\n4\n")
    git(repo, "add", "file")
    git(repo, "commit", "-qm", "file")
    configure(repo, tmp_path / "home", {"diff.suppressBlankEmpty": "true"}, where, monkeypatch)
    state = discover(repo, "blank")
    assert state is not None
    (repo / "file").write_text("one\ntwo\n\nthree\nfour\n")
    review = ReviewSession(state, trailer="Assisted-by: test")
    selection = review.load()
    change = next(f for f in selection.files if f.path == "file")
    first, second = change.split(change.review_hunks[0])
    first.toggle()
    review.commit(selection, "The second change")
    assert git(repo, "show", "HEAD:file") == "1\n2\n\nthree\nfour\n"


@pytest.mark.parametrize("where", ["repository", "home"])
def test_a_missing_order_file_leaves_frogtuis_own_git_working(
    repo: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git diff`` fails outright on it (and so does the person's own ``git commit``, left as it is)."""
    configure(repo, tmp_path / "home", {"diff.orderFile": "does-not-exist"}, where, monkeypatch)
    state = discover(repo, "order")
    assert state is not None
    (repo / "f.txt").write_text(AFTER)
    change = next(f for f in ReviewSession(state).load().files if f.path == "f.txt")
    assert change.review_hunks[0].can_split
    assert session_patch(state)().startswith("diff --git a/f.txt b/f.txt\n")


@pytest.mark.parametrize("where", ["repository", "home"])
def test_the_trajectory_patch_is_a_plain_diff_whatever_the_settings(
    repo: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = {
        "diff.noprefix": "true", "color.ui": "always", "color.diff": "always", "diff.context": "0",
        "diff.suppressBlankEmpty": "true", "diff.orderFile": "does-not-exist", "diff.srcPrefix": "SRC/",
    }
    configure(repo, tmp_path / "home", settings, where, monkeypatch)
    state = discover(repo, "patch")
    (repo / "f.txt").write_text(AFTER)
    patch = session_patch(state)()
    assert patch.startswith("diff --git a/f.txt b/f.txt\n"), patch
    assert "\x1b[" not in patch
    assert "\n \nIndex" not in patch and "\n d\n \n e\n" in patch  # three lines of context, the blank one as " "
    git(repo, "checkout", "-q", "--", "f.txt")
    (repo / "undo.patch").write_text(patch)
    git(repo, "apply", "undo.patch")  # what the trajectory records applies with plain git
    assert (repo / "f.txt").read_text() == AFTER


@pytest.mark.parametrize("where", ["repository", "home"])
def test_the_persons_staged_part_takes_a_commit_with_trailing_spaces_under_apply_whitespace_error(
    repo: Path, tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = "".join(f"l{i}\n" for i in range(30))
    (repo / "g.txt").write_text(lines)
    git(repo, "add", "g.txt")
    git(repo, "commit", "-q", "-m", "g")
    configure(repo, tmp_path / "home", {"apply.whitespace": "error", "core.whitespace": "trailing-space"}, where, monkeypatch)
    (repo / "g.txt").write_text(lines.replace("l2\n", "L2 staged\n"))
    git(repo, "add", "g.txt")  # the person's own staged change
    review = ReviewSession(discover(repo, "staged"))
    (repo / "g.txt").write_text((repo / "g.txt").read_text().replace("l25\n", "L25 session  \n"))
    selection = review.load()
    for change in selection.files:  # the session's line only
        for group in change.groups:
            group.accepted = group.origin == "session"
    result = review.commit(selection, "Session line")
    assert git(repo, "show", "HEAD:g.txt") == lines.replace("l25\n", "L25 session  \n")
    assert not result.notes, result.notes
    cached = git(repo, "diff", "--cached")
    assert "+L2 staged" in cached and "L25" not in cached
