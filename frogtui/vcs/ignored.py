"""What changed under the repository's ignored paths (``.venv/``, ``node_modules/``, ``.env``).

Checkpoints, the review and the patch see only what git tracks or would add, so a command that
writes ``.venv/bin/git`` or deletes ``.env`` changes nothing they show, and rewind cannot put it
back. To say so, the ignored files are fingerprinted (path, size, modification time, inode, mode;
no content read) before the session's first file-changing action (``Checkpoints``) and compared
with the tree at the run's end, in the review and at a rewind.

Caches and build outputs that nothing runs later (``__pycache__``, ``.pytest_cache``, ``target/``…:
``CACHE_FOLDERS``) are told apart (``quiet``): every Python run writes them, and a warning on each
run is one people learn to ignore. An executable file among them is never quiet.

``git ls-files --others --ignored --exclude-standard --directory`` names the ignored files and
folders (git does not look inside an ignored folder); the folders are walked here, links not
followed. The walk stops after ``MAX_FILES`` files: then the fingerprint says it is incomplete and
the report says which folder was not looked at in full.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

import git

from frogtui.vcs.hunks import decode
from frogtui.vcs.repository import GitFailed, run_git

MAX_FILES = 200_000
"""Ignored files and folders looked at, at most (a large ``node_modules`` has about 100,000)."""
SHOWN = 8
"""Paths named in one line at most (``describe``)."""
GROUP = 3
"""More changed files than this under one ignored folder are named as the folder (``grouped``)."""
CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".nyc_output", ".parcel-cache"})
"""Cache folders, wherever they are."""
CACHE_TOPS = ("target", "htmlcov", "node_modules/.cache", ".next/cache", ".coverage", ".eslintcache")
"""Caches and build outputs at the repository's top (Cargo's and Maven's ``target``, coverage,
the JavaScript tools' caches)."""


@dataclass(frozen=True)
class IgnoredFiles:
    """The ignored files of a working tree at one moment.

    Attributes:
        files: each ignored file (relative, ``/``-separated; a link counts as a file, an empty
            folder as ``name/``) with its fingerprint.
        tops: the ignored files and folders git named (the folders walked).
        unchecked: the tops not looked at in full: the one where ``MAX_FILES`` was reached and
            every one after it.
    """

    files: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    tops: tuple[str, ...] = ()
    unchecked: tuple[str, ...] = ()


