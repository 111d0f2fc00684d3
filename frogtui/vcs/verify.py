"""Checkpoints the model cannot forge: what rewind and review trust is checked before use.

* Every ``refs/frogtui/<session>/...`` ref frogtui writes is also written to
  ``checkpoints.txt`` in the session's folder (outside the repository, read-only in the sandbox).
  A checkpoint read back from git (after a restart) must match that record. A checkpoint of an
  unchanged tree is recorded when it is taken, and again when its ref is written later
  (``checkpoints.py``); one whose ref never reached git (a crash) is read from the record.
* Objects are rehashed before rewind writes them: a loose object overwritten with other bytes
  under the same name (git does not check on read) is refused.

A session without a record (older frogtui, or no session folder) is not checked against one.
"""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

import git

from frogtui.config import sessions_dir
from frogtui.errors import FrogtuiError

RECORD = "checkpoints.txt"
PREFIX = "refs/frogtui/"


class CheckpointForged(FrogtuiError):
    """A checkpoint ref or object is not what frogtui wrote."""


def record_path(ref: str) -> Path | None:
    """The record file for a frogtui ref (None for other refs or when the session has no folder)."""
    if not ref.startswith(PREFIX):
        return None
    session = ref[len(PREFIX):].split("/", 1)[0]
    folder = sessions_dir() / session
    return folder / RECORD if session and "." not in session[:1] and folder.is_dir() else None


def record_update(args: tuple[str, ...], stdin: bytes | None = None) -> None:
    """Record what a successful ``git update-ref`` (``args`` as given to it, ``stdin`` for
    ``--stdin``) did to frogtui's refs."""
    words = [w for n, w in enumerate(args[1:]) if w != "-m" and (n == 0 or args[n] != "-m")]
    if "--stdin" in words:
        changes = [_stdin_change(line.split()) for line in (stdin or b"").decode("utf-8", "replace").splitlines()]
    else:
        delete = words[:1] == ["-d"]
        words = words[1:] if delete else words
        changes = [(words[0], "-" if delete or len(words) < 2 else words[1])] if words else []
    for ref, value in changes:
        path = record_path(ref) if ref else None
        if path is not None:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"{ref} {value}\n")


def _stdin_change(words: list[str]) -> tuple[str, str]:
    """(ref, new value) of one ``update-ref --stdin`` command ('' for the ones that change nothing)."""
    if len(words) >= 3 and words[0] in ("update", "create"):
        return words[1], words[2]
    if len(words) >= 2 and words[0] == "delete":
        return words[1], "-"
    return "", ""


def _last_values(path: Path | None) -> dict[str, str] | None:
    """Each ref in a record with the value frogtui last wrote to it ('-': deleted), in the order
    first written; None when there is no record."""
    if path is None or not path.is_file():
        return None
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, sha = line.partition(" ")
        values[name] = sha
    return values


def recorded(ref: str) -> str | None:
    """The value frogtui last wrote to ``ref`` ('-' when it deleted it); None when there is no
    record to check against."""
    values = _last_values(record_path(ref))
    return None if values is None else values.get(ref, "-")


def recorded_under(prefix: str) -> dict[str, str]:
    """Every ref under ``prefix`` that frogtui wrote and did not delete, with its last value, in
    the order first written (empty when there is no record)."""
    values = _last_values(record_path(prefix + "/")) or {}
    return {name: sha for name, sha in values.items() if name.startswith(prefix + "/") and sha != "-"}


def check_ref(ref: str, sha: str) -> None:
    """Raise ``CheckpointForged`` when ``ref`` holds ``sha`` but frogtui recorded something else.

    Raises:
        CheckpointForged: one line naming the ref.
    """
    expected = recorded(ref)
    if expected is not None and expected != sha:
        raise CheckpointForged(f"{ref} is not what frogtui recorded in its session folder (it was changed outside frogtui); not using it")


def check_objects(repo: git.Repo, tree: str, paths: list[str]) -> None:
    """Rehash ``tree``, its subtrees and the blobs of ``paths`` in it; raise when one's content does
    not match its name.

    Raises:
        CheckpointForged: one line naming the object.
    """
    listing = repo.git.ls_tree("-r", "-t", "-z", "--full-tree", tree, stdout_as_string=False, strip_newline_in_stdout=False)
    wanted, shas = set(paths), [tree]
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        kind, sha = meta.split()[1].decode(), meta.split()[2].decode()
        if kind == "tree" or (kind == "blob" and name.decode("utf-8", "surrogateescape") in wanted):
            shas.append(sha)
    _rehash(repo, shas)


def _rehash(repo: git.Repo, shas: list[str]) -> None:
    algorithm = hashlib.sha256 if len(shas[0]) == 64 else hashlib.sha1
    with tempfile.TemporaryFile(prefix="frogtui-stdin-") as handle:
        handle.write("".join(f"{sha}\n" for sha in shas).encode())
        handle.seek(0)
        data = repo.git.execute(["git", "cat-file", "--batch"], istream=handle, stdout_as_string=False, strip_newline_in_stdout=False)
    at = 0
    for sha in shas:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        if len(header) != 3:
            raise CheckpointForged(f"checkpoint object {sha} is missing from the repository; not rewinding")
        kind, size = header[1], int(header[2])
        content = data[end + 1 : end + 1 + size]
        at = end + 2 + size
        if algorithm(kind + b" " + str(size).encode() + b"\0" + content).hexdigest() != sha:
            raise CheckpointForged(f"checkpoint object {sha} does not match its content (it was rewritten outside frogtui); not rewinding")
