"""The repository root and the confinement floor every tool path goes through."""
from __future__ import annotations

import os
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path

from frogtui.temp_folders import private_folder


class OutsideRootError(PermissionError):
    """A write would land outside the repository root."""


@dataclass(frozen=True)
class Resolved:
    """A path resolved against the workspace."""

    display: str
    """Relative to the root when inside it, absolute otherwise (as Leaf shows paths)."""
    real: Path
    """Fully resolved path, every symlink followed (the file that would really be touched)."""
    inside: bool
    """True when ``real`` lies inside the root (or is a private temp folder of the session)."""


class Workspace:
    """A repository root with a private temp folder for the session.

    Every path a tool touches is resolved here: relative paths against the root, ``~`` expanded,
    ``..`` and symlinks followed, so that "inside" is decided on the real target.
    """

    def __init__(self, root: str | os.PathLike[str], tmp_dir: str | os.PathLike[str] | None = None, *,
                 environment_of: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(os.path.realpath(root))
        if not self.root.is_dir():
            raise NotADirectoryError(f"not a directory: {root}")
        self.environment_of = Path(os.path.realpath(environment_of)) if environment_of is not None else None
        """The repository whose environment Bash gets when ``root`` is another checkout of it (an
        attempt's worktree has no ignored files, so no ``.venv`` or ``node_modules``): its Python
        environment and ``node_modules``, read-only under the sandbox (``project_env``)."""
        self.tmp_dir = Path(os.path.realpath(tmp_dir or private_folder("workspace-")))
        """The session's temp folder; without one given, a folder of the workspace's own in the
        process's temp folder, removed with the workspace (``close``, or when it is collected)."""
        self._remove_tmp = weakref.finalize(self, shutil.rmtree, self.tmp_dir, True) if tmp_dir is None else None

    def close(self) -> None:
        """Remove the workspace's own temp folder (none when it was given one)."""
        if self._remove_tmp is not None:
            self._remove_tmp()

    def resolve(self, path: str) -> Resolved:
        """Resolve ``path`` as a tool would use it."""
        expanded = os.path.expanduser(path)
        joined = Path(os.path.normpath(self.root / expanded))  # absolute paths replace the root
        real = Path(os.path.realpath(joined))
        inside = self.contains(real)
        try:
            display = joined.relative_to(self.root).as_posix()
        except ValueError:
            display = str(joined)
        if display == ".":
            display = "."
        return Resolved(display=display, real=real, inside=inside)

    def contains(self, real: Path) -> bool:
        """True when an already resolved path is the root, inside it, or inside the private temp."""
        return _is_within(real, self.root) or _is_within(real, self.tmp_dir)

    def resolve_for_write(self, path: str) -> Resolved:
        """Resolve ``path`` for writing; the floor: refuse anything outside the root.

        Raises:
            OutsideRootError: the real target (symlinks followed) is outside the repository.
        """
        resolved = self.resolve(path)
        if not resolved.inside:
            raise OutsideRootError(
                f"refusing to write {resolved.display}: it resolves to {resolved.real}, outside the repository {self.root}"
            )
        return resolved

    def refuse_git_files(self, resolved: Resolved) -> None:
        """Refuse a resolved write target that is a ``.git`` entry, or under one, at any depth: any
        repository's (a submodule's, a nested one's) config runs at the person's next git command
        there. (The floor already denies the repository's own ``.git`` before asking.)

        Raises:
            PermissionError: it is one of git's own files.
        """
        base = self.root if _is_within(resolved.real, self.root) else self.tmp_dir
        if any(part.lower() == ".git" for part in resolved.real.relative_to(base).parts):
            raise PermissionError(
                f"refusing to write {resolved.display}: it is one of git's own files (under a .git), which no tool writes"
            )

    def display(self, real: Path) -> str:
        try:
            return real.relative_to(self.root).as_posix()
        except ValueError:
            return str(real)


def _is_within(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents
