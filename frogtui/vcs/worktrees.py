"""Git worktrees for attempts at one task (``frogtui run --attempts N``, ``frogtui.attempts``).

The base of every attempt is the person's current state: HEAD plus their uncommitted changes
(tracked, and untracked files that are not ignored), taken with ``snapshot`` through a private
index and written as a commit object with plumbing (``git commit-tree``: no hooks, no branch moves).
Each attempt gets ``git worktree add --detach PATH BASE`` outside the working tree; its final state
is another plumbing commit on the base. The person's working tree and index are never written here
except by ``apply_diff`` (the pick), which writes the working tree only.

Every command runs hardened against the repository it was opened with (``gitguard`` via
``open_repo``/``run_git``).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.temp_folders import process_folder
from frogtui.vcs.repository import GitFailed, head_commit, run_git
from frogtui.vcs.snapshot import DIFF_ARGS, Capped, open_repo, snapshot_tree, stream_git

IDENTITY = {
    "GIT_AUTHOR_NAME": "frogtui", "GIT_AUTHOR_EMAIL": "frogtui@localhost",
    "GIT_COMMITTER_NAME": "frogtui", "GIT_COMMITTER_EMAIL": "frogtui@localhost",
}
"""The identity of frogtui's own plumbing commits (the base, each attempt's end): they never land on
a branch of the person's unless they apply one, and must not fail where no identity is set."""

MARKER = "frogtui-attempt"
"""Part of every attempt worktree's folder name (how ``leftovers`` recognises them)."""
DIFF_CAP = 32 * 2**20
"""The most bytes of one attempt's diff kept in the session folder. A larger diff is not kept (the
attempts table says so, with its size); its commit still holds the change, and a pick of it streams
the diff from there. Nothing holds a whole diff in memory."""
SHOWN_CAP = 2 * 2**20
"""The most bytes of one file's text read for the diff viewer; a larger file is shown as its size."""


class WorktreeFailed(FrogtuiError):
    """git could not make, record or remove an attempt's worktree."""


@dataclass(frozen=True)
class Change:
    """What an attempt changed against the base."""

    commit: str
    """The attempt's final state, a commit whose parent is the base."""
    tree: str
    diff_file: Path | None
    """The binary-safe diff from the base, written there; None when it is larger than ``DIFF_CAP``."""
    diff_bytes: int
    """The diff's size (also when it was not kept)."""
    files: int
    added: int
    removed: int

    @property
    def lines(self) -> int:
        return self.added + self.removed


def _repo(path: str | os.PathLike[str]) -> git.Repo:
    repo = open_repo(path)
    if repo is None or repo.working_tree_dir is None:
        raise WorktreeFailed(f"{path} is not in a git repository: attempts need one (run `git init` there)")
    return repo


def commit_tree(repo: git.Repo, tree: str, parent: str | None, message: str) -> str:
    """A commit object of ``tree`` on ``parent`` (plumbing; no hooks, no ref moves)."""
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    return run_git(repo, *args, env=IDENTITY).decode().strip()


def base_commit(root: str | os.PathLike[str]) -> tuple[git.Repo, str]:
    """The repository holding ``root`` and a commit of its current state (HEAD plus the person's
    uncommitted changes, ignored files left out).

    Raises:
        WorktreeFailed: not a repository, or git failed.
    """
    repo = _repo(root)
    try:
        tree = snapshot_tree(repo)
        return repo, commit_tree(repo, tree, head_commit(repo), "frogtui: attempts base (HEAD + uncommitted changes)")
    except (GitFailed, FrogtuiError) as err:
        raise WorktreeFailed(f"cannot record the working tree for attempts: {err}") from None


