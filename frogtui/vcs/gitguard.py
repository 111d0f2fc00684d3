"""frogtui's own git never runs code the repository controls, and never wanders.

Every git command frogtui runs goes through a ``PinnedRepo``: its git dir and work tree are fixed
when the repository is opened (``GIT_DIR``/``GIT_WORK_TREE``, so no discovery upward finds a
parent repository when ``.git`` vanishes), hooks, fsmonitor, external diff and textconv are off,
the settings that reshape the diffs frogtui reads are git's defaults (``DIFF_FORMAT``),
and before each command the git dir is checked to be the one opened (same folder, same
``commondir``/``gitdir`` pointers): a vanished or redirected ``.git`` stops with one line
(``RepositoryChanged``). Clean/smudge filters stay on: their commands come only from git config
(``.git/config`` is read-only in the sandbox, ``~/.gitconfig`` is outside it; an in-tree file
that ``.git/config`` includes has its commands emptied: ``intree_config``), and turning them
off would make every LFS file look changed.

git itself is the one of frogtui's clean ``PATH`` (``frogtui.programs``: never a program inside this
working tree or any other, nor from a relative ``PATH`` entry), run by its absolute path with that
clean ``PATH`` in its environment (what git runs in turn, a filter or a credential helper, is found
there too).

The person's own commit from the review screen runs through ``person_git``: the same git binary in
the work tree, with the person's environment and settings and after the same check, so their
hooks apply as with ``git commit``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from frogtui.errors import FrogtuiError
from frogtui.programs import at_start
from frogtui.vcs.control import control_files_changed  # noqa: F401  (its home was here)
from frogtui.vcs.intree_config import InTreeConfig

HARDENING = (
    ("core.fsmonitor", "false"),
    ("diff.external", ""),
    ("core.hooksPath", "/dev/null"),
)
"""Configuration forced on every git command frogtui runs for itself."""

DIFF_FORMAT = (
    ("diff.suppressBlankEmpty", "false"),
    ("diff.noprefix", "false"),
    ("diff.mnemonicPrefix", "false"),
    ("diff.srcPrefix", "a/"),
    ("diff.dstPrefix", "b/"),
    ("diff.relative", "false"),
    ("diff.context", "3"),
    ("diff.interHunkContext", "0"),
    ("diff.algorithm", "myers"),
    ("diff.indentHeuristic", "true"),
    ("diff.orderFile", "/dev/null"),
    ("diff.submodule", "short"),
    ("color.ui", "never"),
    ("color.diff", "never"),
    ("apply.whitespace", "nowarn"),
    ("apply.ignoreWhitespace", "no"),
)
"""The person's settings that change the shape of a diff frogtui reads (hunks to split and commit,
the trajectory's ``output_patch``) or how ``git apply`` takes its patches, pinned to git's defaults
for frogtui's own commands: ``diff.suppressBlankEmpty`` writes a blank context line without its
space (unidiff then cannot read the hunk, and it no longer splits), ``diff.noprefix`` and the
prefix settings change the ``diff --git a/P b/P`` line, ``color.*`` adds escapes, ``diff.context``
and ``diff.interHunkContext`` reshape hunks, a missing ``diff.orderFile`` makes ``git diff`` fail,
``apply.whitespace = fix`` would rewrite what the person accepted. The person's own commit
(``person_git``) keeps all of their settings."""

def hardening_env(pairs: tuple[tuple[str, str], ...] = HARDENING) -> dict[str, str]:
    """``GIT_CONFIG_*`` variables forcing ``pairs`` (as ``git -c`` would)."""
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for n, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


class RepositoryChanged(FrogtuiError):
    """The repository's git dir vanished or now points elsewhere than at the session's start."""


@dataclass(frozen=True)
class GitDirIdentity:
    """What the git dir was when the repository was opened."""

    work_tree: str
    dot_git: str
    """The ``.git`` entry of the work tree (a folder, or a file naming the git dir)."""
    git_dir: str
    common_dir: str
    pointers: tuple[tuple[str, str | None], ...]
    """``.git`` (as a file), ``commondir`` and ``gitdir``: their content, None when absent."""
    device_inode: tuple[int, int]

    @classmethod
    def read(cls, work_tree: str, git_dir: str) -> GitDirIdentity:
        dot_git = os.path.join(work_tree, ".git")
        real = os.path.realpath(git_dir)
        common = _pointer(os.path.join(real, "commondir"))
        common_dir = os.path.realpath(os.path.join(real, common.strip())) if common else real
        stat = os.stat(real)
        pointers = tuple((name, _pointer(path)) for name, path in _pointer_files(dot_git, real))
        return cls(work_tree, dot_git, real, common_dir, pointers, (stat.st_dev, stat.st_ino))

    def check(self) -> None:
        """Raise ``RepositoryChanged`` when the git dir is not the one recorded (cheap: a few stats).

        Raises:
            RepositoryChanged: one line saying what changed.
        """
        try:
            stat = os.stat(self.git_dir)
            same = (stat.st_dev, stat.st_ino) == self.device_inode and os.path.isfile(os.path.join(self.common_dir, "HEAD"))
        except OSError:
            same = False
        if not same:
            raise RepositoryChanged(f"the repository's git folder {self.git_dir} vanished or was replaced during the session; stopping")
        for name, path in _pointer_files(self.dot_git, self.git_dir):
            if (name, _pointer(path)) not in self.pointers:
                raise RepositoryChanged(f"{path} changed during the session (it now points git elsewhere); stopping")


def _pointer_files(dot_git: str, git_dir: str) -> list[tuple[str, str]]:
    files = [(".git", dot_git)] if os.path.isfile(dot_git) or not os.path.exists(dot_git) else []
    return files + [("commondir", os.path.join(git_dir, "commondir")), ("gitdir", os.path.join(git_dir, "gitdir"))]


def _pointer(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            return handle.read(4096)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


class GitNotFound(FrogtuiError):
    """No git outside the repository on the ``PATH`` frogtui started with."""


def pinned_git(*trees: str | os.PathLike[str]) -> tuple[str, str]:
    """(git's absolute path, the clean ``PATH``) for commands about ``trees`` (``frogtui.programs``).

    Raises:
        GitNotFound: the only git on ``PATH`` is inside a repository, or there is none.
    """
    programs = at_start().for_trees(*trees)
    executable = programs.which("git")
    if executable is None:
        raise GitNotFound("git was not found on PATH outside a repository (frogtui never runs a git from a repository "
                          "or a relative PATH entry): install git, or put its folder on PATH")
    return executable, programs.path


class GuardedGit(git.Git):
    """gitpython's command runner: git by its pinned absolute path (``executable``), the git dir
    checked before each command."""

    identity: GitDirIdentity | None = None
    executable: str | None = None
    """git's absolute path (``pinned_git``): replaces the ``git`` a command names."""
    intree: InTreeConfig | None = None
    """In-tree files the repository's config includes: their command-valued keys are emptied."""

    def execute(self, command: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self.identity is not None:
            self.identity.check()
        overrides = self.intree.overrides() if self.intree is not None else ()
        if overrides:
            kwargs["env"] = {**(kwargs.get("env") or {}), **hardening_env(HARDENING + DIFF_FORMAT + overrides)}
        named = isinstance(command, (list, tuple)) and command and command[0] in ("git", self.GIT_PYTHON_GIT_EXECUTABLE)
        if self.executable is not None and named:
            command = [self.executable, *command[1:]]
        return super().execute(command, *args, **kwargs)


class PinnedRepo(git.Repo):
    """A ``git.Repo`` whose every command runs hardened, against the git dir it was opened with."""

    GitCommandWrapperType = GuardedGit

    def pin(self) -> PinnedRepo:
        """Fix the git dir and work tree as they are now, and harden every later command."""
        if self.working_tree_dir is None:
            return self
        work_tree = os.path.realpath(self.working_tree_dir)
        identity = GitDirIdentity.read(work_tree, self.git_dir)
        executable, path = pinned_git(work_tree)
        self.git.identity = identity  # type: ignore[attr-defined]
        self.git.executable = executable  # type: ignore[attr-defined]
        pinned = dict(
            GIT_DIR=identity.git_dir, GIT_WORK_TREE=work_tree, GIT_CEILING_DIRECTORIES=str(Path(work_tree).parent),
            GIT_NO_REPLACE_OBJECTS="1", PATH=path, **hardening_env(HARDENING + DIFF_FORMAT),
        )
        self.git.update_environment(**pinned)
        self.git.intree = InTreeConfig(executable, identity.git_dir, work_tree, {**os.environ, **pinned})  # type: ignore[attr-defined]
        return self


def person_git(repo: git.Repo) -> git.Git:
    """``git`` in ``repo``'s work tree as the person would run it (their hooks, their settings and
    environment, no pinned environment for the hooks' own git calls to inherit), for their commit;
    the git binary is the pinned one (``pinned_git``), and the git dir is checked first.

    Raises:
        RepositoryChanged: the git folder is not the one the session started with.
        GitNotFound: no git outside a repository.
    """
    identity = getattr(repo.git, "identity", None)
    if identity is not None:
        identity.check()
    runner = GuardedGit(repo.working_tree_dir)
    runner.executable = getattr(repo.git, "executable", None) or pinned_git(repo.working_tree_dir or ".")[0]
    return runner


def open_pinned(root: str | os.PathLike[str]) -> PinnedRepo | None:
    """The repository whose working tree holds ``root``, pinned; None when there is none."""
    try:
        repo = PinnedRepo(root, search_parent_directories=True)
    except (git.exc.InvalidGitRepositoryError, git.exc.NoSuchPathError):
        return None
    return repo.pin()
