"""frogtui's own programs (git, bwrap): absolute paths from a ``PATH`` the repository has no part in.

What frogtui runs outside the sandbox must never be something a sandboxed command could have
written. An activated in-repo virtualenv (``PATH=$repo/.venv/bin:...``), ``node_modules/.bin`` or a
relative or empty entry (the current folder) puts the repository on ``PATH``, and the sandbox may
write there: a ``.venv/bin/git`` would then run, unsandboxed, at the next checkpoint. So the
``PATH`` frogtui started with is read once, and kept without:

* empty and relative entries (they name the current folder, whatever it is when a program runs);
* entries inside a git working tree (a folder with a ``.git`` above it: an in-repo ``.venv/bin``
  or ``node_modules/.bin`` of this repository or of any other, since ``--repo`` may name one
  only after git is imported), in a virtualenv (``pyvenv.cfg`` beside it) or under a
  ``node_modules`` folder anywhere, inside the folder frogtui started in (unless that is ``/``), or
  inside a folder a caller names (``for_trees``: the workspace, which may not be a repository);
  symbolic links followed.

A program is the first executable file of that name on the clean ``PATH`` whose real path is also
outside those folders; frogtui runs it by that absolute path, with the clean ``PATH`` in its
environment (so what git itself runs, a filter or a credential helper, is found there too).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass


def _inside(path: str, trees: Iterable[str]) -> bool:
    return any(path == tree or path.startswith(tree.rstrip("/") + "/") for tree in trees)


def _enclosing_work_tree(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding a ``.git`` entry (a repository's working
    tree), found without running git."""
    current = folder
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def clean_entries(path_value: str, trees: Iterable[str]) -> tuple[str, ...]:
    """The entries of ``path_value`` (a ``PATH``) that are absolute and, with symbolic links
    followed, outside every folder of ``trees``, any git working tree, any virtualenv and any
    ``node_modules``; each once, in order."""
    real_trees = [os.path.realpath(t) for t in trees]
    kept: list[str] = []
    for entry in path_value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        entry = os.path.normpath(entry)
        real = os.path.realpath(entry)
        if entry in kept or _inside(real, real_trees) or _inside(entry, real_trees) or _enclosing_work_tree(real) is not None:
            continue
        if "node_modules" in real.split("/") or os.path.isfile(os.path.join(os.path.dirname(real), "pyvenv.cfg")):
            continue  # a project's tools, wherever the project is (--repo may name it only after git is imported)
        kept.append(entry)
    return tuple(kept)


@dataclass(frozen=True)
class Programs:
    """Where frogtui finds its own programs.

    Attributes:
        entries: the clean ``PATH`` entries.
        trees: the folders no entry and no program may be inside (real paths).
    """

    entries: tuple[str, ...]
    trees: tuple[str, ...]

    @property
    def path(self) -> str:
        """The clean ``PATH``, for the environment of what frogtui runs."""
        return os.pathsep.join(self.entries)

    def which(self, name: str) -> str | None:
        """The absolute path of program ``name`` on the clean ``PATH`` (its real path outside
        ``trees`` too), None when there is none."""
        for entry in self.entries:
            candidate = os.path.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and not _inside(os.path.realpath(candidate), self.trees):
                return candidate
        return None

    def for_trees(self, *trees: str | os.PathLike[str]) -> Programs:
        """These programs, also kept out of ``trees`` (a repository opened later)."""
        more = tuple(os.path.realpath(t) for t in trees if os.path.realpath(t) not in self.trees)
        if not more:
            return self
        return Programs(clean_entries(os.pathsep.join(self.entries), more), self.trees + more)


@functools.cache
def at_start() -> Programs:
    """The programs as found from the ``PATH`` of this process's start (read at the first call:
    ``frogtui.vcs`` calls it before git is imported)."""
    start = os.path.realpath(os.getcwd())
    work_tree = _enclosing_work_tree(start)
    trees = tuple(dict.fromkeys(t for t in (start, work_tree) if t and t != "/"))
    return Programs(clean_entries(os.environ.get("PATH", os.defpath), trees), trees)


def which(name: str, *trees: str | os.PathLike[str]) -> str | None:
    """``at_start().for_trees(*trees).which(name)``."""
    return at_start().for_trees(*trees).which(name)