def add_worktree(repo: git.Repo, path: Path, commit: str) -> Path:
    """A detached worktree of ``commit`` at ``path`` (a folder that does not exist yet).

    Raises:
        WorktreeFailed: git refused.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        run_git(repo, "worktree", "add", "--detach", "--quiet", str(path), commit)
    except GitFailed as err:
        raise WorktreeFailed(f"cannot create the attempt's worktree {path}: {err}") from None
    return path


def final_change(worktree: Path, base: str, message: str, diff_to: Path, cap: int = DIFF_CAP) -> Change:
    """The worktree's state now as a commit on ``base``, with its size against it; its diff is
    streamed to ``diff_to`` (kept only up to ``cap`` bytes).

    Raises:
        WorktreeFailed: git failed.
    """
    repo = _repo(worktree)
    try:
        tree = snapshot_tree(repo)
        commit = commit_tree(repo, tree, base, message)
        size, kept = write_diff(repo, base, commit, diff_to, cap)
        numstat = run_git(repo, "diff", "--numstat", "--no-renames", base, commit).decode("utf-8", "surrogateescape")
    except (GitFailed, FrogtuiError) as err:
        raise WorktreeFailed(f"cannot record the attempt in {worktree}: {err}") from None
    files = added = removed = 0
    for line in numstat.splitlines():
        parts = line.split("\t")
        if len(parts) < 3:
            continue
        files += 1
        added += int(parts[0]) if parts[0].isdigit() else 0
        removed += int(parts[1]) if parts[1].isdigit() else 0
    return Change(commit, tree, diff_to if kept else None, size, files, added, removed)


def write_diff(repo: git.Repo, base: str, commit: str, path: Path, cap: int | None = DIFF_CAP) -> tuple[int, bool]:
    """Stream the binary-safe diff from ``base`` to ``commit`` into ``path`` as git writes it, a
    chunk at a time: (its size, whether it was kept). Over ``cap`` bytes git is stopped, ``path``
    removed and the size is "more than ``cap``" (``cap + 1``).

    Raises:
        GitFailed: git failed (``path`` removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        out = Capped(handle, cap)
        status, err = stream_git(repo, ("-c", "core.quotePath=false", *DIFF_ARGS, base, commit), out)
    if out.cap is not None and out.total > out.cap:
        path.unlink(missing_ok=True)
        return out.cap + 1, False
    if status != 0:
        path.unlink(missing_ok=True)
        raise GitFailed("diff", status, str(err))
    return out.total, True


def keep_branch(repo: git.Repo, name: str, commit: str) -> str:
    """``refs/heads/NAME`` pointing at ``commit`` (plumbing ``update-ref``); returns the branch name.

    Raises:
        WorktreeFailed: git refused (a branch of that name exists, a bad name).
    """
    try:
        run_git(repo, "update-ref", "-m", "frogtui: attempt kept", f"refs/heads/{name}", commit, "")
    except GitFailed as err:
        raise WorktreeFailed(f"cannot keep the attempt as branch {name}: {err}") from None
    return name


def remove_worktree(repo: git.Repo, path: Path) -> None:
    """Remove an attempt's worktree (its folder and git's record of it). A failure is left to
    ``git worktree prune`` and ``frogtui doctor``; nothing raises."""
    try:
        run_git(repo, "worktree", "remove", "--force", "--force", str(path))
    except GitFailed:
        pass
    try:
        run_git(repo, "worktree", "prune")
    except GitFailed:
        pass


def apply_change(repo: git.Repo, commit: str, diff_file: str | os.PathLike[str] | None) -> None:
    """Write the change of ``commit`` (an attempt's end, whose parent is the base) into the person's
    working tree, from its kept diff ``diff_file`` or, when there is none, from a diff streamed out
    of the commit into a temporary file (never whole in memory); their index is left as it is.

    Raises:
        WorktreeFailed: it does not apply (the working tree changed since the base); nothing was written.
    """
    try:
        with tempfile.TemporaryDirectory(prefix="pick-", dir=process_folder()) as folder:
            patch = Path(diff_file) if diff_file and Path(diff_file).is_file() else None
            if patch is None:
                patch = Path(folder) / "attempt.diff"
                write_diff(repo, f"{commit}^", commit, patch, cap=None)
            if patch.stat().st_size == 0:
                return
            run_git(repo, "apply", "--binary", "--whitespace=nowarn", str(patch))
    except GitFailed as err:
        raise WorktreeFailed(f"the attempt does not apply to the working tree (did it change since the attempts started?): {err}") from None


def leftovers(root: str | os.PathLike[str]) -> list[str]:
    """Attempt worktrees of the repository holding ``root`` that a run left behind (killed before
    it could remove them): their paths. [] outside a repository."""
    repo = open_repo(root)
    if repo is None:
        return []
    try:
        out = run_git(repo, "worktree", "list", "--porcelain").decode("utf-8", "surrogateescape")
    except (GitFailed, FrogtuiError):
        return []
    paths = [line[len("worktree "):] for line in out.splitlines() if line.startswith("worktree ")]
    return [p for p in paths if MARKER in os.path.basename(p)]


def changed_files(root: str | os.PathLike[str], base: str, commit: str, cap: int = DIFF_CAP) -> list[tuple[str, str | None, str]]:
    """Each file ``commit`` changed against ``base``: (path, its text in ``base`` or None when new,
    its text in ``commit``, '' when deleted), for the diff viewer. [] when git cannot say.
    Undecodable bytes are shown replaced; a file larger than ``SHOWN_CAP``, or past ``cap`` bytes
    read for the whole attempt, is shown as one line saying its size (never read whole)."""
    repo = open_repo(root)
    if repo is None:
        return []
    try:
        out = run_git(repo, "diff", "--name-status", "-z", "--no-renames", base, commit).decode("utf-8", "surrogateescape")
        words = out.split("\0")
        files = []
        budget = [cap]
        for status, path in zip(words[0::2], words[1::2], strict=False):
            before = None if status == "A" else _text_at(repo, base, path, budget)
            after = "" if status == "D" else _text_at(repo, commit, path, budget)
            files.append((path, before, after))
        return files
    except (GitFailed, FrogtuiError):
        return []


def _text_at(repo: git.Repo, commit: str, path: str, budget: list[int]) -> str:
    size = int(run_git(repo, "cat-file", "-s", f"{commit}:{path}").decode().strip() or 0)
    if size > SHOWN_CAP or size > budget[0]:
        why = f"over the {SHOWN_CAP // 2**20} MiB the viewer reads for one file" if size > SHOWN_CAP else \
            f"past the {DIFF_CAP // 2**20} MiB the viewer reads for one attempt"
        return f"(not shown: {size:,} bytes, {why}; git show {commit[:12]}:{path})\n"
    budget[0] -= size
    return run_git(repo, "show", f"{commit}:{path}").decode("utf-8", "replace")


def saved_change(root: str | os.PathLike[str], base: str, commit: str) -> bool:
    """Whether an attempt recorded earlier (its ``commit`` on ``base``) is still in the repository
    (its branch deleted and the objects pruned: no)."""
    repo = open_repo(root)
    if repo is None or not base or not commit:
        return False
    try:
        run_git(repo, "cat-file", "-e", f"{commit}^{{commit}}")
        run_git(repo, "cat-file", "-e", f"{base}^{{commit}}")
        return True
    except (GitFailed, FrogtuiError):
        return False


def branch_exists(root: str | os.PathLike[str], name: str) -> bool:
    """Whether ``refs/heads/NAME`` exists in the repository holding ``root``."""
    repo = open_repo(root)
    if repo is None:
        return False
    try:
        run_git(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{name}")
        return True
    except (GitFailed, FrogtuiError):
        return False
