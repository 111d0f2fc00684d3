"""Finding the repository at the start of a session, and running git with private indexes.

Every git command here goes through gitpython's ``Repo.git`` (so the person's git, config and hooks
apply). Commands that need an index of their own get a temporary ``GIT_INDEX_FILE``: the person's
index, stash and branches are never written except where a function says so.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.temp_folders import process_folder
from frogtui.vcs.gitguard import GuardedGit, person_git, pinned_git
from frogtui.vcs.snapshot import diff_trees, open_repo, snapshot, snapshot_tree
from frogtui.vcs.verify import check_ref, record_path, record_update

LITERAL_PATHS = {"GIT_LITERAL_PATHSPECS": "1"}
"""Environment that makes git read every pathspec as a plain path (no globs, no magic)."""

NOT_A_REPO = (
    "{root} is not in a git repository: review, commit, checkpoints and rewind are off for this "
    "session. Run `git init` there, or in the app choose \"Initialise git repository\" (ctrl+p), to turn them on."
)


class GitFailed(FrogtuiError):
    """A git command failed; ``output`` holds what it printed (stdout then stderr)."""

    def __init__(self, command: str, status: int, output: str) -> None:
        super().__init__(f"git {command} failed (exit {status}): {output.strip()}")
        self.command = command
        self.status = status
        self.output = output


def run_git(
    repo: git.Repo,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    as_person: bool = False,
) -> bytes:
    """Run ``git args`` in the repository's working tree and return its stdout as bytes: hardened
    (``gitguard``), or with ``as_person`` as a plain ``git`` the person runs (their hooks run).

    Raises:
        GitFailed: the command exited with a non-zero status.
        RepositoryChanged: the git folder is not the one the session started with.
    """
    with contextlib.ExitStack() as stack:
        istream = None
        if stdin is not None:
            handle = stack.enter_context(tempfile.TemporaryFile(prefix="frogtui-stdin-"))
            handle.write(stdin)
            handle.seek(0)
            istream = handle
        runner = person_git(repo) if as_person else repo.git
        status, out, err = runner.execute(
            ["git", "-c", "core.quotePath=false", *args],
            istream=istream,
            env=dict(env or {}),
            with_extended_output=True,
            with_exceptions=False,
            stdout_as_string=False,
            strip_newline_in_stdout=False,
        )
    if status != 0:
        text = _text(out) + _text(err)
        raise GitFailed(args[0] if args else "", status, text)
    if args[:1] == ("update-ref",):
        record_update(args, stdin)  # frogtui's own refs, also in the session folder (vcs/verify.py)
    return out


def _text(data: bytes | str) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


@contextlib.contextmanager
def temporary_index(repo: git.Repo, tree: str | None) -> Iterator[dict[str, str]]:
    """A private index holding ``tree`` (empty when None), as an environment for ``run_git``."""
    with tempfile.TemporaryDirectory(prefix="index-", dir=process_folder()) as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), **LITERAL_PATHS}
        if tree is None:
            run_git(repo, "read-tree", "--empty", env=env)
        else:
            run_git(repo, "read-tree", tree, env=env)
        yield env


def empty_tree(repo: git.Repo) -> str:
    """The sha of the empty tree in this repository's hash format."""
    return run_git(repo, "mktree", stdin=b"").decode().strip()


def head_commit(repo: git.Repo) -> str | None:
    """The sha HEAD points at, or None on an unborn branch."""
    try:
        return run_git(repo, "rev-parse", "--verify", "-q", "HEAD^{commit}").decode().strip() or None
    except GitFailed:
        return None


def tree_of(repo: git.Repo, commit: str | None) -> str:
    """The tree of ``commit`` (the empty tree for None)."""
    if commit is None:
        return empty_tree(repo)
    return run_git(repo, "rev-parse", f"{commit}^{{tree}}").decode().strip()


@dataclass(frozen=True)
class RepoState:
    """What frogtui recorded about the repository when the session started.

    Attributes:
        repo: the gitpython repository.
        root: the top of its working tree.
        session: the session id (names the private refs ``refs/frogtui/<session>/...``).
        start_commit: HEAD at the start, None on an unborn branch.
        start_tree: the working tree at the start (tracked and untracked, minus ignored files).
        start_nested: nested git repositories (not submodules) there at the start, left out of
            ``start_tree`` (``vcs.nested``); unknown, so empty, after a resume.
    """

    repo: git.Repo
    root: Path
    session: str
    start_commit: str | None
    start_tree: str
    start_nested: tuple[str, ...] = ()

    @property
    def ref_prefix(self) -> str:
        return f"refs/frogtui/{self.session}"


