"""Symlinks a command reaches without naming them: the matches of a glob (``cat *`` with a link
``notes -> ~/.ssh/id_rsa`` in the repository) and every link under a folder a program reads
following links (``grep -R``, ``rg -L``). The file system is looked at here, for ``facts``."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frogtui.approval.facts import PathFact

MAX_ENTRIES = 20_000
"""How many names a glob or a folder may have before what it reaches is called unknown."""


def glob_matches(pattern: str, *, dotglob: bool = False) -> list[str] | None:
    """What the absolute shell glob ``pattern`` matches now (None: more than ``MAX_ENTRIES``)."""
    found: list[str] = []
    for path in glob.iglob(pattern, include_hidden=dotglob):
        if len(found) >= MAX_ENTRIES:
            return None
        found.append(path)
    return found


def links_under(folder: str) -> list[str] | None:
    """The symlinks under ``folder`` (not inside ``.git``; None: more than ``MAX_ENTRIES`` names)."""
    found: list[str] = []
    seen = 0
    for top, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            seen += 1
            if seen > MAX_ENTRIES:
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
