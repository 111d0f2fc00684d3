"""Proposals: a Bash command run on a copy-on-write view of the repository, its effects read,
nothing of it in the working tree until they are accepted (``landing``).

    proposal = runner.propose(command, ...)   # ran; effects read; output held back
    ...                                        # the gate judges proposal.effects
    landed = land(proposal, accepted)          # stale check, then the accepted effects applied
    proposal.discard()                         # the layer folder removed

The view itself (an overlay in a user and mount namespace, bubblewrap on top) is the sandbox's
(``approval.sandbox.overlay``, or ``fuse``), given to ``ProposalRunner`` as a ``ProposalView``.
Where no view can be mounted, the last fallback runs the command on the tree itself
(``approval.sandbox.direct``, ``in_place``) and an ``InPlace`` (``vcs.in_place``) moves what it
changed into the upper layer and puts the tree back: from there on it is a proposal like any other.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from frogtui.temp_folders import process_folder
from frogtui.tools.bash import BashResult, CommandWrapper, OutputCallback, run_bash
from frogtui.tools.effects import MAX_ENTRIES, Effects, read_effects

UNSAFE_LAYER_CHARACTERS = frozenset(",:\\\"'=") | frozenset(chr(n) for n in range(32)) | {chr(127)}
"""Characters the layer folder's path may not have (it goes into the overlay's option string,
where ``,`` ends an option and ``:`` a layer); such a parent is replaced by the system's temp
folder (which the sandbox never sees: it gets a fresh ``/tmp``), in the process's own folder there (``temp_folders``)."""
MOUNT_FAILED = 125
"""The exit status of a proposal whose view could not be mounted (the command did not run)."""
MOUNT_FAILED_LINE = "frogtui: the copy-on-write view could not be mounted"
CUT_OFF = "in-place-running.json"
"""In a session's proposals folder while a command runs on the tree itself (run then undo), removed
once its changes were moved out: one left there is a frogtui stopped in between (``cut_off``)."""
RAN_ON_A_COPY = "this command ran as a proposal, on a copy of the repository"
RAN_IN_PLACE = "this command ran as a proposal, on the working tree, and its changes were taken back until approved"


@dataclass(frozen=True)
class Layers:
    """One proposal's layer folder: ``lower`` (a link to the repository), ``upper`` (what the
    command wrote), ``work`` (the overlay's own)."""

    folder: Path
    root: Path

    @property
    def upper(self) -> Path:
        return self.folder / "upper"

    @property
    def work(self) -> Path:
        return self.folder / "work"

    @classmethod
    def make(cls, parent: Path, root: Path) -> Layers:
        """A fresh layer folder under ``parent`` (made private to this user; under the system's temp
        folder where ``parent``'s path has a character the overlay's options cannot hold).

        Raises:
            OSError: it cannot be made, or its path has characters an overlay's options cannot hold.
        """
        if set(str(parent)) & UNSAFE_LAYER_CHARACTERS:
            parent = process_folder()  # removed with the process, or swept by the next frogtui
        parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder = Path(tempfile.mkdtemp(prefix="frogtui-proposal-", dir=parent))
        if set(str(folder)) & UNSAFE_LAYER_CHARACTERS:
            os.rmdir(folder)
            raise OSError(f"the proposal folder {folder} has characters an overlay's options cannot hold")
        (folder / "upper").mkdir()
        (folder / "work").mkdir()
        os.symlink(root, folder / "lower")
        return cls(folder, root)

    def remove(self) -> None:
        """Remove the layer folder (what the command left there, whatever its modes): renamed out
        of the way at once (``…-discarded``: a later ``ProposalRunner`` removes it too, should
        frogtui end first), then removed on a thread of its own: each unlink of the command's
        copies is a journal operation (1,000 files: 40-400 ms here), which no step waits on."""
        gone = self.folder.with_name(self.folder.name + "-discarded")
        try:
            os.rename(self.folder, gone)
        except OSError:
            remove_tree(self.folder)
            return
        threading.Thread(target=_remove_quietly, args=(gone,), name="frogtui-discard-layers", daemon=True).start()


def _remove_quietly(folder: Path) -> None:
    """``remove_tree`` on the discard thread: what cannot be removed now (an immutable file, an I/O
    error) stays as ``…-discarded`` for the next ``ProposalRunner``'s sweep, never a traceback over
    the app's screen."""
    with contextlib.suppress(OSError):
        remove_tree(folder)


