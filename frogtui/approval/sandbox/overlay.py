"""The copy-on-write view a proposal runs on (``tools.proposals``): the repository as the lower
layer of a kernel overlayfs, mounted in a private user and mount namespace of its own, with the
Bash sandbox (bubblewrap) started inside that namespace on the merged view.

    frogtui ─ unshare --user --map-root-user --mount ─ sh: mount -t overlay … ROOT; exec bwrap … ROOT …

* The overlay is mounted over the repository's own path, inside the new mount namespace only: the
  command sees the repository where it always is, every write goes to the upper layer (a folder
  in the session's state folder, out of the sandbox's reach), the working tree is never written.
  The host's mount table never holds it: the namespace, and the mount with it, ends when its last
  process does.
* ``unshare`` execs ``sh``, which execs bwrap: one process, whose parent is frogtui, so bwrap's
  ``--die-with-parent`` ends it (and its pid namespace, every process of the command) when
  frogtui dies, ``kill -9`` included.
* bwrap runs as root of the outer namespace, which holds every capability there: its own
  ``--unshare-user --cap-drop ALL`` (``mounts.PRIVILEGES``) takes them away, and ``--uid``/``--gid``
  give the command the person's ids, as in a direct run.
* The network is off and the session's temp folder is an empty tmpfs of the proposal's own: a
  proposal has no effect outside the repository's view.
* ``volatile``: the upper layer is never synced (it is thrown away or copied out; a copy-up
  costs a tenth of a synced one).
* The overlay's option string holds only frogtui's own layer folder: the lower layer is named
  through a symbolic link there (``lower``), so a repository path with ``,`` or ``:`` in it needs
  no escaping.

``probe`` says once per process whether this works here (the kernel, a user namespace, util-linux's
``unshare`` and ``mount``); where it does not, ``views.make_view`` tries the fallbacks
(fuse-overlayfs, ``fuse``; running on the tree and putting back what is not accepted, ``direct``),
and ``frogtui doctor`` says which runs.
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
from frogtui.programs import at_start, which
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.project_env import project_environ
from frogtui.tools.proposals import MOUNT_FAILED, MOUNT_FAILED_LINE, Layers

MOUNT_SCRIPT = (
    'm=$1 l=$2 r=$3; shift 3; "$m" -n -t overlay overlay -o "lowerdir=$l/lower,upperdir=$l/upper,workdir=$l/work,userxattr,volatile" "$r" '
    f'|| {{ echo "{MOUNT_FAILED_LINE}" >&2; exit {MOUNT_FAILED}; }}; exec "$@"'
)
"""Run by ``sh`` in the new namespaces: mount the overlay over the repository, then exec the
command's argv (bwrap). Paths come as arguments, never inside the script."""
_PROBES: dict[tuple[str, str, str], str | None] = {}


@dataclass(frozen=True)
class OverlayView:
    """Makes a sandbox's command run on a copy-on-write view of the repository (``wrapper``).

    Attributes:
        sandbox: The session's Bash sandbox (its settings: mounts, secrets, seccomp).
        unshare: util-linux ``unshare``; mount: util-linux ``mount``; sh: the shell that chains them.
    """

    sandbox: BwrapWrapper
    unshare: str
    mount: str
    sh: str = "/bin/sh"
    kind: str = "overlay"

    @property
    def root(self) -> Path:
        return self.sandbox.root

    def wrapper(self, layers: Layers) -> CommandWrapper:
        """The ``CommandWrapper`` that runs a command on ``layers``' view (network off, a private
        temp folder, the person's ids, no capabilities)."""

        def wrap(argv: Sequence[str]) -> list[str]:
            return self.argv(layers, argv, project_environ(os.environ, self.root))

        return wrap

    def argv(self, layers: Layers, argv: Sequence[str], environ: Mapping[str, str]) -> list[str]:
        """The whole argv: unshare, the mount, then bwrap (with its seccomp filter) and ``argv``."""
        box = replace(self.sandbox, network=False, landlock=False, read_only=False)
        options = proposal_options(box.options(environ), box.tmp_dir)
        inner = [*options, "--", *argv]
        inner = seccomp.with_filter(inner, box.seccomp) if box.seccomp else inner
        launcher = [self.unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--"]
        return [*launcher, self.sh, "-c", MOUNT_SCRIPT, "sh", self.mount, str(layers.folder), str(self.root), *inner]

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The command's environment: the sandbox's."""
        return self.sandbox.environment(environ)


def proposal_options(options: list[str], tmp_dir: Path) -> list[str]:
    """bwrap's options (up to ``--``, ending in ``--chdir``) for a proposal: the network unshared,
    the person's ids inside its user namespace, and an empty tmpfs over the session's temp folder."""
    made = list(options)
    if "--unshare-net" not in made:
        made.insert(1, "--unshare-net")
    if "--unshare-user" in made:
        made[1:1] = ["--uid", str(os.getuid()), "--gid", str(os.getgid())]
    chdir = len(made) - 2 if made[-2:-1] == ["--chdir"] else len(made)
    return [*made[:chdir], "--tmpfs", str(tmp_dir), *made[chdir:]]


def find_programs(root: Path) -> tuple[str, str] | str:
    """util-linux's ``unshare`` and ``mount`` (absolute paths from the clean ``PATH``), or why not."""
    unshare, mount = which("unshare", root), which("mount", root)
    missing = [name for name, path in (("unshare", unshare), ("mount", mount)) if path is None]
    if missing:
        return f"{' and '.join(missing)} (util-linux) not found"
    assert unshare is not None and mount is not None
    return unshare, mount


def probe(unshare: str, mount: str, sh: str = "/bin/sh") -> str | None:
    """Why no overlay can be mounted in a user namespace here (None when it can): mounts one on a
    throwaway folder, writes and deletes through it, and checks the upper layer holds the
    whiteout. Run once per process."""
    key = (unshare, mount, sh)
    if key in _PROBES:
        return _PROBES[key]
    with tempfile.TemporaryDirectory(prefix="frogtui-overlay-probe-") as base:
        lower = Path(base, "tree")
        lower.mkdir()
        (lower / "gone").write_text("x")
        layers = Layers.make(Path(base, "layers"), lower)
        argv = [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--", sh, "-c", MOUNT_SCRIPT, "sh",
                mount, str(layers.folder), str(lower), sh, "-c", 'echo y > "$1/new" && rm "$1/gone"', "sh", str(lower)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL, check=False,
                                  cwd="/", env={"PATH": at_start().path})
        except (OSError, subprocess.TimeoutExpired) as err:
            _PROBES[key] = f"the overlay launcher could not start: {err}"
            return _PROBES[key]
        gone = layers.upper / "gone"
        if done.returncode != 0:
            lines = [line for line in done.stderr.strip().splitlines() if line and not line.startswith("frogtui:")]
            _PROBES[key] = f"no overlay in a user namespace here ({(lines or [f'exit code {done.returncode}'])[0]})"
        elif (lower / "new").exists() or not (lower / "gone").exists():
            _PROBES[key] = "the overlay wrote through to the tree under it"
        elif not (layers.upper / "new").is_file() or not is_whiteout(gone):
            _PROBES[key] = "the overlay's upper layer does not hold what was written"
        else:
            _PROBES[key] = None
    return _PROBES[key]


def is_whiteout(path: Path) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0
