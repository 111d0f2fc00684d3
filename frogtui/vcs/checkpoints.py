"""Checkpoints before every mutating action, and rewinding the working tree to one of them.

A checkpoint is the working tree (tracked and untracked files, minus what .gitignore ignores)
written as a tree object through a temporary index and kept under a private ref:
``refs/frogtui/<session>/<step>`` for the first mutating action of a step, ``<step>.<n>`` for the
n-th. The person's index, stash and branches are never touched. Rewinding writes the files of the
checkpoint back (so a Bash command's effects are undone too: files it created are removed, files it
deleted come back) and leaves ignored files alone.

A checkpoint of a tree a written ref already holds (nothing changed since the last checkpoint, or
since the start) costs one git process (``git status``): its ref is recorded in the session folder
at once (``verify``) and written to git with the next ``update-ref`` (a checkpoint of a changed
tree, a rewind), by ``drop`` and by ``flush`` (the session core calls it when a run ends). A crash
before that loses at most such a ref, whose tree git keeps under the earlier one, and ``find``
reads it from the record.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from frogtui.errors import FrogtuiError
from frogtui.protocol import ToolCall
from frogtui.vcs.hunks import decode, encode
from frogtui.vcs.ignored import IgnoredFiles, ignored_files, report
from frogtui.vcs.ignored import describe as describe_ignored
from frogtui.vcs.nested import created, describe
from frogtui.vcs.repository import GitFailed, RepoState, head_commit, run_git, temporary_index, tree_of, unused_ref
from frogtui.vcs.snapshot import snapshot, snapshot_tree
from frogtui.vcs.verify import check_objects, check_ref, record_update, recorded, recorded_under

AFTER = "-after"
"""The suffix of the ref of the tree after a checkpointed action (or a rewind) ran."""


class NoCheckpoint(FrogtuiError):
    """There is no checkpoint for the step asked for."""


@dataclass(frozen=True)
class Checkpoint:
    step: int
    action: int
    """1 for the first mutating action of the step, 2 for the second..."""
    tool: str
    ref: str
    tree: str
    nested: tuple[str, ...] = ()
    """Nested git repositories (not submodules) in the working tree then, left out of ``tree``."""


@dataclass(frozen=True)
class RewindResult:
    step: int
    restored: list[str]
    """Files written back (changed or deleted since the checkpoint)."""
    removed: list[str]
    """Files created since the checkpoint, now removed."""
    saved_ref: str
    """The ref holding the tree as it was just before the rewind (never reused by a later one)."""
    message: str = field(default="")
    """Text for the model: what the rewind did."""
    kept: list[str] = field(default_factory=list)
    """Folders created since the checkpoint that were left in place (nested git repositories)."""
    not_restored: list[str] = field(default_factory=list)
    """Ignored paths (``.venv/``, ``.env``…) changed during the session, which no checkpoint holds
    (``Checkpoints.ignored_changed``)."""

    @property
    def summary(self) -> str:
        """Text for the person: what changed, and how to get back any file as it was just before
        (an edit they made themselves since the checkpoint is undone too, but kept there)."""
        changed = len(self.restored) + len(self.removed)
        parts = [f"Rewound to before step {self.step}: {changed} file(s) put back."]
        if changed:
            parts.append(
                f"The files as they were just before are kept in {self.saved_ref}: "
                f"`git restore --source={self.saved_ref} -- <file>` brings one back."
            )
        if self.kept:
            parts.append(f"Left in place (a nested repository): {', '.join(self.kept)}.")
        if self.not_restored:
            parts.append(f"Not restored (ignored by git, so in no checkpoint): {describe_ignored(self.not_restored)}.")
        return " ".join(parts)


class Checkpoints:
    """Takes a checkpoint before each mutating action; pass ``before_action`` to ``Agent``."""

    def __init__(self, state: RepoState, warn: Callable[[str], None] | None = None, *, watched: bool = False) -> None:
        self.state = state
        self.repo = state.repo
        self.watched = watched
        """A checkpoint of a tree the kernel saw no change in is the last one, without git
        (``vcs.watch``): for a session whose commands run in the sandbox, which cannot do what
        inotify cannot see (write through a hard link from outside, a mapping left open, a mount)."""
        self.taken: list[Checkpoint] = []
        self.warn = warn
        """Told one line when a checkpoint finds a nested repository the session created."""
        self._held = {state.start_tree}
        """Trees that refs frogtui wrote hold (so git keeps them): a checkpoint of one can wait."""
        self._waiting: list[tuple[str, str]] = []
        """(ref, tree) of checkpoints recorded but not yet written to git (``flush``)."""
        self._lock = threading.Lock()
        """Guards ``_waiting`` (the app's exit flushes while a run that would not stop may go on)."""
        self.ignored_before: IgnoredFiles | None = None
        """The ignored files before the first file-changing action (``vcs.ignored``), None before it."""

    def before_action(self, step: int, call: ToolCall) -> None:
        """Snapshot the working tree before ``call`` (Write, Edit or Bash) runs in ``step``."""
        action = 1 + sum(1 for c in self.taken if c.step == step)
        name = str(step) if action == 1 else f"{step}.{action}"
        ref = f"{self.state.ref_prefix}/{name}"
        if self.ignored_before is None:
            self.ignored_before = ignored_files(self.repo)
        taken = snapshot(self.repo, watched=self.watched)
        seen = self.taken[-1].nested if self.taken else self.state.start_nested
        new = created(taken.nested, seen)
        if taken.tree in self._held and not new:
            record_update(("update-ref", ref, taken.tree))
            with self._lock:
                self._waiting.append((ref, taken.tree))
        else:
            note = f"; {describe(new)}" if new else ""
            self._write(f"frogtui: before {call.name} (step {step}){note}", ref, taken.tree)
        self.taken.append(Checkpoint(step, action, call.name, ref, taken.tree, taken.nested))
        if new and self.warn is not None:
            self.warn(describe(new))

    def ignored_changed(self) -> list[str]:
        """The ignored paths (``.venv/``, ``node_modules/``, ``.env``…) created, changed or deleted
        since the first file-changing action, a folder with many such files named once; none
        before it. Neither the review nor rewind holds them.

        Raises:
            GitFailed: git could not list the ignored files.
        """
        if self.ignored_before is None:
            return []
        return report(self.ignored_before, ignored_files(self.repo))

    def after_action(self, step: int, call: ToolCall) -> None:
        """Snapshot the working tree after ``call`` ran (``<checkpoint ref>-after``): what the
        session changed is what changed between a checkpoint and its after snapshot; what changed
        between those pairs is the person's (``review.session_writes``)."""
        if not self.taken or self.taken[-1].step != step:
            return
        ref = self.taken[-1].ref + AFTER
        taken = snapshot(self.repo, watched=self.watched)
        if taken.tree in self._held:
            record_update(("update-ref", ref, taken.tree))
            with self._lock:
                self._waiting.append((ref, taken.tree))
        else:
            self._write(f"frogtui: after {call.name} (step {step})", ref, taken.tree)

    def restore(self, tools: dict[int, list[str]]) -> None:
        """After a resume: the checkpoints the session took before, from its record in the session
        folder (what undo goes back through). ``tools``: each step's file-changing calls' tools, in
        order (the ``action``-th checkpoint of a step was taken before the ``action``-th of them
        that got one; a name not known is shown as ``?``)."""
        found = []
        for ref, tree in recorded_under(self.state.ref_prefix).items():
            step, _, action = ref.rsplit("/", 1)[1].partition(".")
            if step.isdigit() and (action.isdigit() or not action):
                n, k = int(step), int(action or 1)
                names = tools.get(n, [])
                found.append(Checkpoint(n, k, names[k - 1] if k <= len(names) else "?", ref, tree))
        self.taken = sorted(found, key=lambda c: (c.step, c.action))
        self._held.update(c.tree for c in self.taken)

    def find(self, step: int, action: int = 1) -> Checkpoint:
        """The checkpoint taken before the ``action``-th mutating action of ``step``.

        Raises:
            NoCheckpoint: none was taken (the step ran no Write, Edit or Bash).
        """
        for checkpoint in self.taken:
            if checkpoint.step == step and checkpoint.action == action:
                return checkpoint
        name = str(step) if action == 1 else f"{step}.{action}"
        ref = f"{self.state.ref_prefix}/{name}"
        try:
            tree = run_git(self.repo, "rev-parse", "--verify", "-q", ref).decode().strip()
        except GitFailed:  # a checkpoint of an unchanged tree whose ref never reached git (a crash)?
            tree = recorded(ref) or "-"
            if tree == "-" or not self._has_tree(tree):
                raise NoCheckpoint(f"no checkpoint for step {step}: it changed no files") from None
        check_ref(ref, tree)
        return Checkpoint(step, action, "", ref, tree)

    def _has_tree(self, sha: str) -> bool:
        try:
            run_git(self.repo, "cat-file", "-e", f"{sha}^{{tree}}")
        except GitFailed:
            return False
        return True

    def flush(self) -> None:
        """Write the refs of the checkpoints that are only recorded so far (one git process; none
        when there are none). Call when a run ends."""
        if self._waiting:
            self._write("frogtui: checkpoints of an unchanged tree")

    def _write(self, message: str, ref: str | None = None, tree: str | None = None) -> None:
        """Write ``ref`` (when given) and the waiting refs in one ``update-ref``."""
        with self._lock:
            updates, self._waiting = self._waiting + ([(ref, tree)] if ref and tree else []), []
        if len(updates) == 1:
            run_git(self.repo, "update-ref", "-m", message, *updates[0])
        elif updates:
            stdin = "".join(f"update {name} {sha}\n" for name, sha in updates).encode()
            run_git(self.repo, "update-ref", "-m", message, "--stdin", stdin=stdin)
        self._held.update(sha for _, sha in updates)

    def rewind(self, step: int, action: int = 1) -> RewindResult:
        """Put the working tree back as it was before ``step`` (its ``action``-th mutating action).

        The tree as it is now is saved first under ``refs/frogtui/<session>/before-rewind``.

        Raises:
            NoCheckpoint: no checkpoint for that step.
        """
        checkpoint = self.find(step, action)
        saved_ref = unused_ref(self.repo, f"{self.state.ref_prefix}/before-rewind")
        taken = snapshot(self.repo)
        now = taken.tree
        self._write(f"frogtui: before rewind to step {step}", saved_ref, now)
        removed, restored = [], []
        kept = created(taken.nested, checkpoint.nested or self.state.start_nested)  # left out of both trees
        out = run_git(self.repo, "diff-tree", "-r", "-z", "--no-renames", now, checkpoint.tree)
        fields = out.split(b"\0")
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta:
                continue
            status = meta.split()[-1]
            name = decode(path)
            if status == b"D":
                removed.append(name)
            else:
                restored.append(name)
        if restored:
            check_objects(self.repo, checkpoint.tree, restored)  # before anything is touched
        for name in list(removed):
            if not self._remove(name):
                removed.remove(name)
                kept.append(name)
        if restored:
            with temporary_index(self.repo, checkpoint.tree) as env:
                stdin = b"".join(encode(name) + b"\0" for name in restored)
                run_git(self.repo, "checkout-index", "-f", "-z", "--stdin", env=env, stdin=stdin)
        if restored or removed:  # the rewind is the session's change too (review.session_writes)
            self._write(f"frogtui: after rewind to step {step}", saved_ref + AFTER, checkpoint.tree)
        result = RewindResult(step, sorted(restored), sorted(removed), saved_ref, kept=sorted(kept), not_restored=self.ignored_changed())
        return RewindResult(**{**result.__dict__, "message": rewind_message(result, checkpoint)})

    def committed_paths(self, checkpoint: Checkpoint) -> list[str]:
        """The files a rewind to ``checkpoint`` would change whose current content is already
        committed (a commit made after the session started holds them as they are now): rewinding
        them would silently reverse committed work. [] when nothing was committed since."""
        head = head_commit(self.repo)
        if head == self.state.start_commit:
            return []
        now = snapshot_tree(self.repo)
        rewound = self._changed_paths(checkpoint.tree, now)
        differs_from_head = self._changed_paths(tree_of(self.repo, head), now)
        return sorted(rewound - differs_from_head)

    def _changed_paths(self, before: str, after: str) -> set[str]:
        out = run_git(self.repo, "diff-tree", "-r", "-z", "--no-renames", "--name-only", before, after)
        return {decode(p) for p in out.split(b"\0") if p}

    def _remove(self, name: str) -> bool:
        """Delete a file created since the checkpoint; False (and nothing deleted) when it is a
        folder (a nested repository, recorded as a gitlink): its own history may be in there."""
        path = self.state.root / name
        if path.is_dir() and not path.is_symlink():
            return False
        try:
            path.unlink()
        except FileNotFoundError:
            return True
        folder = path.parent
        while folder != self.state.root and folder.is_dir():
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
        return True

    def drop(self) -> None:
        """Delete this session's checkpoint refs (the trees go at the next ``git gc``)."""
        self.flush()
        out = run_git(self.repo, "for-each-ref", "--format=%(refname)", self.state.ref_prefix + "/")
        for ref in decode(out).split():
            run_git(self.repo, "update-ref", "-d", ref)
        self.taken.clear()
        self._held.clear()


REWIND_MESSAGE_START = "The user rewound the files"
"""How every rewind message starts (a resumed chat shows such text as a notice, not as typed)."""


def rewind_message(result: RewindResult, checkpoint: Checkpoint) -> str:
    """What the model is told after a rewind."""
    what = f" ({checkpoint.tool})" if checkpoint.tool else ""
    parts = [
        f"{REWIND_MESSAGE_START} to the checkpoint taken before step {result.step}{what}. "
        "Every change made to the files since then is undone."
    ]
    if result.restored:
        parts.append(f"Restored to their earlier content: {', '.join(result.restored)}.")
    if result.removed:
        parts.append(f"Removed (created after the checkpoint): {', '.join(result.removed)}.")
    if result.kept:
        parts.append(f"Left in place (nested git repositories): {', '.join(result.kept)}.")
    if result.not_restored:
        parts.append(f"Not restored (ignored by git, changed during the session): {describe_ignored(result.not_restored)}.")
    if not result.restored and not result.removed:
        parts.append("No file had changed since then.")
    parts.append("Read files again before editing them.")
    return " ".join(parts)
