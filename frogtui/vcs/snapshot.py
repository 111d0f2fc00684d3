"""Snapshots of the working tree as git tree objects, made through a temporary index so the
person's index, stash and branches are never touched."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.vcs.gitguard import open_pinned


class SnapshotFailed(FrogtuiError):
    """git could not record the working tree (for example a ``.gitattributes`` filter such as
    git-lfs is configured but not installed)."""


def open_repo(root: str | os.PathLike[str]) -> git.Repo | None:
    """The git repository whose working tree is ``root``, or None when it is not one; pinned and
    hardened (``gitguard``): no hooks, no fsmonitor, no discovery after this."""
    return open_pinned(root)


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
        try:
            _see_hidden_changes(repo, env)
            repo.git.add("--all", "--", ".", env=env)
            return repo.git.write_tree(env=env)
        except git.exc.GitCommandError as err:
            raise SnapshotFailed(snapshot_failure(err)) from None


def _see_hidden_changes(repo: git.Repo, env: dict[str, str]) -> None:
    """In the copied index, clear ``assume-unchanged`` and (for files present on disk)
    ``skip-worktree``: ``git add`` would otherwise not see changes to those files (or refuse to
    run), and a checkpoint that misses them cannot rewind them. Absent skip-worktree files (outside
    a sparse checkout) keep the bit, so they are not taken as deleted."""
    out = repo.git.ls_files("-v", "-z", env=env, stdout_as_string=False, strip_newline_in_stdout=False)
    assumed, skipped = [], []
    for record in out.split(b"\0"):
        if len(record) < 3:
            continue
        tag, path = record[:1], record[2:]
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s") and os.path.lexists(Path(repo.working_tree_dir or ".") / os.fsdecode(path)):
            skipped.append(path)
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            with tempfile.TemporaryFile(prefix="frogtui-stdin-") as handle:
                handle.write(b"\0".join(paths) + b"\0")
                handle.seek(0)
                repo.git.update_index(flag, "-z", "--stdin", env=env, istream=handle)


def snapshot_failure(err: git.exc.GitCommandError) -> str:
    """The one line shown when the working tree cannot be recorded."""
    text = err.stderr.strip() if isinstance(err.stderr, str) else str(err)
    lines = [line.strip() for line in text.removeprefix("stderr: ").strip("'\n ").splitlines() if line.strip()]
    text = lines[-1] if lines else "git add failed"
    hint = ""
    if "filter" in text:
        hint = (" A .gitattributes filter is configured but does not work here (is git-lfs or the filter's "
                "program installed?); plain `git add` fails the same way.")
    return f"cannot record the working tree, so checkpoints and review cannot work: {text}.{hint}"


def diff_trees(repo: git.Repo, before: str, after: str) -> str:
    """The binary-safe unified diff from tree ``before`` to tree ``after``."""
    if before == after:
        return ""
    return repo.git.diff(
        "--binary", "--no-color", "--no-ext-diff", "--no-textconv", before, after, stdout_as_string=True, strip_newline_in_stdout=False
    )
