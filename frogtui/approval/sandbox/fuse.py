"""The copy-on-write view where the kernel will not mount overlayfs in a user namespace:
fuse-overlayfs (a FUSE daemon), mounted in a private user, mount and pid namespace, with the Bash
sandbox (bubblewrap) started inside on the merged view, as ``overlay`` does with the kernel's.

    frogtui ─ setpriv --pdeathsig KILL ─ unshare --user --map-root-user --mount --pid --fork --kill-child
              └ sh (pid 1 of the new pid namespace): fuse-overlayfs … ROOT; exec bwrap … ROOT …

* The daemon is a process, not a mount the kernel ends with the namespace: it runs in the new
  pid namespace, and when that namespace's first process (the shell, then bwrap) ends, the kernel
  kills every other process in it, the daemon included; the mount namespace, and the mount, go
  with the last of them.
* ``setpriv --pdeathsig KILL`` makes ``unshare`` die with frogtui (``kill -9`` included), and
  ``--kill-child`` the namespace's first process with ``unshare``: nothing outlives frogtui.
* bwrap is started exactly as on the kernel's overlay (``overlay.OverlayView.argv``): the network
  off, a private temp folder, the person's ids, ``--cap-drop ALL``.
* The daemon runs outside bwrap, with the person's rights on the files (it must read the tree and
  write the layer folder): the command reaches it only through the FUSE requests of its view, and
  the namespaces give it no network and no System V IPC (``--net``, ``--ipc``). A bug in
  fuse-overlayfs is still reachable by the command; the kernel's overlay has no such daemon, which
  is why it comes first.
* fuse-overlayfs writes its upper layer much as the kernel does (a whiteout is a character device
  0/0), but marks a folder deleted and made again its own way (``user.fuseoverlayfs.opaque``, or a
  ``.wh..wh..opq`` file) and may write a whiteout as a ``.wh.NAME`` file where it cannot make the
  device: ``settle`` rewrites those to the kernel's form once the command has ended, so that
  ``tools.effects`` reads one format. A command cannot make a ``.wh.`` name itself (fuse-overlayfs
  refuses it) nor set a ``user.fuseoverlayfs.*`` attribute.

fuse-overlayfs needs ``/dev/fuse`` to be usable by the person (mode 0666 on most systems; where it
is 0600, only root can mount, and ``probe`` says so).
"""
from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from frogtui.approval.sandbox import seccomp
from frogtui.approval.sandbox.bwrap import BwrapWrapper
from frogtui.approval.sandbox.overlay import is_whiteout, proposal_options
from frogtui.programs import at_start, which
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.effects import OPAQUE
from frogtui.tools.project_env import project_environ
from frogtui.tools.proposals import MOUNT_FAILED, MOUNT_FAILED_LINE, Layers

FUSE_SCRIPT = (
    'f=$1 l=$2 r=$3; shift 3; "$f" -o "lowerdir=$l/lower,upperdir=$l/upper,workdir=$l/work" "$r" >"$l/mount.log" 2>&1 '
    f'|| {{ cat "$l/mount.log" >&2; echo "{MOUNT_FAILED_LINE}" >&2; exit {MOUNT_FAILED}; }}; exec "$@"'
)
"""Run by ``sh`` as the first process of the new pid namespace: mount the view (the daemon goes to
the background once the mount is ready), then exec the command's argv (bwrap). What
fuse-overlayfs prints goes to the layer folder, and to the output only when it cannot mount (it
says ``unknown argument ignored: lazytime`` on every mount: not the command's). Paths come as
arguments, never inside the script."""
FUSE_OPAQUE = "user.fuseoverlayfs.opaque"
OPAQUE_MARKERS = (".wh..wh..opq", ".wh..opq")
"""The files fuse-overlayfs leaves in a folder deleted and made again."""
WHITEOUT_PREFIX = ".wh."
_PROBES: dict[tuple[str, ...], str | None] = {}


@dataclass(frozen=True)
class FusePrograms:
    """The programs the view needs, by absolute path."""

    fuse_overlayfs: str
    setpriv: str
    unshare: str
    sh: str = "/bin/sh"

    def launcher(self) -> list[str]:
        """Everything before the shell's script: the namespaces, and death with frogtui."""
        return [self.setpriv, "--pdeathsig", "KILL", "--", self.unshare, "--user", "--map-root-user", "--mount", "--propagation",
                "private", "--pid", "--net", "--ipc", "--fork", "--kill-child=SIGKILL", "--", self.sh, "-c", FUSE_SCRIPT, "sh",
                self.fuse_overlayfs]


