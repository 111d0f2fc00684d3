"""The review: every change between HEAD and the working tree, as files and hunks to accept or
reject, with who made each change (this session, or the person before it).

Changes the session made are accepted by default; the person's own earlier changes (dirty files
at the session's start) are listed but rejected by default, and a hunk mixing both is rejected by
default too, so frogtui never commits the person's earlier work unless they select it. What the
person chose instead is remembered (``choices.py``) until they change it.

The review decides what is binary itself, never git (one NUL byte in the first 8,000, or a
``binary``/``-diff`` line in a ``.gitattributes`` the model wrote, makes git print "Binary files
differ"): a file git calls binary whose content reads as text (``looks_text``: a NUL or a few odd
bytes in it) is diffed again as text and shown line by line, each odd byte drawn as a mark. A
change that stays binary shows its sizes, and when its new content is an executable or a script
(the executable bit, ``#!``, an executable format, a script's name) it is never accepted by
default: nobody can read what would run.
"""
from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogtui.errors import FrogtuiError
from frogtui.vcs.authorship import Author, changed_blobs, session_writes
from frogtui.vcs.choices import ReviewChoices
from frogtui.vcs.commit import (
    CommitFailed,
    CommitResult,
    UndoResult,
    commit_patch,
    hooks_folder,
    person_hooks_path,
    undo_last_commit,
    undo_problem,
)
from frogtui.vcs.control import CONTROL_PATTERNS, PACKAGE_JSON_KEYS, control_files_changed, hook_callees, package_json_control_keys
from frogtui.vcs.hunks import ChangeGroup, FileChange, HunkSelection, Origin, decode, parse_diff
from frogtui.vcs.nested import created, folders
from frogtui.vcs.repository import LITERAL_PATHS, GitFailed, RepoState, head_commit, run_git, tree_of, unused_ref
from frogtui.vcs.snapshot import snapshot, snapshot_tree

DEFAULT_TRAILER = "Assisted-by: frogtui"
"""When no trailer is given (``Config.commit_trailer`` names the model: ``message.trailer_for``)."""
_DIFF = ("diff-tree", "-r", "-p", "--binary", "--no-renames", "--no-textconv", "--no-ext-diff")
TEXT_LIMIT = 4 * 2**20
"""A file git calls binary is looked at as text up to this size (a larger one stays binary)."""
HEAD_BYTES = 4096
"""Of a larger one, how much is read to tell what it is."""
ODD_SHARE = 0.05
"""Text may hold this share of odd characters (control characters, bytes that are not
UTF-8) and still be text; binary formats hold far more. NULs are not counted."""
ODD_FEW = 8
"""However short the text, this many odd characters leave it text."""
SCRIPT_SUFFIXES = frozenset(
    ".sh .bash .zsh .ksh .fish .csh .py .pyw .pl .pm .rb .js .mjs .cjs .ts .php .lua .tcl .r .ps1 .psm1 .bat .cmd .command "
    ".vbs .awk .sed .mk .make .envrc .bashrc .zshrc .profile".split()
)
"""Names of files a program reads as code (a binary change to one is never accepted by default)."""
SCRIPT_NAMES = frozenset("makefile gnumakefile dockerfile justfile rakefile gemfile podfile vagrantfile".split())
EXECUTABLE_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"#!", b"\xef\xbb\xbf#!")
"""How an executable starts: ELF, PE, Mach-O (both byte orders, fat), a script's ``#!``."""


class ConfirmationNeeded(FrogtuiError):
    """A destructive action was asked for without ``confirm=True``."""


@dataclass(frozen=True)
class DiscardResult:
    paths: list[str]
    checkpoint: str
    """The ref holding the working tree as it was before the discard (to get it back)."""

    @property
    def summary(self) -> str:
        return f"Discarded the rejected changes of this session in {len(self.paths)} file(s); the tree before is kept in {self.checkpoint}."


