"""Snapshots of the working tree as git tree objects, made through a temporary index so the
person's index, stash and branches are never touched."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import git


def open_repo(root: str | os.PathLike[str]) -> git.Repo | None:
    """The git repository whose working tree is ``root``, or None when it is not one."""
    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
        return None


def snapshot_tree(repo: git.Repo) -> str:
    """Write the working tree (tracked and untracked files, minus what .gitignore ignores) as a
    tree object and return its sha. The person's index is copied, never written."""
    git_dir = Path(repo.git_dir)
    with tempfile.TemporaryDirectory(prefix="frogtui-index-") as tmp:
        index = Path(tmp) / "index"
        if (git_dir / "index").exists():
            # reuse stat data, so only changed files are hashed; copy2 keeps the index file's mtime,
            # which git needs to spot "racily clean" entries (a same-size edit in the same second)
            shutil.copy2(git_dir / "index", index)
        env = {"GIT_INDEX_FILE": str(index)}
        repo.git.add("--all", "--", ".", env=env)
        return repo.git.write_tree(env=env)


def diff_trees(repo: git.Repo, before: str, after: str) -> str:
    """The binary-safe unified diff from tree ``before`` to tree ``after``."""
    if before == after:
        return ""
    return repo.git.diff("--binary", "--no-color", "--no-ext-diff", before, after, stdout_as_string=True, strip_newline_in_stdout=False)