@dataclass(frozen=True)
class FuseView:
    """Makes a sandbox's command run on a fuse-overlayfs view of the repository (``wrapper``).

    Attributes:
        sandbox: The session's Bash sandbox.
        programs: fuse-overlayfs, setpriv, unshare and the shell.
    """

    sandbox: BwrapWrapper
    programs: FusePrograms
    kind: str = "fuse"

    @property
    def root(self) -> Path:
        return self.sandbox.root

    def wrapper(self, layers: Layers) -> CommandWrapper:
        """The ``CommandWrapper`` that runs a command on ``layers``' view."""

        def wrap(argv: Sequence[str]) -> list[str]:
            return self.argv(layers, argv, project_environ(os.environ, self.root))

        return wrap

    def argv(self, layers: Layers, argv: Sequence[str], environ: Mapping[str, str]) -> list[str]:
        """The whole argv: the namespaces, the mount, then bwrap (with its seccomp filter) and ``argv``."""
        box = replace(self.sandbox, network=False, landlock=False, read_only=False)
        inner = [*proposal_options(box.options(environ), box.tmp_dir), "--", *argv]
        inner = seccomp.with_filter(inner, box.seccomp) if box.seccomp else inner
        return [*self.programs.launcher(), str(layers.folder), str(self.root), *inner]

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The command's environment: the sandbox's."""
        return self.sandbox.environment(environ)

    def settle(self, layers: Layers) -> None:
        """Rewrite fuse-overlayfs's own marks in the upper layer to the kernel's (module docstring)."""
        settle(layers.upper)


def settle(upper: Path) -> None:
    """fuse-overlayfs's upper layer in the kernel overlay's form: an opaque folder marked
    ``user.overlay.opaque`` (its ``.wh..wh..opq``/``.wh..opq`` files removed), a ``.wh.NAME`` file a
    whiteout (a character device 0/0) named ``NAME``. Links are never followed.

    Raises:
        OSError: a whiteout cannot be made (a kernel before 5.8 refuses one to a person).
    """
    for top, dirs, files in os.walk(upper):
        for name in [*files, *dirs]:
            _drop_overlay_xattrs(os.path.join(top, name))
        names = set(files) | set(dirs)
        opaque = bool(names & set(OPAQUE_MARKERS)) or _xattr(top, FUSE_OPAQUE) == b"y"
        for marker in OPAQUE_MARKERS:
            if marker in names:
                os.unlink(os.path.join(top, marker))
        if opaque and top != str(upper):
            os.setxattr(top, OPAQUE, b"y", follow_symlinks=False)
        for name in sorted(names - set(OPAQUE_MARKERS)):
            if name.startswith(WHITEOUT_PREFIX) and len(name) > len(WHITEOUT_PREFIX):
                gone = os.path.join(top, name[len(WHITEOUT_PREFIX):])
                if not os.path.lexists(gone):
                    os.mknod(gone, stat.S_IFCHR | 0o600, os.makedev(0, 0))
                os.unlink(os.path.join(top, name))
        dirs[:] = [d for d in dirs if not d.startswith(WHITEOUT_PREFIX)]


def _drop_overlay_xattrs(path: str) -> None:
    """Remove the kernel overlay's attributes (``user.overlay.*``) a command set through the view:
    fuse-overlayfs stores them as they are, and only ``settle`` may mark a folder opaque."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        if name.startswith("user.overlay."):
            os.removexattr(path, name, follow_symlinks=False)


def _xattr(path: str, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def find_programs(root: Path) -> FusePrograms | str:
    """fuse-overlayfs, and util-linux's ``setpriv`` and ``unshare`` (absolute paths from the clean
    ``PATH``), or why not."""
    found = {name: which(name, root) for name in ("fuse-overlayfs", "setpriv", "unshare")}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        return f"{' and '.join(missing)} not found"
    return FusePrograms(*(str(found[name]) for name in ("fuse-overlayfs", "setpriv", "unshare")))


def probe(programs: FusePrograms) -> str | None:
    """Why no fuse-overlayfs view can be mounted in a user namespace here (None when it can):
    mounts one on a throwaway folder, writes and deletes through it, and checks the upper layer
    holds what was written and the tree under it nothing. Run once per process."""
    key = (programs.fuse_overlayfs, programs.setpriv, programs.unshare, programs.sh)
    if key in _PROBES:
        return _PROBES[key]
    with tempfile.TemporaryDirectory(prefix="frogtui-fuse-probe-") as base:
        lower = Path(base, "tree")
        lower.mkdir()
        (lower / "gone").write_text("x")
        layers = Layers.make(Path(base, "layers"), lower)
        argv = [*programs.launcher(), str(layers.folder), str(lower),
                programs.sh, "-c", 'echo y > "$1/new" && rm "$1/gone"', "sh", str(lower)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL, check=False,
                                  cwd="/", env={"PATH": at_start().path})
        except (OSError, subprocess.TimeoutExpired) as err:
            _PROBES[key] = f"the fuse-overlayfs launcher could not start: {err}"
            return _PROBES[key]
        if done.returncode != 0:
            lines = [line for line in (done.stdout + done.stderr).strip().splitlines()
                     if line and not line.startswith("frogtui:") and "unknown argument ignored" not in line]
            said = "; ".join(lines[-3:]) or f"exit code {done.returncode}"
            _PROBES[key] = f"fuse-overlayfs cannot mount in a user namespace here ({said})"
        elif (lower / "new").exists() or not (lower / "gone").exists():
            _PROBES[key] = "fuse-overlayfs wrote through to the tree under it"
        else:
            try:
                settle(layers.upper)
            except OSError as err:
                _PROBES[key] = f"fuse-overlayfs's upper layer cannot be read: {err}"
                return _PROBES[key]
            if not (layers.upper / "new").is_file() or not is_whiteout(layers.upper / "gone"):
                _PROBES[key] = "fuse-overlayfs's upper layer does not hold what was written"
            else:
                _PROBES[key] = None
    return _PROBES[key]
