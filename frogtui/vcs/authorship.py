"""Who made a change the review shows: the session's steps, or the person while the session ran.

Every file-changing action of a session runs between two snapshots of the working tree: its
checkpoint (``vcs.checkpoints``, before it) and ``<checkpoint>-after`` (after it); an undo between
the tree it saved (``before-rewind``) and ``before-rewind-after``. What changed inside those pairs
is the session's; what changed between them (while a question was open, after the run, between
runs) is the person's. ``SessionWrites`` reads the pairs that frogtui recorded in the session
folder (never a ref git holds that frogtui did not write) and says, for one file, whose its
content is.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from frogtui.vcs.checkpoints import AFTER
from frogtui.vcs.hunks import decode
from frogtui.vcs.repository import RepoState, run_git
from frogtui.vcs.verify import recorded_under

ABSENT = "0" * 40
"""The blob of a file that is not there (git's null id)."""
Author = Literal["session", "during", "mixed"]
"""The session's alone; the person's alone, made during the session; both."""
_CHECKPOINT = re.compile(r"^\d+(\.\d+)?$")
"""A checkpoint's ref name: ``<step>`` or ``<step>.<action>``."""
_REWIND = re.compile(r"^before-rewind(\.\d+)?$")


@dataclass
class SessionWrites:
    """For each path, the contents the session's actions left (``wrote``) and those they found
    (``found``), blob ids (``ABSENT`` for no file)."""

    wrote: dict[str, set[str]] = field(default_factory=dict)
    found: dict[str, set[str]] = field(default_factory=dict)
    complete: bool = True
    """Every checkpoint has its after snapshot: False for a session recorded before frogtui took
    them, or an action cut short; then nothing can be told apart (``author`` says ``session``)."""

    def author(self, path: str, start: str, now: str) -> Author:
        """Whose the change of ``path`` from blob ``start`` (the session's start) to ``now`` is."""
        if not self.complete:
            return "session"
        wrote = self.wrote.get(path)
        if not wrote:
            return "during"
        if now not in wrote or not self.found.get(path, set()) <= wrote | {start}:
            return "mixed"  # the person changed it after the session last did, or before it did
        return "session"


def session_writes(state: RepoState) -> SessionWrites:
    """The session's actions' changes, from the pairs of trees recorded for ``state``'s session."""
    recorded = recorded_under(state.ref_prefix)
    writes = SessionWrites(complete=bool(recorded))  # no record (no session folder): nothing to tell apart
    for ref in recorded:
        name = ref.rsplit("/", 1)[1]
        checkpoint, rewind = bool(_CHECKPOINT.match(name)), bool(_REWIND.match(name))
        after_ref = ref + AFTER
        if not (checkpoint or rewind):
            continue
        if after_ref not in recorded:
            writes.complete = writes.complete and rewind  # a rewind that put nothing back has none
            continue
        before, after = recorded[ref], recorded[after_ref]
        if before == after:
            continue
        for path, (old, new) in changed_blobs(state, before, after).items():
            writes.wrote.setdefault(path, set()).add(new)
            writes.found.setdefault(path, set()).add(old)
    return writes


def changed_blobs(state: RepoState, before: str, after: str) -> dict[str, tuple[str, str]]:
    """Each path that differs between the trees ``before`` and ``after``: (its blob in before, in after)."""
    out = run_git(state.repo, "diff-tree", "-r", "-z", "--no-renames", before, after)
    fields = out.split(b"\0")
    blobs: dict[str, tuple[str, str]] = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if meta:
            parts = meta.decode().split()
            blobs[decode(path)] = (parts[2], parts[3])
    return blobs
