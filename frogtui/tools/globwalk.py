"""A bounded glob: Python's ``glob(recursive=True)`` semantics (``**`` spans folders, ``*`` skips
hidden names unless the pattern starts with a dot), but a symlinked folder is never entered twice on
one path (``a -> .`` is not a loop), folders deeper than a cap are skipped, and the search stops at a
time and a result cap, saying so."""
from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

GLOB_TIME_S = 10.0
GLOB_MAX_RESULTS = 100_000
GLOB_MAX_DEPTH = 200
"""Folders deeper than this are not searched (each level is a Python frame: a tree 1,000 folders
deep would otherwise end in RecursionError)."""


@dataclass
class GlobSearch:
    """One search; ``stopped`` says why it ended early ('' when it ran to the end)."""

    time_s: float = GLOB_TIME_S
    max_results: int = GLOB_MAX_RESULTS
    max_depth: int = GLOB_MAX_DEPTH
    stopped: str = ""
    _deadline: float = field(default=0.0, repr=False)
    _halted: bool = field(default=False, repr=False)

    def files(self, pattern: str) -> list[str]:
        """The files matching the absolute ``pattern`` (unsorted, at most ``max_results``)."""
        self._deadline = time.monotonic() + self.time_s
        parts = pattern.split("/")
        base = "/" if pattern.startswith("/") else "."
        found: list[str] = []
        seen: set[str] = set()
        for path in self._match(base, [p for p in parts if p], frozenset(), 0):
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                found.append(path)
                if len(found) >= self.max_results:
                    self.stopped = f"stopped at {self.max_results} matches"
                    break
            if self._halted:
                break
        return found

    def _match(self, folder: str, parts: list[str], ancestors: frozenset[tuple[int, int]], depth: int) -> Iterator[str]:
        if time.monotonic() > self._deadline:
            self.stopped, self._halted = f"stopped after {self.time_s:.0f} s", True
            return
        if depth > self.max_depth:
            self.stopped = self.stopped or f"skipped folders more than {self.max_depth} levels deep"
            return
        if not parts:
            yield folder
            return
        head, rest = parts[0], parts[1:]
        if head == "**":
            yield from self._match(folder, rest, ancestors, depth)
            if not rest:  # a final ``**`` matches every name below, files included
                yield from (path for _, path in self._entries(folder, "*") if not os.path.isdir(path))
            for _name, path in self._subfolders(folder, "*", ancestors):
                yield from self._match(path, parts, ancestors | {self._key(path)}, depth + 1)
            return
        if not _magic(head):
            path = os.path.join(folder, head)
            if os.path.lexists(path):
                yield from self._match(path, rest, ancestors, depth + 1)
            return
        for _name, path in self._entries(folder, head):
            if rest and not os.path.isdir(path):
                continue
            yield from self._match(path, rest, ancestors, depth + 1)

    def _entries(self, folder: str, pattern: str) -> Iterator[tuple[str, str]]:
        try:
            with os.scandir(folder) as entries:
                names = sorted(entry.name for entry in entries)
        except OSError:
            return
        hidden_ok = pattern.startswith(".")
        for name in names:
            if (hidden_ok or not name.startswith(".")) and fnmatch.fnmatchcase(name, pattern):
                yield name, os.path.join(folder, name)

    def _subfolders(self, folder: str, pattern: str, ancestors: frozenset[tuple[int, int]]) -> Iterator[tuple[str, str]]:
        mine = ancestors | {self._key(folder)}
        for name, path in self._entries(folder, pattern):
            if os.path.isdir(path) and self._key(path) not in mine:
                yield name, path

    @staticmethod
    def _key(path: str) -> tuple[int, int]:
        try:
            info = os.stat(path)
        except OSError:
            return (-1, -1)
        return (info.st_dev, info.st_ino)


def _magic(part: str) -> bool:
    return any(ch in part for ch in "*?[")