def discover(path: str | os.PathLike[str], session: str) -> RepoState | None:
    """Find the repository holding ``path`` and record its state; None when there is none.

    The starting working tree is saved under ``refs/frogtui/<session>/start`` so it outlives the
    process (rewind and review work after a restart).
    """
    repo = open_repo(path)
    if repo is None or repo.bare or repo.working_tree_dir is None:
        return None
    start = snapshot(repo)
    state = RepoState(
        repo=repo,
        root=Path(repo.working_tree_dir),
        session=session,
        start_commit=head_commit(repo),
        start_tree=start.tree,
        start_nested=start.nested,
    )
    run_git(repo, "update-ref", "-m", "frogtui: session start", f"{state.ref_prefix}/start", state.start_tree)
    return state


@dataclass(frozen=True)
class GitState:
    """The repository's branch and how many files differ from HEAD (or are untracked)."""

    branch: str
    changed: int


def read_git_state(root: str | os.PathLike[str]) -> GitState | None:
    """The branch and the number of changed files (``git status``); None outside a repository."""
    repo = open_repo(root)
    if repo is None or repo.bare:
        return None
    try:
        out = run_git(repo, "status", "--porcelain=v1", "--branch", "--untracked-files=normal")
    except FrogtuiError:  # git failed, or the git folder changed under it (gitguard)
        return None
    lines = out.decode("utf-8", "replace").splitlines()
    branch = "?"
    if lines and lines[0].startswith("## "):
        head = lines.pop(0)[3:]
        branch = head.split("...")[0].removeprefix("No commits yet on ")
        if branch.startswith("HEAD (no branch)"):
            branch = "detached"
    return GitState(branch=branch, changed=len(lines))


def session_patch(state: RepoState | None) -> Callable[[], str]:
    """A function giving the trajectory's ``output_patch``: the binary-safe diff from the session's
    starting working tree to the working tree now (the person's earlier changes excluded); always
    '' outside a repository or when git cannot say (the run ended on that failure)."""
    if state is None:
        return lambda: ""

    def patch() -> str:
        try:
            return diff_trees(state.repo, state.start_tree, snapshot_tree(state.repo))
        except FrogtuiError:  # git failed or the repository vanished: the run's error says why
            return ""

    return patch


def not_a_repo_message(path: str | os.PathLike[str]) -> str:
    """The one line shown when ``path`` is outside any repository."""
    return NOT_A_REPO.format(root=path)


def init_repo(path: str | os.PathLike[str]) -> git.Repo:
    """Run ``git init`` in ``path`` (what frogtui offers when the folder is not a repository).

    Raises:
        GitFailed: git could not create the repository.
    """
    executable, clean_path = pinned_git(path)  # never a git the folder holds (frogtui.programs)
    runner = GuardedGit(os.fspath(path))
    runner.executable = executable
    runner.update_environment(PATH=clean_path)
    try:
        runner.execute(["git", "init", "-q", os.fspath(path)])
    except git.exc.GitCommandError as err:
        raise GitFailed("init", err.status if isinstance(err.status, int) else 1, str(err.stderr or err)) from None
    return git.Repo(path)


def resume(path: str | os.PathLike[str], session: str | None = None) -> RepoState | None:
    """The state recorded for ``session`` (default: the newest session frogtui recorded in this
    repository: one with a session folder, so a planted ``refs/frogtui/<x>/start`` is never picked)
    from its ``start`` ref, checked against the session's record; when there is none, start
    recording now (``discover``).

    Raises:
        CheckpointForged: the start ref is not what frogtui recorded.
    """
    repo = open_repo(path)
    if repo is None or repo.bare or repo.working_tree_dir is None:
        return None
    refs = decode_refs(run_git(repo, "for-each-ref", "--sort=-refname", "--format=%(refname)", "refs/frogtui/"))
    starts = [r for r in refs if r.endswith("/start") and (r == f"refs/frogtui/{session}/start" or session is None and record_path(r))]
    if not starts:
        return discover(path, session or time.strftime("%Y%m%d-%H%M%S"))
    name = starts[0][len("refs/frogtui/") : -len("/start")]
    tree = run_git(repo, "rev-parse", starts[0]).decode().strip()
    check_ref(starts[0], tree)
    return RepoState(repo, Path(repo.working_tree_dir), name, head_commit(repo), tree)


def unused_ref(repo: git.Repo, base: str) -> str:
    """``base`` itself when no such ref exists yet, else the first free ``base.<n>`` (n = 2, 3...):
    saved trees are never overwritten."""
    out = run_git(repo, "for-each-ref", "--format=%(refname)", base, f"{base}.*")
    taken = set(decode_refs(out))
    if base not in taken:
        return base
    n = 2
    while f"{base}.{n}" in taken:
        n += 1
    return f"{base}.{n}"


def decode_refs(out: bytes) -> list[str]:
    return [line for line in out.decode("utf-8", "surrogateescape").splitlines() if line]
