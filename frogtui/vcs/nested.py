"""Nested git repositories in the working tree that are not submodules of the person's index
(a session's ``git init x``): left out of every snapshot, and named so that review, headless
runs and ``--commit`` can make them loud.

``git add --all`` records a nested repository with a commit as a gitlink (and fails outright,
"adding files failed", on one without a commit); either way the nested repository's own
``.git/config`` (``core.fsmonitor``, hooks) runs at the person's next git command inside it, and
whoever wrote it controls that. They are found from what the snapshot's ``git status`` already
lists: a tree without new untracked folders costs nothing more.
"""
from __future__ import annotations

import os

import git

from frogtui.vcs.hunks import decode

DANGER = "git commands run in it use its own config (core.fsmonitor, hooks), which whoever wrote it controls"
"""Why a nested repository is flagged."""


def leave_out(
    repo: git.Repo, env: dict[str, str], changed: list[bytes], untracked_dirs: list[bytes]
) -> tuple[list[bytes], tuple[str, ...]]:
    """The paths to ``git add`` instead of ``changed``, and the nested repositories left out.

    ``git status`` shows an untracked folder as one entry (``untracked_dirs``); a nested repository
    can only be in one of them (a gitlink of the person's index is tracked). Only then are those
    folders listed file by file (``ls-files -o`` shows a nested repository as ``dir/``); when one
    holds a nested repository, the folder's other files are added one by one.
    """
    if not untracked_dirs:
        return changed, ()
    literal = {**env, "GIT_LITERAL_PATHSPECS": "1"}
    out = repo.git.ls_files("-o", "--exclude-standard", "-z", "--", *map(os.fsdecode, untracked_dirs), env=literal,
                            stdout_as_string=False, strip_newline_in_stdout=False)
    entries = [p for p in out.split(b"\0") if p]
    nested = [p for p in entries if p.endswith(b"/")]
    if not nested:
        return changed, ()
    dirs = set(untracked_dirs)
    paths = [p for p in changed if p not in dirs] + [p for p in entries if not p.endswith(b"/")]
    return paths, tuple(sorted(decode(p[:-1]) for p in nested))


def folders(names: list[str] | tuple[str, ...]) -> str:
    return ", ".join(f"{name}/" for name in names)


def describe(names: list[str] | tuple[str, ...], *, by_session: bool = True) -> str:
    """One line naming nested repositories and why they are dangerous."""
    who = "the session created the" if by_session else "the working tree holds a"
    return f"{who} nested git repository {folders(names)} (not a submodule): {DANGER}; left out of checkpoints and review"


def created(now: tuple[str, ...], before: tuple[str, ...]) -> list[str]:
    """The nested repositories in ``now`` that were not there ``before``."""
    return [name for name in now if name not in before]