def ignored_files(repo: git.Repo) -> IgnoredFiles:
    """Fingerprint every ignored file in ``repo``'s working tree (``.git`` left out).

    Raises:
        GitFailed: git could not list them.
    """
    root = repo.working_tree_dir or "."
    out = run_git(repo, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z")
    files: dict[str, tuple[int, int, int, int]] = {}
    tops = tuple(decode(raw).rstrip("/") for raw in out.split(b"\0") if raw)
    budget = [MAX_FILES]
    for n, top in enumerate(tops):
        if not _walk(root, top, files, budget):
            return IgnoredFiles(files, tops, tops[n:])
    return IgnoredFiles(files, tops)


def _walk(root: str, top: str, files: dict[str, tuple[int, int, int, int]], budget: list[int]) -> bool:
    """Add ``top`` (a file or a folder, relative to ``root``) and what it holds; False when the
    budget (entries, folders included) ran out."""
    pending = [top]
    while pending:
        relative = pending.pop()
        budget[0] -= 1
        if budget[0] < 0:
            return False
        path = os.path.join(root, relative)
        try:
            info = os.lstat(path)
        except OSError:  # gone meanwhile
            continue
        if not stat.S_ISDIR(info.st_mode):
            files[relative] = (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)
            continue
        try:
            names = os.listdir(path)
        except OSError:
            continue
        if not names:
            files[relative + "/"] = (0, 0, info.st_ino, info.st_mode)  # an empty folder counts too
        pending.extend(f"{relative}/{name}" for name in names)
    return True


def changed(before: IgnoredFiles, after: IgnoredFiles) -> list[str]:
    """The ignored paths created, changed or deleted from ``before`` to ``after``, sorted (none
    under a top that either did not look at in full)."""
    unchecked = before.unchecked + after.unchecked
    names = set(before.files) | set(after.files)
    return sorted(p for p in names if before.files.get(p) != after.files.get(p) and not _under(p, unchecked))


def _under(path: str, tops: tuple[str, ...]) -> bool:
    return any(path == top or path.startswith(top + "/") for top in tops)


def grouped(paths: list[str], tops: tuple[str, ...] = ()) -> list[str]:
    """``paths``, those under one ignored folder of ``tops`` with more than ``GROUP`` of them
    changed given as that folder once (``__pycache__/ (12 files)``)."""
    under: dict[str, list[str]] = {}
    for path in paths:
        top = next((t for t in tops if path.startswith(t + "/")), path)
        under.setdefault(top, []).append(path)
    result = []
    for top, inside in under.items():
        result.extend(inside if len(inside) <= GROUP else [f"{top}/ ({len(inside)} files)"])
    return sorted(result)


def is_cache(path: str) -> bool:
    """Whether ``path`` lies in a cache or a build output (``CACHE_NAMES``, ``CACHE_TOPS``): what a
    tool makes again, so losing it loses nothing."""
    name = path.rstrip("/")
    return any(part in CACHE_NAMES for part in name.split("/")) or any(name == top or name.startswith(top + "/") for top in CACHE_TOPS)


def quiet(path: str, after: IgnoredFiles) -> bool:
    """Whether a changed ignored ``path`` is a cache or a build output nothing runs later
    (``CACHE_NAMES``, ``CACHE_TOPS``), and not an executable file."""
    if not is_cache(path):
        return False
    found = after.files.get(path)
    return found is None or not (stat.S_ISREG(found[3]) and found[3] & 0o111)


def split_report(before: IgnoredFiles, after: IgnoredFiles) -> tuple[list[str], list[str]]:
    """What changed from ``before`` to ``after`` as (``report``'s lines without the caches, the
    caches ``grouped``): the first a warning, the second a quiet summary."""
    paths = changed(before, after)
    caches = [p for p in paths if quiet(p, after)]
    kept = IgnoredFiles({p: f for p, f in after.files.items() if p not in caches}, after.tops, after.unchecked)
    was = IgnoredFiles({p: f for p, f in before.files.items() if p not in caches}, before.tops, before.unchecked)
    return report(was, kept), grouped(caches, before.tops + after.tops)


def report(before: IgnoredFiles, after: IgnoredFiles) -> list[str]:
    """What changed from ``before`` to ``after``, ``grouped``; the folder where a walk stopped
    is named too."""
    found = grouped(changed(before, after), before.tops + after.tops)
    unchecked = list(dict.fromkeys(before.unchecked + after.unchecked))
    if unchecked:
        found.append(f"not checked (more than {MAX_FILES} ignored files and folders): {', '.join(unchecked[:SHOWN])}"
                     + (f" and {len(unchecked) - SHOWN} more" if len(unchecked) > SHOWN else ""))
    return found


def describe(paths: list[str]) -> str:
    """``paths`` in one short line: the first ``SHOWN``, then how many more."""
    return ", ".join(paths[:SHOWN]) + (f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else "")


def ignored_among(repo: git.Repo, paths: list[str] | tuple[str, ...]) -> set[str]:
    """The paths among ``paths`` (relative to the working tree; they need not exist) that git
    ignores, by the ignore files of the tree as it is (a tracked file is never ignored).
    A proposal's effects are grouped and judged by it (``approval.proposals``).

    Raises:
        GitFailed: git could not say.
    """
    if not paths:
        return set()
    # check-ignore refuses every pathspec magic, ``literal`` (GIT_LITERAL_PATHSPECS) too: each
    # path goes as ``./path`` instead, where no magic is read (a name may start with ``:(``)
    stdin = b"".join(b"./" + path.encode("utf-8", "surrogateescape") + b"\0" for path in paths)
    try:
        out = run_git(repo, "check-ignore", "-z", "--stdin", env={"GIT_LITERAL_PATHSPECS": "0"}, stdin=stdin)
    except GitFailed as err:
        if err.status == 1:  # none of them is ignored
            return set()
        raise
    return {decode(raw)[2:] for raw in out.split(b"\0") if raw.startswith(b"./")}
