"""A proposal run on the working tree itself (no copy-on-write view here: ``approval.sandbox.direct``),
turned into a proposal like any other: what the command changed, as git sees it, is moved into
the proposal's upper layer in the kernel overlay's form, and the tree is put back as it was before
the command (from git's snapshot of it). The proposal is then judged and landed as one on a view.

    before = capture.before()           # git's snapshot of the tree (tracked and untracked files)
    ... the command runs on the tree ...
    capture.capture(before, upper)      # changes -> upper (files, links, whiteouts); the tree put back

git's view is all that is read: files git tracks or would add. What it ignores (``.venv``,
``node_modules``, caches), empty folders and folder modes are neither captured nor put back: they
stay as the command left them (docs/APPROVALS.md says so, and the session's ignored-files report
names ignored changes). The loop takes the step's checkpoint before the command runs, so a crash
between the command and the tree being put back leaves a checkpoint that undo goes back to.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.vcs.hunks import decode, encode
from frogtui.vcs.repository import run_git, temporary_index
from frogtui.vcs.snapshot import snapshot


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

    def before(self) -> str:
        """git's snapshot of the tree now (a tree sha).

        Raises:
            OSError: git cannot snapshot the tree.
        """
        try:
            return snapshot(self.repo).tree
        except FrogtuiError as err:
            raise OSError(f"the tree cannot be snapshot before the command: {err}") from None

    def capture(self, before: object, upper: Path) -> list[Change]:
        """Move what changed in the tree since ``before`` (``before()``'s) into ``upper`` and put
        the tree back as it was then; the changes.

        Raises:
            OSError: git cannot say what changed, or the tree cannot be put back (what was moved out
                so far is in ``upper``; the loop's checkpoint before the command holds the rest).
        """
        assert isinstance(before, str)
        try:
            after = snapshot(self.repo).tree
            changes = self.changes(before, after) if after != before else []
            if not changes:
                return []
            folders, modes = self._folders(before), {}
            for change in changes:
                if change.status == "D":
                    self._whiteout(change.path, upper, modes)
            for change in changes:
                if change.status != "D":
                    self._move_out(change.path, upper, folders, modes)
            for folder, mode in sorted(modes.items(), key=lambda item: -len(item[0].parts)):
                os.chmod(folder, mode)
            restored = [c.path for c in changes if c.status != "A"]
            if restored:
                with temporary_index(self.repo, before) as env:
                    stdin = b"".join(encode(path) + b"\0" for path in restored)
                    run_git(self.repo, "checkout-index", "-f", "-z", "--stdin", env=env, stdin=stdin)
        except FrogtuiError as err:
            raise OSError(f"what the command changed cannot be read back: {err}") from None
        return changes

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
        top = next((n for n in range(1, len(parts) + 1) if not os.path.lexists(os.path.join(self.root, *parts[:n]))), None)
        if top is None:
            return  # something else is there now: its own change (a file that became a folder) says so
        gone = "/".join(parts[:top])
        target = upper / gone
        if os.path.lexists(target):
            return
        self._upper_folder(upper, os.path.dirname(gone), modes)
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(0, 0))

    def _move_out(self, rel: str, upper: Path, folders: set[str], modes: dict[Path, int]) -> None:
        """Move the tree's ``rel`` (a file or link) into ``upper``; remove the folders above it that
        are left empty and were not folders before."""
        full = self._inside(rel)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
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
        folder = os.path.dirname(rel)
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
