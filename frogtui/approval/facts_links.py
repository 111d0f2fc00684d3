"""Symlinks a command reaches without naming them: the matches of a glob (``cat *`` with a link
``notes -> ~/.ssh/id_rsa`` in the repository) and every link under a folder a program reads
following links (``grep -R``, ``rg -L``). The file system is looked at here, for ``facts``."""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Callable
from dataclasses import replace

from frogtui.approval.budget import Budget
from frogtui.approval.path_fact import PathFact

MAX_ENTRIES = 20_000
"""How many names a glob or a folder may have before what it reaches is called unknown."""


def glob_matches(pattern: str, *, dotglob: bool = False, budget: Budget | None = None) -> list[str] | None:
    """What the absolute shell glob ``pattern`` matches now (None: more than ``MAX_ENTRIES``, or the
    budget ran out). One component at a time, as the shell does, counting every name looked at."""
    budget = budget or Budget()
    found = ["/"]
    parts = [p for p in pattern.split("/") if p]
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        following: list[str] = []
        for base in found:
            if not glob.has_magic(part):
                path = os.path.join(base, part)
                if not budget.spend():
                    return None
                if os.path.lexists(path) if last else os.path.isdir(path):
                    following.append(path)
                continue
            try:
                with os.scandir(base) as entries:
                    for entry in entries:
                        if not budget.spend():
                            return None
                        if not _name_matches(entry.name, part, dotglob):
                            continue
                        if last or _is_dir(entry):
                            following.append(os.path.join(base, entry.name))
            except OSError:
                continue
        found = following
        if not found:
            return []
        if len(found) >= MAX_ENTRIES:
            budget.stop(f"a glob reaches more than {MAX_ENTRIES:,} names and the analysis stopped")
            return None
    return sorted(found)


def _name_matches(name: str, part: str, dotglob: bool) -> bool:
    if name.startswith(".") and not (dotglob or part.startswith(".")):
        return False
    return fnmatch.fnmatchcase(name, part)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows symlinks, as the shell does
    except OSError:
        return False


def links_under(folder: str, budget: Budget | None = None) -> list[str] | None:
    """The symlinks under ``folder`` (not inside ``.git``; None: more than ``MAX_ENTRIES`` names,
    or the budget ran out)."""
    budget = budget or Budget()
    found: list[str] = []
    seen = 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            seen += 1
            if seen > MAX_ENTRIES or not budget.spend():
                return None
            if os.path.islink(os.path.join(top, name)):
                found.append(os.path.join(top, name))
    return found


def through_links(fact: PathFact, paths: list[str] | None, resolve: Callable[[str], PathFact]) -> PathFact:
    """``fact`` made as strict as the worst of ``paths`` it reaches (each resolved by ``resolve``):
    a secret store is ``holds_secret`` (reading is below the floor; deleting the link is not), a
    place outside the repository is ``reaches``; too many to look at is unknown."""
    if paths is None:
        return replace(fact, known=False)
    for path in paths:
        linked = resolve(path)
        if linked.secret:
            return replace(fact, holds_secret=linked.secret)
        if linked.known and not linked.inside and not linked.special and fact.reaches is None:
            fact = replace(fact, reaches=linked.real)
    return fact
