"""Snapshots reuse a private index across calls (stat data, untracked cache): after any change a
command could make, the snapshot is still exactly what a fresh ``git add --all`` records."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from frogtui.vcs.snapshot import open_repo, snapshot_tree
from tests.vcs.cases import git


def fresh_snapshot(root: Path) -> str:
    """The reference: a fresh copy of the person's index, ``git add --all``, ``write-tree``."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        if (root / ".git" / "index").exists():
            shutil.copy2(root / ".git" / "index", env["GIT_INDEX_FILE"])
        subprocess.run(["git", "add", "--all"], cwd=root, env=env, check=True, capture_output=True)
        return subprocess.run(["git", "write-tree"], cwd=root, env=env, check=True, capture_output=True, text=True).stdout.strip()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


CHANGES: list[tuple[str, Callable[[Path], None]]] = [
    ("nothing", lambda r: None),
    ("edit a tracked file", lambda r: write(r / "src" / "a.py", "a = 2\n")),
    ("same size, same second", lambda r: write(r / "src" / "a.py", "a = 3\n")),
    ("untracked file at the top", lambda r: write(r / "new.txt", "new\n")),
    ("untracked file in a new nested folder", lambda r: write(r / "x" / "y" / "z.txt", "deep\n")),
    ("untracked file in a tracked folder", lambda r: write(r / "src" / "b.py", "b = 1\n")),
    ("ignored file", lambda r: write(r / "build" / "out.o", "binary\n")),
    ("delete a tracked file", lambda r: (r / "docs" / "readme.md").unlink()),
    ("make a file executable", lambda r: (r / "src" / "a.py").chmod(0o755)),
    ("a symlink", lambda r: (r / "link").symlink_to("src/a.py")),
    ("a file becomes a folder", lambda r: ((r / "data.txt").unlink(), write(r / "data.txt" / "inner.txt", "in\n"))),
    ("un-ignore through .gitignore", lambda r: write(r / ".gitignore", "*.log\n")),
    ("ignore through info/exclude", lambda r: write(r / ".git" / "info" / "exclude", "x/\n")),
    ("delete an untracked folder", lambda r: [p.unlink() for p in sorted((r / "x").rglob("*.txt"))]),
    ("a name with spaces, a colon and a star", lambda r: write(r / ":odd *name?.txt", "odd\n")),
    ("edit the untracked file", lambda r: write(r / "new.txt", "changed\n")),
    ("the person force-adds an ignored file", lambda r: git(r, "add", "-f", "notes.log")),
    ("the person untracks it again", lambda r: git(r, "rm", "-q", "--cached", "notes.log")),
    ("ignore through a nested .gitignore", lambda r: write(r / "src" / ".gitignore", "b.py\n")),
    ("the person commits everything", lambda r: (git(r, "add", "-A"), git(r, "commit", "-q", "-m", "all"))),
    ("then edits a file and runs git status", lambda r: (write(r / "new.txt", "again\n"), git(r, "status"))),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def make_repo(tmp_path: Path) -> Path:
    """A repository with tracked, ignored and untracked-to-be files (the changes above act on it)."""
    root = tmp_path / "repo"
    write(root / "src" / "a.py", "a = 1\n")
    write(root / "docs" / "readme.md", "hello\n")
    write(root / "data.txt", "data\n")
    write(root / ".gitignore", "build/\n*.log\n")
    write(root / "notes.log", "log\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def test_each_change_a_command_could_make_is_in_the_next_snapshot(repo: Path) -> None:
    handle = open_repo(repo)
    assert handle is not None
    assert snapshot_tree(handle) == fresh_snapshot(repo)
    for name, change in CHANGES:
        change(repo)
        index_after = (repo / ".git" / "index").read_bytes()
        assert snapshot_tree(handle) == fresh_snapshot(repo), name
        assert (repo / ".git" / "index").read_bytes() == index_after  # the person's index is never written


def test_an_unchanged_tree_gives_the_same_tree_again(repo: Path) -> None:
    handle = open_repo(repo)
    assert handle is not None
    write(repo / "new.txt", "new\n")
    first = snapshot_tree(handle)
    assert snapshot_tree(handle) == first == fresh_snapshot(repo)


def test_a_new_handle_on_the_same_repository_sees_changes_made_between(repo: Path) -> None:
    first = open_repo(repo)
    assert first is not None
    snapshot_tree(first)
    write(repo / "later.txt", "later\n")
    second = open_repo(repo)
    assert second is not None
    assert snapshot_tree(second) == fresh_snapshot(repo)


def test_a_repository_made_again_at_the_same_path_is_not_confused_with_the_old_one(repo: Path, tmp_path: Path) -> None:
    handle = open_repo(repo)
    assert handle is not None
    snapshot_tree(handle)
    subprocess.run(["rm", "-rf", str(repo / ".git")], check=True)
    git(repo, "init", "-q")
    again = open_repo(repo)
    assert again is not None
    assert snapshot_tree(again) == fresh_snapshot(repo)
