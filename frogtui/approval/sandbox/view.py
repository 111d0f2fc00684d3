"""What a sandboxed command sees, read back from bubblewrap's own options: one view for Bash, Read
and Glob.

bwrap's options are the mount list itself (``--ro-bind SRC DEST``, ``--tmpfs DEST``...), in order,
each later mount covering what an earlier one put at or under its destination. ``SandboxView``
answers, for a path inside the sandbox, which file of the host it shows (``source``): the same
path, another file (a sanitized copy bound over a config), or nothing (an empty tmpfs, a secret
masked with ``/dev/null``). Read and Glob go through it, so they see what a
command sees, derived from the very list the command runs with.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

BINDS = frozenset({"--bind", "--ro-bind", "--dev-bind", "--bind-try", "--ro-bind-try", "--dev-bind-try"})
"""Options that show a host folder or file (SRC) at DEST."""
EMPTIES = frozenset({"--tmpfs", "--dev", "--mqueue", "--dir", "--tmp-overlay", "--ro-overlay"})
"""Options that put the sandbox's own (empty, private) folder at DEST."""
ALIKE = frozenset({"--proc"})
"""Options that put the sandbox's own ``/proc`` at DEST: of the same kind as the host's
(``/proc/cpuinfo``), counted as showing the host's (a process's environment and arguments are
below the floor on their own: ``secrets.PROCESS_SECRETS``). The sandbox's ``/dev`` is not the
host's: files in the host's ``/dev/shm`` are hidden."""
ARITY = {
    **dict.fromkeys(BINDS, 2), **dict.fromkeys(EMPTIES, 1), **dict.fromkeys(ALIKE, 1), "--overlay": 3, "--overlay-src": 1, "--symlink": 2,
    "--remount-ro": 1, "--chdir": 1, "--seccomp": 1, "--add-seccomp-fd": 1, "--cap-drop": 1, "--cap-add": 1,
    "--setenv": 2, "--unsetenv": 1, "--file": 2, "--bind-data": 2, "--ro-bind-data": 2, "--perms": 1, "--size": 1,
    "--chmod": 2, "--uid": 1, "--gid": 1, "--hostname": 1, "--lock-file": 1, "--sync-fd": 1, "--block-fd": 1,
    "--userns-block-fd": 1, "--info-fd": 1, "--json-status-fd": 1, "--userns": 1, "--userns2": 1, "--pidns": 1,
    "--exec-label": 1, "--file-label": 1, "--argv0": 1,
}
"""How many words follow each bwrap option that takes any (the others are flags)."""
MASK = "/dev/null"


@dataclass(frozen=True)
class Mount:
    """One mount: ``source`` shown at ``dest`` (None: the sandbox's own empty folder or file)."""

    dest: str
    source: str | None


@dataclass(frozen=True)
class SandboxView:
    """The mounts of one sandbox, in order."""

    mounts: tuple[Mount, ...]

    @classmethod
    def of(cls, options: Sequence[str]) -> SandboxView:
        """The view bwrap's ``options`` (up to ``--``) make."""
        mounts: list[Mount] = []
        lowers: list[str] = []
        at = 1 if options and not options[0].startswith("--") else 0  # bwrap's own path first
        while at < len(options):
            option = options[at]
            if option == "--":
                break
            words = list(options[at + 1: at + 1 + ARITY.get(option, 0)])
            at += 1 + len(words)
            if option in BINDS:
                mounts.append(Mount(os.path.normpath(words[1]), None if words[0] == MASK else os.path.normpath(words[0])))
            elif option in ALIKE:
                mounts.append(Mount(os.path.normpath(words[0]), os.path.normpath(words[0])))
            elif option in EMPTIES or option in ("--file", "--bind-data", "--ro-bind-data"):
                mounts.append(Mount(os.path.normpath(words[-1]), None))
            elif option == "--overlay-src":
                lowers.append(os.path.normpath(words[0]))
            elif option == "--overlay":  # the top layer first: what it does not hold comes from the lowest source given
                mounts.append(Mount(os.path.normpath(words[2]), lowers[0] if lowers else None))
                lowers = []
            elif option == "--symlink":
                mounts.append(Mount(os.path.normpath(words[1]), None))
        return cls(tuple(mounts))

    def source(self, path: str) -> str | None:
        """The host path the sandbox shows at ``path`` (absolute, normalised), None when it shows
        nothing of the host there (hidden, masked, the sandbox's own)."""
        path = os.path.normpath(path)
        last, folder = -1, path
        while True:  # the latest mount at the path or above it covers it
            last = max(last, self._latest.get(folder, -1))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        if last < 0 or self.mounts[last].source is None:
            return None
        mount = self.mounts[last]
        rest = path[len(mount.dest):].lstrip("/")
        return os.path.join(mount.source, rest) if rest else mount.source

    @cached_property
    def _latest(self) -> dict[str, int]:
        return {mount.dest: index for index, mount in enumerate(self.mounts)}

    def shows(self, real: str) -> bool:
        """Whether the sandbox shows the host's ``real`` path (symlinks already followed) at that
        same path."""
        return self.source(real) == os.path.normpath(real)

    def places(self, real: str) -> list[str]:
        """Where the host's ``real`` path appears inside the sandbox (at its own path, under a
        folder bound elsewhere...): what a mask over it must cover."""
        real = os.path.normpath(real)
        found = []
        for mount in self.mounts:
            if mount.source is None or not (real == mount.source or real.startswith(mount.source.rstrip("/") + "/")):
                continue
            rest = real[len(mount.source):].lstrip("/")
            place = os.path.join(mount.dest, rest) if rest else mount.dest
            if self.source(place) == real:
                found.append(place)
        return list(dict.fromkeys(found))