class ReviewSession:
    """Review, commit, discard and undo for one frogtui session.

    Args:
        state: what was recorded at the session's start (``repository.discover``).
        trailer: the line added to every commit message (``Config.commit_trailer``).
        ignored: gives the ignored paths the session changed (``Checkpoints.ignored_changed``).
    """

    def __init__(self, state: RepoState, *, trailer: str = DEFAULT_TRAILER, ignored: Callable[[], list[str]] | None = None) -> None:
        self.state = state
        self._ignored = ignored
        """Gives the ignored paths the session changed (``Checkpoints.ignored_changed``)."""
        self.repo = state.repo
        self.trailer = trailer
        self.choices = ReviewChoices(state)
        """The person's accept/reject choices (``choose`` them as they toggle; ``save`` writes them)."""
        self.nested: tuple[str, ...] = ()
        """Nested git repositories (not submodules) seen by the last ``load``, left out of review."""

    def git_control_paths(self, paths: list[str], since: str | None = None) -> set[str]:
        """The paths among ``paths`` that decide what git or hook tools run at the person's next
        commit (``vcs.control``). See ``control_changes``."""
        return set(self.control_changes(paths, since))

    def control_changes(self, paths: list[str], since: str | None = None) -> dict[str, str]:
        """The paths among ``paths`` that decide what runs at the person's next commit, each with
        why ('' for a control file by name; the ``package.json`` keys; the hook that calls it):
        control files (``.gitattributes``, ``.husky/``, lefthook, the in-tree hooks path…),
        ``package.json`` when a hook key changed since tree ``since`` (default: HEAD's), and the
        files the configured hooks call (``./scripts/check.sh``, the ``Makefile``…)."""
        hooks_path = person_hooks_path(self.repo)
        hooks_dir = hooks_folder(self.repo)
        if hooks_path and os.path.isabs(hooks_path):  # an absolute one inside the working tree counts too
            relative = os.path.relpath(os.path.realpath(hooks_path), self.state.root)
            hooks_path = None if relative.startswith("..") else relative
        found = {path: "" for path in control_files_changed(paths, hooks_path)}
        if "package.json" in paths and "package.json" not in found:
            keys = package_json_control_keys(self._blob(since or tree_of(self.repo, head_commit(self.repo)), "package.json"),
                                             _read(self.state.root / "package.json"))
            if keys:
                found["package.json"] = ", ".join(keys)
        rest = [p for p in paths if p not in found]
        if rest:
            for path, hook in hook_callees(rest, self._hook_texts(hooks_dir)).items():
                found[path] = f"called by {hook}"
        return found

    def _blob(self, tree: str, path: str) -> bytes | None:
        try:
            return run_git(self.repo, "cat-file", "blob", f"{tree}:{path}")
        except GitFailed:
            return None

    def _blob_start(self, tree: str, path: str) -> tuple[int, bytes] | None:
        """The size of ``path`` in ``tree`` and its bytes, only the first ``HEAD_BYTES`` of a blob
        larger than ``TEXT_LIMIT`` (never a whole large file in memory); None when it has none."""
        try:
            size = int(run_git(self.repo, "cat-file", "-s", f"{tree}:{path}"))
        except (GitFailed, ValueError):
            return None
        if size <= TEXT_LIMIT:
            return size, self._blob(tree, path) or b""
        process = self.repo.git.execute(["git", "cat-file", "blob", f"{tree}:{path}"], as_process=True)
        try:
            return size, process.proc.stdout.read(HEAD_BYTES)
        finally:
            process.proc.kill()
            process.proc.wait()

    def _hook_texts(self, hooks_dir: Path) -> dict[str, str]:
        """The text of every configured hook: the hooks folder's hooks, the hook tools'
        configuration at the top of the working tree, ``package.json``'s hook keys."""
        texts: dict[str, str] = {}
        for folder, label in ((hooks_dir, "the {} hook"), (self.state.root / ".husky", "the husky {} hook")):
            try:
                entries = sorted(folder.iterdir()) if folder.is_dir() else []
            except OSError:
                entries = []
            for entry in entries:
                if entry.is_file() and not entry.name.endswith(".sample"):
                    texts[label.format(entry.name)] = _text(_read(entry))
        try:
            top = sorted(self.state.root.iterdir())
        except OSError:
            top = []
        for entry in top:
            if entry.is_file() and any(fnmatch.fnmatchcase(entry.name, p) for p in CONTROL_PATTERNS if not p.startswith(".git")):
                texts[entry.name] = _text(_read(entry))
        package = _read(self.state.root / "package.json")
        if package is not None:
            try:
                data = json.loads(package.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                data = None
            if isinstance(data, dict):
                texts["package.json's hook settings"] = json.dumps({k: data[k] for k in PACKAGE_JSON_KEYS if k in data})
        return texts

    def ignored_changed(self) -> list[str]:
        """The ignored paths (``.venv/``, ``node_modules/``, ``.env``…) the session created,
        changed or deleted: in no diff here, and undo cannot restore them ([] when not known)."""
        return self._ignored() if self._ignored is not None else []

    def nested_created(self) -> list[str]:
        """The nested git repositories (not submodules) the session created, as of the last
        ``load``: left out of review, and their own config runs at the person's git commands there."""
        return created(self.nested, self.state.start_nested)

    def load(self) -> HunkSelection:
        """All changes from HEAD to the working tree now, each group marked with its origin and
        accepted when this session made it, unless the person chose otherwise before (in this
        screen, an earlier one, or before a resume)."""
        base = tree_of(self.repo, head_commit(self.repo))
        taken = snapshot(self.repo)
        now, self.nested = taken.tree, taken.nested
        selection = parse_diff(run_git(self.repo, *_DIFF, base, now))
        selection.files = [self._decide_binary(change, base, now) for change in selection.files]
        earlier = self._changed(base, self.state.start_tree)
        since_start = changed_blobs(self.state, self.state.start_tree, now) if self.state.start_tree != now else {}
        session = set(since_start)
        blocks = self._earlier_blocks(base, [f.path for f in selection.files if f.path in earlier and f.path in session])
        writes = session_writes(self.state) if session else None
        for change in selection.files:
            _classify(change, change.path in earlier, change.path in session, blocks.get(change.path, []))
            if writes is not None and change.path in since_start:
                _mark_authors(change, writes.author(change.path, *since_start[change.path]))
            if change.held:
                change.set_accepted(False)
            self.choices.apply(change)
        return selection

    def _decide_binary(self, change: FileChange, base: str, now: str) -> FileChange:
        """``change`` as the review shows it: a file git calls binary whose two sides read as text
        is diffed again as text; one that stays binary is labelled with its sizes, and held (not
        accepted by default) when its new content would run."""
        if change.status != "binary":
            return change
        old = self._blob_start(base, change.path)
        new = self._blob_start(now, change.path)
        if all(side is None or (side[0] <= TEXT_LIMIT and looks_text(side[1])) for side in (old, new)):
            diff = run_git(self.repo, *_DIFF, "--text", base, now, "--", change.path, env=LITERAL_PATHS)
            found = parse_diff(diff).files
            if len(found) == 1 and found[0].status != "binary":
                return found[0]
        sizes = f"{_size(old)} → {_size(new)}"
        change.held = runs_as_code(change.path, new[1], change.header) if new is not None else ""
        held = f"; {change.held}: not accepted by default (nobody can read what would run)" if change.held else ""
        for hunk in change.review_hunks:
            if hunk.hunk_index < 0 and change.whole:
                hunk.label = f"binary file changed ({sizes}){held}"
        return change

    def _changed(self, before: str, after: str) -> set[str]:
        out = run_git(self.repo, "diff-tree", "-r", "-z", "--no-renames", "--name-only", before, after)
        return {decode(p) for p in out.split(b"\0") if p}

    def _earlier_blocks(self, base: str, paths: list[str]) -> dict[str, list[ChangeGroup]]:
        if not paths:
            return {}
        diff = run_git(self.repo, *_DIFF, "-U0", base, self.state.start_tree, "--", *paths, env=LITERAL_PATHS)
        return {f.path: [g for g in f.groups if f.hunks] for f in parse_diff(diff).files}

    def staged_diff(self, selection: HunkSelection) -> str:
        """The accepted changes as patch text (what the commit will hold; for the message)."""
        return decode(selection.to_patch())

    def commit(self, selection: HunkSelection, message: str) -> CommitResult:
        """Commit the accepted groups with ``message`` plus the trailer, which says the model
        assisted: left out when none of the accepted groups is the session's (the person's own
        changes, from before or during it, alone). See ``commit.commit_patch``."""
        assisted = any(group.accepted and group.origin in ("session", "mixed") for _, group in selection.groups())
        return commit_patch(self.repo, selection.to_patch(), message, trailer=self.trailer if assisted else "")

    def discard_unaccepted(self, selection: HunkSelection, *, confirm: bool) -> DiscardResult:
        """Undo, in the working tree, this session's changes that are not accepted. The person's
        earlier changes (and mixed hunks) are never discarded. The tree before the discard is kept
        under ``refs/frogtui/<session>/before-discard``.

        Raises:
            ConfirmationNeeded: ``confirm`` is not True (nothing was changed).
            frogtui.vcs.repository.GitFailed: the working tree changed since ``load`` and the
                changes no longer apply (nothing was changed).
        """
        def rejected(group: ChangeGroup) -> bool:
            return group.origin == "session" and not group.accepted

        paths = selection.paths(rejected)
        if not confirm:
            raise ConfirmationNeeded(f"discarding changes in {len(paths)} file(s) needs confirmation")
        ref = unused_ref(self.repo, f"{self.state.ref_prefix}/before-discard")
        run_git(self.repo, "update-ref", "-m", "frogtui: before discard", ref, snapshot_tree(self.repo))
        patch = selection.patch_of(rejected, others_applied=True)
        if patch:
            run_git(self.repo, "apply", "-R", "--binary", "--whitespace=nowarn", stdin=patch)
        return DiscardResult(paths, ref)

    def undo_problem(self) -> str | None:
        """Why the last frogtui commit cannot be undone, or None when it can."""
        return undo_problem(self.repo)

    def undo_last_commit(self) -> UndoResult:
        """See ``commit.undo_last_commit``."""
        return undo_last_commit(self.repo)


def looks_text(data: bytes) -> bool:
    """Whether ``data`` reads as text: UTF-8 with at most ``ODD_SHARE`` (or ``ODD_FEW``) of odd
    characters (control characters other than NUL, tab, newline, carriage return and form feed;
    bytes that are not UTF-8). NULs do not count: git calls a file with one NUL binary; here it is
    text with each NUL drawn as a mark (UTF-16 text too, a mark between its letters)."""
    if not data:
        return True
    text = data.decode("utf-8", "surrogateescape")
    odd = sum(1 for char in text if (char < " " and char not in "\x00\t\n\r\f") or "\udc80" <= char <= "\udcff" or char == "\x7f")
    return odd <= max(ODD_SHARE * len(text), ODD_FEW)


def runs_as_code(path: str, data: bytes, header: list[str]) -> str:
    """Why a binary file's new content ``data`` would run as code ('' when nothing says so): its
    executable bit, the start of an executable or a script (``#!``), or a script's name."""
    if any(line.rstrip("\n").endswith(" 100755") for line in header):
        return "an executable (mode 100755)"
    if data.startswith(EXECUTABLE_MAGIC):
        return "a script (#!)" if data.lstrip(b"\xef\xbb\xbf").startswith(b"#!") else "an executable program"
    name = path.rsplit("/", 1)[-1].lower()
    suffix = "." + name.rsplit(".", 1)[-1] if "." in name else ""
    if name in SCRIPT_NAMES or suffix in SCRIPT_SUFFIXES or name in SCRIPT_SUFFIXES:
        return f"a script ({name})"
    return ""


def _size(side: tuple[int, bytes] | None) -> str:
    return "none" if side is None else f"{side[0]:,} bytes"


HOOK_READ_LIMIT = 256 * 1024
"""How much of a hook or a hook tool's configuration is read to find what it calls."""


def _read(path: Path) -> bytes | None:
    try:
        with path.open("rb") as handle:
            return handle.read(HOOK_READ_LIMIT)
    except OSError:  # absent, a folder, unreadable
        return None


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def _classify(change: FileChange, earlier: bool, session: bool, blocks: list[ChangeGroup]) -> None:
    for group in change.groups:
        origin: Origin
        if not earlier:
            origin = "session"
        elif not session:
            origin = "earlier"
        elif change.whole or group.id == change.mode_group:
            origin = "mixed"
        else:
            origin = _group_origin(group, blocks)
        group.origin = origin
        group.accepted = origin == "session"
    # a hunk shows one origin: split those that mix them
    for hunk in list(change.review_hunks):
        if len({g.origin for g in hunk.groups}) > 1:
            change.split(hunk)


def _mark_authors(change: FileChange, author: Author) -> None:
    """What the session's own changes leave: the person's edits made while it ran are theirs (not
    accepted), a file both changed is mixed (not accepted); the session's alone stay as classified."""
    if author == "session":
        return
    for group in change.groups:
        group.origin = author if group.origin in ("session", "during") else "mixed"
        group.accepted = False
    for hunk in list(change.review_hunks):
        if len({g.origin for g in hunk.groups}) > 1:
            change.split(hunk)


def _group_origin(group: ChangeGroup, blocks: list[ChangeGroup]) -> Origin:
    key = (group.source_first, group.removed, group.added)
    end = group.source_first + len(group.removed)
    for block in blocks:
        if (block.source_first, block.removed, block.added) == key:
            return "earlier"
        if group.source_first <= block.source_first + len(block.removed) and block.source_first <= end:
            return "mixed"
    return "session"


def commit_session_changes(state: RepoState, model: object | None, *, trailer: str = DEFAULT_TRAILER) -> CommitResult | None:
    """Commit every change this session made (not the person's earlier ones) with a message
    drafted by ``model`` (headless ``--commit``). None when the session changed nothing.

    Raises:
        CommitFailed: see ``commit.commit_patch``; also when the session changed a file that decides
            what runs at a commit (a hook in the hooks path, ``.husky/``, ``.gitattributes``…), or
            made a binary change that would run (``FileChange.held``).
    """
    from frogtui.vcs.message import draft_commit_message, trailer_for

    review = ReviewSession(state, trailer=trailer_for(trailer, model))
    selection = review.load()
    nested = review.nested_created()
    if nested:  # its config (core.fsmonitor, hooks) runs at the person's git commands there
        raise CommitFailed(f"the run created the nested git repository {folders(nested)}, whose own config (core.fsmonitor, hooks) "
                           "runs at your git commands there; not committing automatically: check it, remove it, then commit yourself")
    held = sorted(f"{f.path} ({f.held})" for f in selection.files if f.held and f.origin != "earlier")
    if held:  # binary, and it would run: nobody can read it, so it is never taken by default
        raise CommitFailed(f"the run changed {', '.join(held)}: binary, and it would run; not committing automatically: "
                           "review it (frogtui --resume, ctrl+r) or commit yourself")
    if not selection.accepted_count:
        return None
    control = review.control_changes(selection.paths(lambda g: g.origin == "session"), since=state.start_tree)
    if control:  # nobody reviewed them, and they run at the person's next commit
        named = ", ".join(f"{path} ({why})" if why else path for path, why in sorted(control.items()))
        raise CommitFailed(f"the run changed {named}, which decide(s) what runs at a commit; not committing "
                           "automatically: review it (frogtui --resume, ctrl+r) or commit yourself")
    message = draft_commit_message(model, review.staged_diff(selection))
    return commit_patch(review.repo, selection.to_patch(), message, trailer=review.trailer, hooks=False)


__all__ = ["ConfirmationNeeded", "DiscardResult", "GitFailed", "ReviewSession", "commit_run", "commit_session_changes"]


def commit_run(state: RepoState | None, model: object | None, *, exit_reason: str, trailer: str, out: Any) -> bool:
    """Headless ``frogtui run --commit``: commit the run's changes (not the person's earlier ones)
    when the run ended with ``agent``; print one line about it to ``out``. False when a commit was
    wanted and failed (or was skipped because the run did not finish)."""
    if state is None:
        print("frogtui: --commit: not a git repository, nothing committed", file=out)
        return False
    if exit_reason != "agent":
        print(f"frogtui: --commit: the run ended with {exit_reason}, so its changes were left uncommitted", file=out)
        return False
    try:
        result = commit_session_changes(state, model, trailer=trailer)
    except CommitFailed as err:
        print(f"frogtui: --commit: {err}", file=out)
        return False
    print("frogtui: --commit: the run changed nothing" if result is None else f"frogtui: {result.summary}", file=out)
    for note in result.notes if result else []:
        print(f"frogtui: {note}", file=out)
    return True
