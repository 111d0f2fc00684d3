"""A repository's own history, read for ``frogtui eval mine``: its recent commits (first parent,
merges left out), the files each changed, and the diff of a part of them. Read-only: nothing here
writes to the repository (the pinned, hardened git of ``gitguard``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from frogtui.errors import FrogtuiError
from frogtui.vcs.repository import LITERAL_PATHS, GitFailed, run_git
from frogtui.vcs.snapshot import open_repo


class HistoryFailed(FrogtuiError):
    """The repository's history could not be read."""


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parent: str
    message: str
    """The whole commit message (subject, body, trailers)."""
    date: str
    """The author date, ISO 8601."""
    changed: tuple[str, ...]
    """Paths it changed against its parent (renames as a deletion and an addition)."""


def _repo(root: Path):  # noqa: ANN202 - a git.Repo
    repo = open_repo(root)
    if repo is None or repo.working_tree_dir is None:
        raise HistoryFailed(f"{root} is not in a git repository")
    return repo


def recent_commits(root: Path, last: int, rev: str = "HEAD") -> list[CommitInfo]:
    """The last ``last`` commits of ``rev``'s first-parent history that have exactly one parent,
    newest first.

    Raises:
        HistoryFailed: not a repository, or git failed.
    """
    repo = _repo(root)
    try:
        out = run_git(repo, "rev-list", "--first-parent", "--no-merges", f"--max-count={last}", "--parents", rev, "--")
    except GitFailed as err:
        raise HistoryFailed(f"cannot read the history of {root}: {err}") from None
    commits = []
    for line in out.decode().splitlines():
        shas = line.split()
        if len(shas) != 2:  # a root commit has no parent to start from
            continue
        sha, parent = shas
        try:
            message = run_git(repo, "show", "-s", "--format=%B", sha).decode("utf-8", "replace").strip()
            date = run_git(repo, "show", "-s", "--format=%aI", sha).decode().strip()
            names = run_git(repo, "diff", "--name-only", "-z", "--no-renames", parent, sha).decode("utf-8", "surrogateescape")
        except GitFailed as err:
            raise HistoryFailed(f"cannot read commit {sha[:10]}: {err}") from None
        commits.append(CommitInfo(sha, parent, message, date, tuple(name for name in names.split("\0") if name)))
    return commits


def diff_of(root: Path, parent: str, sha: str, paths: list[str]) -> str:
    """The binary-safe diff from ``parent`` to ``sha`` of ``paths`` only ('' for none).

    Raises:
        HistoryFailed: git failed.
    """
    if not paths:
        return ""
    try:
        return run_git(_repo(root), "diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", parent, sha,
                       "--", *paths, env=LITERAL_PATHS).decode("utf-8", "surrogateescape")
    except GitFailed as err:
        raise HistoryFailed(f"cannot read the diff of {sha[:10]}: {err}") from None


def origin_name(root: Path) -> str:
    """``OWNER/NAME`` from the ``origin`` remote's URL when it names one, else the folder's name."""
    try:
        url = run_git(_repo(root), "config", "--get", "remote.origin.url").decode().strip()
    except (GitFailed, HistoryFailed):
        url = ""
    parts = [p for p in url.replace(":", "/").removesuffix(".git").split("/") if p]
    if len(parts) >= 2 and url:
        return f"{parts[-2]}/{parts[-1]}"
    return Path(root).resolve().name
