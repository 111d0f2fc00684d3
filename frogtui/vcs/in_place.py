"""A proposal run on the working tree itself (no copy-on-write view here: ``approval.sandbox.direct``),
turned into a proposal like any other: what the command changed, as git sees it, is moved into
the proposal's upper layer in the kernel overlay's form, and the tree is put back as it was before
the command (from git's snapshot of it). The proposal is then judged and landed as one on a view.

    before = capture.before()           # git's snapshot of the tree (tracked and untracked files)
    ... the command runs on the tree ...
    capture.capture(before, upper)      # changes -> upper (files, links, whiteouts); the tree put back

git's view is what is read: files git tracks or would add. Of what git ignores (``.venv``,
``node_modules``, caches), a file the command made is moved out too (so it is judged, and a
program planted in ``.venv/bin`` never lands unseen); one that was there before and that the
command changed or deleted cannot be put back (git holds no copy of it): it stays as the command
left it, and the model is told (``capture``'s answer). A nested repository the command makes
(which git's view leaves out) has its ``.git`` moved out first, then its files are read as any
others. Empty folders outside the ignored ones, folder modes, FIFOs, sockets and device files, and
what is inside a nested repository that was there before, are not read: they stay as the command
left them (docs/APPROVALS.md). The loop takes the step's checkpoint before the command runs, so a crash
between the command and the tree being put back leaves a checkpoint that undo goes back to.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.vcs.hunks import decode, encode
from frogtui.vcs.ignored import IgnoredFiles, ignored_files
from frogtui.vcs.ignored import changed as changed_ignored
from frogtui.vcs.repository import run_git, temporary_index
from frogtui.vcs.snapshot import snapshot


@dataclass(frozen=True)
class Before:
    """The tree before the command: git's snapshot, and the ignored files' fingerprints."""

    tree: str
    ignored: IgnoredFiles
    nested: tuple[str, ...] = ()
    """Nested repositories (not submodules) there were: git's view leaves them out."""


def _fingerprint(root: Path, path: str) -> tuple[int, int, int, int] | None:
    """``path``'s fingerprint now, as ``vcs.ignored`` takes it (None: gone)."""
    try:
        info = os.lstat(os.path.join(root, path.rstrip("/")))
    except OSError:
        return None
    if path.endswith("/"):
        return (0, 0, info.st_ino, info.st_mode) if stat.S_ISDIR(info.st_mode) and not os.listdir(root / path) else None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)


def _under(path: str, tops: tuple[str, ...]) -> bool:
    return any(path == top or path.startswith(top + "/") for top in tops)


def _parents(paths: Iterable[str]) -> set[str]:
    """Every folder above one of ``paths`` (an empty folder ``name/`` counts as one)."""
    found: set[str] = set()
    for path in paths:
        folder = path.rstrip("/") if path.endswith("/") else os.path.dirname(path)
        while folder and folder not in found:
            found.add(folder)
            folder = os.path.dirname(folder)
    return found


@dataclass(frozen=True)
class Change:
    """One path git sees changed: ``A`` added, ``M`` modified (content or mode), ``T`` a change of
    kind (file, link), ``D`` deleted."""

    status: str
    path: str


