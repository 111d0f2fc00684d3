"""The person's accept/reject choices in the review, remembered across commits, reopening the
screen and resuming the session, until the person changes them.

A choice is keyed by what the change is (its file, the lines it removes and adds; a whole-file
change by its blob ids), not by where it is: after a commit of other hunks the line numbers move,
and the same change keeps its choice. The choices live in the repository, as a JSON blob under
``refs/frogtui/<session>/review`` (beside the session's checkpoints), so a resumed session finds them.
Like a checkpoint, the ref must be what frogtui recorded in the session folder and the blob must
hash to its name (``verify.py``): choices planted by a command are not used.
"""
from __future__ import annotations

import hashlib
import json
import threading

from frogtui.vcs.hunks import ChangeGroup, FileChange, encode
from frogtui.vcs.repository import GitFailed, RepoState, run_git
from frogtui.vcs.verify import CheckpointForged, check_ref

CHOICES_MAX = 20_000
"""The most choices kept (the oldest go first): a bound on the blob written on each toggle."""


def choice_key(change: FileChange, group: ChangeGroup) -> str:
    """What identifies ``group`` of ``change`` across reloads: its path and its content."""
    if change.whole:
        parts = ("whole", change.raw)
    elif group.id == change.mode_group:
        parts = ("mode", "\n".join(line for line in change.header if line.startswith(("old mode ", "new mode "))))
    else:
        parts = ("lines", "\0".join(group.removed), "\0".join(group.added))
    digest = hashlib.sha1()
    for part in (change.path, *parts):
        digest.update(encode(part) + b"\0\1")
    return digest.hexdigest()


class ReviewChoices:
    """The choices the person made in the review of one session (thread-safe).

    Args:
        state: the session's repository state (names the ref).
    """

    def __init__(self, state: RepoState) -> None:
        self.state = state
        self.ref = f"{state.ref_prefix}/review"
        self._lock = threading.Lock()
        self._choices: dict[str, bool] | None = None
        self._saved: dict[str, bool] = {}
        self._seen: set[str] = set()
        """The changes shown in full in this review (kept across reloads, not saved)."""
        self.problem = ""
        """Why the saved choices were not used (they were changed outside frogtui), or ''."""

    def _loaded(self) -> dict[str, bool]:
        if self._choices is None:
            self._choices = {}
            try:
                data = json.loads(self._read())
            except GitFailed:  # no choices saved yet
                data = {}
            except (CheckpointForged, ValueError) as err:
                self.problem = f"your earlier review choices were not used: {err}"
                data = {}
            if isinstance(data, dict):
                self._choices = {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, bool)}
            self._saved = dict(self._choices)
        return self._choices

    def _read(self) -> bytes:
        """The saved blob, checked against the session's record and its own name.

        Raises:
            GitFailed: there is no such ref.
            CheckpointForged: the ref or the blob is not what frogtui wrote.
        """
        repo = self.state.repo
        sha = run_git(repo, "rev-parse", "--verify", "-q", f"{self.ref}^{{blob}}").decode().strip()
        check_ref(self.ref, sha)
        data = run_git(repo, "cat-file", "blob", sha)
        if run_git(repo, "hash-object", "--stdin", stdin=data).decode().strip() != sha:
            raise CheckpointForged(f"{self.ref} names a blob whose content was replaced; not using it")
        return data

    def apply(self, change: FileChange) -> None:
        """Set each group of ``change`` the person chose before to that choice."""
        with self._lock:
            choices = self._loaded()
            for group in change.groups:
                key = choice_key(change, group)
                chosen = choices.get(key)
                if chosen is not None:
                    group.accepted = chosen
                group.seen = key in self._seen

    def saw(self, change: FileChange, group: ChangeGroup) -> None:
        """Remember that every line of ``group`` (of ``change``) was on the person's screen."""
        with self._lock:
            self._seen.add(choice_key(change, group))

    def choose(self, change: FileChange, groups: list[ChangeGroup]) -> None:
        """Record the current state of ``groups`` (of ``change``) as the person's choice."""
        with self._lock:
            choices = self._loaded()
            for group in groups:
                key = choice_key(change, group)
                choices.pop(key, None)  # re-inserted last: the newest choices are kept longest
                choices[key] = group.accepted
            while len(choices) > CHOICES_MAX:
                del choices[next(iter(choices))]

    def save(self) -> None:
        """Write the choices to the repository when they changed since the last save."""
        with self._lock:
            choices = dict(self._loaded())
            if choices == self._saved:
                return
            blob = run_git(self.state.repo, "hash-object", "-w", "--stdin", stdin=json.dumps(choices).encode()).decode().strip()
            run_git(self.state.repo, "update-ref", "-m", "frogtui: review choices", self.ref, blob)
            self._saved = choices