def remove_tree(folder: Path) -> None:
    """``rm -rf folder``, also where the command took away its own permissions (``chmod 000``),
    and a tree nested thousands of folders deep (a path past ``PATH_MAX``, more levels than
    Python's recursion or the open-file limit allow): walked through one folder descriptor at a
    time, down by name and back up by ``..`` (the layer folder is frogtui's: no process of the
    command is left to change it)."""
    try:
        fd = _open_folder(os.fspath(folder), None)
    except FileNotFoundError:
        return
    except (NotADirectoryError, OSError) as err:
        if err.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        os.unlink(folder)
        return
    down: list[str] = []
    try:
        while True:
            child = _clear_files(fd)
            if child is not None:
                inner = _open_folder(child, fd)
                os.close(fd)
                fd = inner
                down.append(child)
                continue
            if not down:
                break
            parent = os.open("..", _FOLDER, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = down.pop()
            _as_owner(fd, os.rmdir, name)
    finally:
        os.close(fd)
    os.rmdir(folder)


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_folder(name: str, dir_fd: int | None) -> int:
    try:
        return os.open(name, _FOLDER, dir_fd=dir_fd)
    except PermissionError:
        os.chmod(name, stat.S_IRWXU, dir_fd=dir_fd, follow_symlinks=dir_fd is None)
        return os.open(name, _FOLDER, dir_fd=dir_fd)


def _clear_files(fd: int) -> str | None:
    """Remove every entry of the folder ``fd`` but its folders, up to the first folder found:
    its name (None when the folder is empty)."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                return entry.name
            _as_owner(fd, os.unlink, entry.name)
    return None


def _as_owner(fd: int, action: Callable[..., object], name: str) -> None:
    """``action(name)`` in the folder ``fd``, giving the folder back its owner's permissions
    first when the command took them away."""
    try:
        action(name, dir_fd=fd)
    except PermissionError:
        os.fchmod(fd, stat.S_IRWXU)
        action(name, dir_fd=fd)


class ProposalView(Protocol):
    """A copy-on-write view of the repository (``approval.sandbox.overlay.OverlayView``)."""

    def wrapper(self, layers: Layers) -> CommandWrapper:
        """The wrapper that runs a command on ``layers``' view, in the sandbox."""
        ...

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The command's environment."""
        ...


class InPlace(Protocol):
    """Reads back what a command run on the tree itself changed (``vcs.in_place.TreeCapture``)."""

    def before(self) -> object:
        """The tree before the command (to ``capture`` against). Raises OSError."""
        ...

    def capture(self, before: object, upper: Path) -> tuple[str, ...]:
        """Move what changed since ``before`` into ``upper`` (the kernel overlay's form) and put
        the tree back; the paths it could not put back (files git ignores that the command
        changed or deleted). Raises OSError."""
        ...

    def problem(self) -> str:
        """Why a command cannot run this way in the tree as it is now ('' when it can)."""
        ...


IN_PLACE_FAILED = "the command ran on the working tree (no copy-on-write view here) and what it changed could not be read back"


@dataclass
class Proposal:
    """A command that ran on the view: its result (held back from the model until a decision),
    its effects, and its layer folder (until ``discard``).

    Attributes:
        command: The command as it ran.
        result: Its exit code and Leaf's observation of its output.
        effects: What it changed, against the tree.
        ignored: The paths among the effects that git ignores (caches, ``.venv``, ``node_modules``).
        layers: Its layer folder.
        started_ns: When it started (wall clock, ns): a tree file changed after this is stale.
        failed: Why the view could not be made ('' when it ran).
        seconds: How long it ran, effects read included.
        in_place: It ran on the tree itself (``InPlace``): its changes were moved out afterwards
            (where ``failed``, they may still be in the tree).
        not_undone: In place: the paths it changed that could not be put back (files git
            ignores that were there before): they stay as the command left them.
    """

    command: str
    result: BashResult
    effects: Effects
    layers: Layers
    started_ns: int
    ignored: frozenset[str] = frozenset()
    failed: str = ""
    seconds: float = 0.0
    in_place: bool = False
    not_undone: tuple[str, ...] = ()
    discarded: bool = field(default=False, repr=False)

    @property
    def ran_as(self) -> str:
        """How it ran, as the model and the person are told it."""
        return RAN_IN_PLACE if self.in_place else RAN_ON_A_COPY

    @property
    def upper(self) -> Path:
        return self.layers.upper

    @property
    def root(self) -> Path:
        return self.layers.root

    def discard(self) -> None:
        """Remove the layer folder; nothing of the proposal is left."""
        if not self.discarded:
            self.layers.remove()
            self.discarded = True


IgnoredPaths = Callable[[Sequence[str]], set[str]]
"""The paths among those given that git ignores (``vcs``), asked once per proposal."""


class ProposalRunner:
    """Runs commands as proposals on ``view``, their layer folders under ``layers_parent``.

    Args:
        view: The copy-on-write view (the sandbox's).
        root: The repository.
        layers_parent: Where the layer folders go (the session's folder: out of the sandbox's reach).
        ignored: Which effect paths git ignores (None: none is taken for ignored).
        in_place: Reads back what a command run on the tree changed, for a view that runs it there
            (``view.in_place``); required then.
    """

    max_entries: int = MAX_ENTRIES
    """Upper-layer entries read at most (``read_effects``): a command that left more is too large
    to review, and none of it lands."""

    def __init__(self, view: ProposalView, root: Path, layers_parent: Path, ignored: IgnoredPaths | None = None,
                 in_place: InPlace | None = None) -> None:
        if getattr(view, "in_place", False) and in_place is None:
            raise ValueError("a view that runs commands on the tree needs an InPlace to read their changes back")
        self.view = view
        self.root = root
        self.layers_parent = layers_parent
        self.ignored = ignored
        self.in_place = in_place if getattr(view, "in_place", False) else None
        for left in layers_parent.glob("frogtui-proposal-*") if layers_parent.is_dir() else ():
            remove_tree(left)  # what a proposal cut short (frogtui killed) left of its layers: copies of files

    def problem(self) -> str:
        """Why a command cannot run as a proposal here now ('' when it can): run on the tree, where
        git could not put every file back (``vcs.in_place.cannot_put_back``, a submodule or a
        ``.gitattributes`` that came during the session); the command is then asked about by its text."""
        return self.in_place.problem() if self.in_place is not None else ""

    def propose(
        self,
        command: str,
        *,
        env: dict[str, str] | None,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        on_output: OutputCallback | None = None,
    ) -> Proposal:
        """Run ``command`` on a fresh view and read its effects (blocking).

        Raises:
            OSError: the layer folder cannot be made, or (in place) the tree cannot be snapshot
                (the command did not run).
        """
        started = time.monotonic()
        layers = Layers.make(self.layers_parent, self.root)
        try:
            before = self.in_place.before() if self.in_place is not None else None
        except OSError:
            layers.remove()
            raise
        started_ns = time.time_ns()
        mark = self._mark_in_place(command) if self.in_place is not None else None
        try:
            result = run_bash(command, str(self.root), timeout=timeout, cancel=cancel, wrap=self.view.wrapper(layers), env=env,
                              on_output=on_output)
            failed, not_undone = "", ()
            if self.in_place is not None:
                try:
                    not_undone = self.in_place.capture(before, layers.upper)
                except OSError as err:
                    failed = f"{IN_PLACE_FAILED}: {err}"
                started_ns = time.time_ns()  # the tree was put back just now: a change after this is the person's
        finally:
            if mark is not None:
                mark.unlink(missing_ok=True)
        if self.in_place is None and result.exit_code == MOUNT_FAILED and MOUNT_FAILED_LINE in result.observation:
            failed = result.observation
        settle = getattr(self.view, "settle", None)
        if settle is not None and not failed:
            try:
                settle(layers)
            except OSError as err:
                failed = f"the view's upper layer cannot be read: {err}"
        try:
            effects = read_effects(layers.upper, self.root, max_entries=self.max_entries) if not failed else Effects()
            ignored = frozenset(self._ignored(effects)) if effects.items else frozenset()
        except BaseException:
            layers.remove()  # nothing of a proposal that could not be read is left
            raise
        return Proposal(command, result, effects, layers, started_ns, ignored=ignored, failed=failed,
                        seconds=time.monotonic() - started, in_place=self.in_place is not None, not_undone=tuple(not_undone))

    def _mark_in_place(self, command: str) -> Path | None:
        """Say, in the proposals folder, that ``command`` runs on the tree itself until its changes
        are moved out (``cut_off`` reads what a stopped frogtui left). None where it cannot be written."""
        mark = self.layers_parent / CUT_OFF
        try:
            self.layers_parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            mark.write_text(json.dumps({"command": command, "root": str(self.root)}), encoding="utf-8")
        except OSError:
            return None
        return mark

    def _ignored(self, effects: Effects) -> set[str]:
        """The effects' paths git ignores (a folder asked about as ``name/``, so that a pattern for
        folders only matches one the tree does not have yet)."""
        if self.ignored is None:
            return set()
        asked = {}
        for effect in effects:
            asked[effect.path + ("/" if effect.is_dir else "")] = effect.path
            if effect.source:
                asked[effect.source + ("/" if effect.is_dir else "")] = effect.source
        return {asked[path] for path in self.ignored(list(asked)) if path in asked}


TEXT_LIMIT = 1 << 20
"""A file shown as text in a proposal's diff at most this large (a bigger one: one summary line)."""


def effect_texts(proposal: Proposal, path: str, source: str = "") -> tuple[str | None, str | None] | None:
    """The text of ``path`` in the tree (``source``'s for a rename) and as the command left it,
    for a diff: None for either side that is not there; None in all when a side is a binary, big
    or not a regular file (shown as one line instead). Read while the proposal is not discarded."""
    sides: list[str | None] = []
    for base, rel in ((proposal.root, source or path), (proposal.upper, path)):
        full = os.path.join(base, rel)
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            sides.append(None)
            continue
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout: deleted
            sides.append(None)
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_size > TEXT_LIMIT:
            return None
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as handle:
                data = handle.read(TEXT_LIMIT + 1)
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if "\0" in text:
            return None
        sides.append(text)
    return sides[0], sides[1]


def cut_off(proposals_folder: Path) -> str | None:
    """The command a stopped frogtui was running on the tree itself (run then undo) when it
    stopped, before its changes were put back, or None; told once (the note is set aside)."""
    mark = proposals_folder / CUT_OFF
    try:
        command = str(json.loads(mark.read_text(encoding="utf-8")).get("command", ""))
        os.replace(mark, mark.with_name(CUT_OFF + ".told"))
    except (OSError, ValueError, AttributeError):
        return None
    return command