class TreeCapture:
    """Reads back what a command run on ``repo``'s working tree changed, and puts the tree back."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        self.root = Path(repo.working_tree_dir or ".")

    def before(self) -> Before:
        """git's snapshot of the tree now, and the ignored files' fingerprints.

        Raises:
            OSError: git cannot snapshot the tree.
        """
        try:
            taken = snapshot(self.repo)
            return Before(taken.tree, ignored_files(self.repo), taken.nested)
        except FrogtuiError as err:
            raise OSError(f"the tree cannot be snapshot before the command: {err}") from None

    def capture(self, before: object, upper: Path) -> tuple[str, ...]:
        """Move what changed in the tree since ``before`` (``before()``'s) into ``upper`` and put
        the tree back as it was then; the ignored paths that could not be put back (changed or
        deleted: git holds no copy of them).

        Raises:
            OSError: git cannot say what changed, or the tree cannot be put back (what was moved out
                so far is in ``upper``; the loop's checkpoint before the command holds the rest).
        """
        assert isinstance(before, Before)
        try:
            taken = snapshot(self.repo)
            made_nested = [name for name in taken.nested if name not in before.nested]
            modes: dict[Path, int] = {}
            if made_nested:  # git's view leaves a nested repository out: its .git goes first, then git sees its files
                for name in made_nested:
                    self._move_git_folder(name, upper, modes)
                taken = snapshot(self.repo)
            after = taken.tree
            was_ignored = before.ignored.files
            changes = self.changes(before.tree, after) if after != before.tree else []
            changes = [c for c in changes if c.path not in was_ignored]  # one the command un-ignored: there before, no copy of it
            ignored_after = ignored_files(self.repo)
            unchecked = before.ignored.unchecked + ignored_after.unchecked
            made = [p for p in changed_ignored(before.ignored, ignored_after) if p not in was_ignored]
            kept = tuple(p for p in sorted(was_ignored) if not _under(p, unchecked) and _fingerprint(self.root, p) != was_ignored[p])
            if not changes and not made and not modes:
                return kept
            folders = self._folders(before.tree) | _parents(before.ignored.files)
            for change in changes:
                if change.status == "D":
                    self._whiteout(change.path, upper, modes)
            for path in [c.path for c in changes if c.status != "D"] + made:
                self._move_out(path, upper, folders, modes)
            for folder, mode in sorted(modes.items(), key=lambda item: -len(item[0].parts)):
                os.chmod(folder, mode)
            restored = [c.path for c in changes if c.status != "A"]
            if restored:
                with temporary_index(self.repo, before.tree) as env:
                    stdin = b"".join(encode(path) + b"\0" for path in restored)
                    run_git(self.repo, "checkout-index", "-f", "-z", "--stdin", env=env, stdin=stdin)
        except FrogtuiError as err:
            raise OSError(f"what the command changed cannot be read back: {err}") from None
        return kept

    def changes(self, before: str, after: str) -> list[Change]:
        """The paths that differ between two trees (no renames: a rename is a deletion and an addition)."""
        out = run_git(self.repo, "diff-tree", "-r", "-z", "--no-renames", before, after)
        fields = out.split(b"\0")
        return [Change(meta.split()[-1].decode()[:1], decode(path)) for meta, path in zip(fields[0::2], fields[1::2], strict=False)
                if meta]

    def _folders(self, tree: str) -> set[str]:
        out = run_git(self.repo, "ls-tree", "-r", "-d", "-z", "--name-only", tree)
        return {decode(p) for p in out.split(b"\0") if p}

    def _inside(self, rel: str) -> str:
        """The path of ``rel`` in the tree, its folders real folders of the tree (never a link)."""
        full = os.path.join(self.root, rel)
        parent = os.path.dirname(full)
        if os.path.realpath(parent) != os.path.normpath(parent):
            raise OSError(errno.ELOOP, f"{rel}: a folder above it is a link")
        return full

    def _whiteout(self, rel: str, upper: Path, modes: dict[Path, int]) -> None:
        """Mark ``rel`` deleted in ``upper``: a whiteout at the highest folder of it the command
        removed (a deleted folder is one whiteout, as the kernel's overlay writes it)."""
        parts = rel.split("/")
        for top in range(1, len(parts) + 1):
            try:
                st = os.lstat(os.path.join(self.root, *parts[:top]))
            except FileNotFoundError:
                break
            if not stat.S_ISDIR(st.st_mode):
                return  # a file or a link is there now (a folder became a link): its own change says so
        else:
            return  # something else is there now: its own change says so
        gone = "/".join(parts[:top])
        target = upper / gone
        if os.path.lexists(target):
            return
        self._upper_folder(upper, os.path.dirname(gone), modes)
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(0, 0))

    def _move_out(self, rel: str, upper: Path, folders: set[str], modes: dict[Path, int]) -> None:
        """Move the tree's ``rel`` (a file or link; ``name/``: an empty folder) into ``upper``;
        remove the folders above it that are left empty and were not folders before."""
        full = self._inside(rel.rstrip("/"))
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return
        if rel.endswith("/"):
            self._upper_folder(upper, rel.rstrip("/"), modes)
            os.rmdir(full)
            rel = rel.rstrip("/")
            self._remove_empty(os.path.dirname(rel), folders)
            return
        self._upper_folder(upper, os.path.dirname(rel), modes)
        target = upper / rel
        try:
            os.rename(full, target)
        except OSError as err:
            if err.errno != errno.EXDEV:
                raise
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(full), target)
            else:
                shutil.copyfile(full, target, follow_symlinks=False)
                os.chmod(target, stat.S_IMODE(st.st_mode))
            os.unlink(full)
        self._remove_empty(os.path.dirname(rel), folders)

    def _move_git_folder(self, name: str, upper: Path, modes: dict[Path, int]) -> None:
        """Move the ``.git`` of a nested repository the command made into ``upper`` (then its
        files are the tree's as git sees them; its ``.git`` is an effect of its own, named as one
        that runs later)."""
        rel = f"{name}/.git"
        full = self._inside(rel)
        if not os.path.lexists(full):
            return
        self._upper_folder(upper, name, modes)
        try:
            os.rename(full, upper / rel)
        except OSError as err:
            if err.errno != errno.EXDEV:
                raise
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.copytree(full, upper / rel, symlinks=True)
                shutil.rmtree(full)
            else:
                self._move_out(rel, upper, set(), modes)

    def _remove_empty(self, folder: str, folders: set[str]) -> None:
        """Remove ``folder`` and those above it while empty and not folders before the command."""
        while folder and folder not in folders:
            try:
                os.rmdir(os.path.join(self.root, folder))
            except OSError:
                break
            folder = os.path.dirname(folder)

    def _upper_folder(self, upper: Path, rel: str, modes: dict[Path, int]) -> None:
        """Make the folders down to ``rel`` in ``upper``; ``modes`` gets the tree's folder's mode
        now for each (set once everything is in)."""
        current = upper
        for part in [p for p in rel.split("/") if p]:
            current = current / part
            if not current.is_dir():
                current.mkdir(mode=0o700)
                try:
                    modes[current] = stat.S_IMODE(os.lstat(self.root / current.relative_to(upper)).st_mode)
                except OSError:
                    continue
