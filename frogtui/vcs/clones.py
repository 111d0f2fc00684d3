"""Throwaway checkouts for ``frogtui eval``: a clone of a local repository at one commit, outside
the person's working tree; patches applied to it; the diff of what a run changed in it.

The clone is a new repository into which the commit and its ancestry are fetched from the local
repository (no hooks, config, branches, tags or later commits of the source come with it),
followed by a detached checkout of the commit, all hardened (``gitguard``). Every later command
goes through the pinned repository (``open_repo``/``run_git``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.vcs.gitguard import DIFF_FORMAT, HARDENING, GuardedGit, hardening_env, pinned_git
from frogtui.vcs.repository import LITERAL_PATHS, GitFailed, run_git
from frogtui.vcs.snapshot import open_repo, snapshot_tree
from frogtui.vcs.worktrees import commit_tree


class CheckoutFailed(FrogtuiError):
    """The repository could not be cloned or checked out at the commit."""


class PatchFailed(FrogtuiError):
    """A patch does not apply to the checkout (nothing of it was written)."""


@dataclass(frozen=True)
class RunDiff:
    """What a run changed in a checkout against its base."""

    diff: str
    """The binary-safe diff from the base, the excluded paths left out ('' when nothing changed)."""
    files: int
    excluded: tuple[str, ...]
    """Paths the run changed that were left out of ``diff``."""


def clone_at(source: Path, dest: Path, commit: str) -> Path:
    """A new repository at ``dest`` (which must not exist) holding ``commit`` of the local
    repository ``source`` and its history, and nothing after it, with ``commit`` checked out
    detached.

    Only the commit's ancestry is fetched (no branch, tag or later commit of ``source`` comes
    along: a task's fix must not be one ``git log --all`` away), with ``uploadpack.allowAnySHA1InWant``
    so that a commit no branch holds can be fetched too.

    Raises:
        CheckoutFailed: ``source`` is no repository, ``commit`` is not in it, or git failed.
    """
    origin = open_repo(source)
    if origin is None or Path(origin.working_tree_dir or "").resolve() != source.resolve():
        raise CheckoutFailed(f"{source} is not a git repository (its top folder)")
    try:
        full = run_git(origin, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^{{commit}}").decode().strip()
    except GitFailed:
        raise CheckoutFailed(f"commit {commit} is not in {source}") from None
    dest.mkdir(parents=True)
    executable, clean_path = pinned_git(source, dest)
    runner = GuardedGit(os.fspath(dest))
    runner.executable = executable
    runner.update_environment(PATH=clean_path, GIT_TERMINAL_PROMPT="0", **hardening_env(HARDENING + DIFF_FORMAT))
    try:
        runner.execute(["git", "init", "--quiet", os.fspath(dest)])
    except git.exc.GitCommandError as err:
        raise CheckoutFailed(f"cannot create a repository at {dest}: {str(err.stderr or err).strip()}") from None
    repo = open_repo(dest)
    if repo is None or Path(repo.working_tree_dir or "").resolve() != dest.resolve():
        raise CheckoutFailed(f"{dest} is not a repository after git init")
    try:
        run_git(repo, "-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "--quiet", "--no-tags", "--no-recurse-submodules",
                "--", os.fspath(source.resolve()), full)
        run_git(repo, "checkout", "--quiet", "--detach", full)
    except GitFailed as err:
        raise CheckoutFailed(f"cannot check out {commit} of {source}: {err}") from None
    return dest


def _repo(root: Path) -> git.Repo:
    repo = open_repo(root)
    if repo is None:
        raise CheckoutFailed(f"{root} is not a git repository")
    return repo


def apply_patch(root: Path, patch: str) -> None:
    """Write ``patch`` into the checkout's working tree (all of it or nothing).

    Raises:
        PatchFailed: it does not apply.
    """
    if not patch.strip():
        return
    text = patch if patch.endswith("\n") else patch + "\n"
    try:
        run_git(_repo(root), "apply", "--binary", "--whitespace=nowarn", "-", stdin=text.encode("utf-8", "surrogateescape"))
    except GitFailed as err:
        raise PatchFailed(err.output.strip().splitlines()[0] if err.output.strip() else str(err)) from None


def patch_paths(root: Path, patch: str) -> list[str]:
    """The paths ``patch`` touches (both sides of a rename), read by git itself. [] for an empty
    patch or one git cannot read."""
    if not patch.strip():
        return []
    text = patch if patch.endswith("\n") else patch + "\n"
    try:
        out = run_git(_repo(root), "apply", "--numstat", "-z", "-", stdin=text.encode("utf-8", "surrogateescape"))
    except GitFailed:
        return []
    paths: list[str] = []
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        if not entry:
            i += 1
            continue
        parts = entry.split("\t", 2)
        if len(parts) == 3 and parts[2]:
            paths.append(parts[2])
            i += 1
        else:  # a rename: "added\tdeleted\t" then old and new path
            paths.extend(p for p in fields[i + 1:i + 3] if p)
            i += 3
    return paths


def run_diff(root: Path, base: str, exclude: list[str] | tuple[str, ...] = ()) -> RunDiff:
    """The checkout's state now against ``base`` (untracked files that are not ignored included),
    the paths in ``exclude`` left out.

    Raises:
        CheckoutFailed: git failed.
    """
    try:
        repo = _repo(root)
        commit = commit_tree(repo, snapshot_tree(repo), base, "frogtui eval: the run's end state")  # only the commit: the diff below
        names = run_git(repo, "diff", "--name-only", "-z", "--no-renames", base, commit).decode("utf-8", "surrogateescape")
        changed = [name for name in names.split("\0") if name]
        left_out = set(exclude)
        kept = [name for name in changed if name not in left_out]
        if not kept:
            return RunDiff("", 0, tuple(name for name in changed if name in left_out))
        diff = run_git(repo, "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", base, commit,
                       "--", *kept, env=LITERAL_PATHS).decode("utf-8", "surrogateescape")
    except (GitFailed, FrogtuiError) as err:
        raise CheckoutFailed(f"cannot record what the run changed in {root}: {err}") from None
    return RunDiff(diff, len(kept), tuple(name for name in changed if name in left_out))
