"""The submodules of a repository, read from its index (which the sandbox cannot write), so the
sandbox can pin them: each submodule's folder stays where it is and its ``.git`` is read-only.

Without this a sandboxed command could replace ``sub/.git`` (a file in the writable working tree)
with a repository of its own whose config sets ``core.fsmonitor``: the person's next ``git status``
recurses into submodules and runs it, outside the sandbox.

The index is parsed here (no git process per command; formats 2 to 4, SHA-1 and SHA-256) and the
result kept until the index file changes.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

GITLINK = 0o160000
MAX_NESTING = 4
"""How deep submodules of submodules are followed."""

_CACHE: dict[str, tuple[tuple[int, int, int], list[str]]] = {}


def gitlinks(index: str, hash_len: int = 20) -> list[str]:
    """The paths of the gitlinks (submodules) in the index file ``index``; [] when it cannot be read."""
    try:
        info = os.stat(index)
    except OSError:
        return []
    key = (info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _CACHE.get(index)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        data = Path(index).read_bytes()
        found = _parse(data, hash_len)
    except (OSError, ValueError, struct.error, IndexError):
        found = []
    _CACHE[index] = (key, found)
    return found


def _parse(data: bytes, hash_len: int) -> list[str]:
    if struct.pack(">I", GITLINK) not in data:  # no gitlink at all: skip the walk (a scan, ~15 ms per 100k files)
        return []
    signature, version, count = struct.unpack_from(">4sII", data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        return []
    at, previous, found = 12, b"", []
    for _ in range(count):
        start = at
        mode = struct.unpack_from(">I", data, at + 24)[0]
        at += 40 + hash_len
        flags = struct.unpack_from(">H", data, at)[0]
        at += 2 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:
            strip, at = _varint(data, at)
            end = data.index(b"\0", at)
            path = previous[: len(previous) - strip] + data[at:end]
            at = end + 1
        else:
            end = data.index(b"\0", at)
            path = data[at:end]
            at = start + ((end - start + 8) & ~7)
        previous = path
        if mode & 0o170000 == GITLINK:
            found.append(os.fsdecode(path))
    return found


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """git's offset varint (``decode_varint``)."""
    byte = data[at]
    value = byte & 0x7F
    while byte & 0x80:
        at += 1
        byte = data[at]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, at + 1


def submodule_paths(work_tree: str, git_dir: str, depth: int = 0) -> list[tuple[str, str | None]]:
    """Every submodule folder under ``work_tree`` (nested ones too, through their git dirs) as
    (folder, its ``.git`` entry or None when it has none): absolute paths."""
    hash_len = 32 if _sha256(git_dir) else 20
    found: list[tuple[str, str | None]] = []
    for rel in gitlinks(os.path.join(git_dir, "index"), hash_len):
        folder = os.path.normpath(os.path.join(work_tree, rel))
        dot_git = os.path.join(folder, ".git")
        if not folder.startswith(work_tree.rstrip("/") + "/") or os.path.realpath(folder) != folder or not os.path.isdir(folder):
            continue  # gone, or now reached through a symlink (a bind there would land elsewhere)
        found.append((folder, dot_git if os.path.lexists(dot_git) and not os.path.islink(dot_git) else None))
        inner = _git_dir_of(dot_git)
        if inner and depth < MAX_NESTING:
            found += submodule_paths(folder, inner, depth + 1)
    return found


def _git_dir_of(dot_git: str) -> str | None:
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as handle:
            line = handle.read(4096).strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    return os.path.realpath(os.path.join(os.path.dirname(dot_git), line[len("gitdir:"):].strip()))


def _sha256(git_dir: str) -> bool:
    try:
        with open(os.path.join(git_dir, "config"), encoding="utf-8", errors="replace") as handle:
            return "objectformat=sha256" in handle.read(65536).lower().replace(" ", "").replace("\t", "")
    except OSError:
        return False
