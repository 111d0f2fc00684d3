"""Bash under bubblewrap: no capabilities (a user namespace, even as root), the system read-only,
``.git`` read-only, the person's secret stores and every daemon socket hidden, the repository and
the session's private temp folder writable, a fresh ``/tmp``, an allowlisted environment, and no
network unless the rules allow it. The mounts are in ``sandbox_mounts``.

``make_sandbox`` checks once per process that bwrap can really create its namespaces here (it
cannot in some containers) and otherwise falls back to no sandbox with a clear warning.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from frogtui.approval import sandbox_mounts as mounts
from frogtui.approval import seccomp
from frogtui.approval.rules import SandboxSettings
from frogtui.config import state_dir
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.environment import sandbox_environment
from frogtui.tools.workspace import Workspace

_PROBES: dict[tuple[str, bool, str], str | None] = {}


@dataclass(frozen=True)
class BwrapWrapper:
    """A ``CommandWrapper``: turns the shell's argv into the same command under bubblewrap.

    Attributes:
        privileges: how privileges are taken away (``sandbox_mounts.PRIVILEGES``: ``userns``,
            ``userns-nested`` with bwrap before 0.8, ``caps`` where no user namespace can be made).
        hide: More paths to mask; expose: built-in secret stores left visible; env_names: more
            environment variables to pass (``[sandbox]``).
        seccomp: The seccomp filter file, None where there is none (another machine, or bwrap
            refused it).
    """

    bwrap: str
    root: Path
    tmp_dir: Path
    network: bool = False
    privileges: str = "userns"
    hide: tuple[str, ...] = ()
    expose: tuple[str, ...] = ()
    env_names: tuple[str, ...] = ()
    seccomp: str | None = None
    _system: list[str] = field(default_factory=list, compare=False, repr=False)

    def __call__(self, argv: Sequence[str]) -> list[str]:
        wrapped = [*self.options(os.environ), "--", *argv]
        return seccomp.with_filter(wrapped, self.seccomp) if self.seccomp else wrapped

    def options(self, environ: Mapping[str, str]) -> list[str]:
        """bwrap's argv up to (not including) ``--``, built from the disk as it is now."""
        if not self._system:
            self._system.extend(mounts.system_options(self.network, self.privileges))
        writable = [self.root, self.tmp_dir]
        options = [self.bwrap, *self._system, *mounts.runtime_options(environ, writable, self.network)]
        options += mounts.toolchain_options(environ, writable)
        options += mounts.state_first_options(state_dir(), writable)
        options += ["--bind", str(self.root), str(self.root), "--bind", str(self.tmp_dir), str(self.tmp_dir)]
        for path in mounts.git_paths(self.root):
            if any(path == str(w) or path.startswith(f"{w}/") for w in writable):
                options += ["--ro-bind", path, path]
        options += mounts.submodule_options(self.root)
        home = environ.get("HOME") or os.path.expanduser("~")
        options += mounts.mask_options(mounts.secret_paths(home, self.hide, self.expose), writable)
        options += mounts.state_options(state_dir(), writable)
        return [*options, "--chdir", str(self.root)]

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment for a sandboxed command: the allowlist plus ``[sandbox] env``."""
        return sandbox_environment(environ, self.env_names)

    def confines(self) -> list[str]:
        """What this sandbox confines, one phrase each (for ``describe`` and ``frogtui doctor``)."""
        home = os.path.expanduser("~")
        masked = mounts.secret_paths(home, self.hide, self.expose)
        return [
            CONFINES_PRIVILEGES[self.privileges],
            "seccomp filter (ptrace, mount, bpf, io_uring, keyrings, TIOCSTI, vsock)" if self.seccomp else "no seccomp filter",
            "system and .git read-only",
            f"{len(masked)} secret store(s) hidden",
            "/run and sockets hidden",
            "other sessions hidden",
            "allowlisted environment",
            f"network {'on' if self.network else 'off'}",
        ]


CONFINES_PRIVILEGES = {
    "userns": "user namespace, no capabilities",
    "userns-nested": "user namespace, no capabilities (bwrap before 0.8: nested user namespaces allowed)",
    "caps": "no capabilities (no user namespace here: root keeps its file access)",
}


@dataclass(frozen=True)
class Sandbox:
    """How Bash will run.

    Attributes:
        wrap: The wrapper to give ``ToolRunner(workspace, wrap=...)``; None without a sandbox.
        kind: ``bwrap`` or ``none``.
        network: Whether sandboxed commands may use the network.
        warning: Set when Bash runs without a sandbox (or with a weaker one): say it to the person.
    """

    wrap: CommandWrapper | None
    kind: str
    network: bool
    warning: str | None = None

    def describe(self) -> str:
        if not isinstance(self.wrap, BwrapWrapper):
            return "Bash runs without a sandbox"
        confines = ", ".join(self.wrap.confines())
        return f"Bash runs under bubblewrap: {confines}; writable: the repository (not .git) and the session's temp folder"


def probe_bwrap(bwrap: str, network: bool = False, privileges: str = "userns") -> str | None:
    """Why bwrap cannot sandbox here (None when it works). Runs bwrap once per process."""
    key = (bwrap, network, privileges)
    if key not in _PROBES:
        with tempfile.TemporaryDirectory(prefix="frogtui-bwrap-probe-") as folder:
            argv = [bwrap, *mounts.system_options(network, privileges), "--bind", folder, folder, "--", "true"]
            _PROBES[key] = _run_probe(argv)
    return _PROBES[key]


def _usable_filter(bwrap: str, network: bool, privileges: str, writable: Sequence[Path]) -> str | None:
    """The seccomp filter file when this machine has one, the sandbox cannot write it, and bwrap
    accepts it (probed once per process)."""
    path = seccomp.filter_file()
    if path is None or any(path.startswith(f"{w}/") for w in writable):
        return None
    key = (f"{bwrap}+seccomp", network, privileges)
    if key not in _PROBES:
        with tempfile.TemporaryDirectory(prefix="frogtui-bwrap-probe-") as folder:
            argv = [bwrap, *mounts.system_options(network, privileges), "--bind", folder, folder, "--", "true"]
            _PROBES[key] = _run_probe(seccomp.with_filter(argv, path))
    return path if _PROBES[key] is None else None


def _run_probe(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not start: {err}"
    first = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[0]
    return None if done.returncode == 0 else f"bwrap cannot create its sandbox here ({first})"


def make_sandbox(workspace: Workspace, settings: SandboxSettings, *, bwrap: str | None = None) -> Sandbox:
    """The sandbox for ``workspace`` under ``settings`` (``[sandbox]`` in the rules)."""
    if settings.bash == "none":
        return Sandbox(None, "none", True, 'Bash runs without a sandbox: [sandbox] bash = "none" in the rules')
    path = bwrap or shutil.which("bwrap")
    if path is None:
        missing = "Bash runs without a sandbox: bubblewrap (bwrap) is not installed; install it to confine Bash to the repository"
        return Sandbox(None, "none", True, missing)
    problem = probe_bwrap(path, settings.network)
    privileges = next((level for level in mounts.PRIVILEGES if probe_bwrap(path, settings.network, level) is None), None)
    if privileges is None:
        return Sandbox(None, "none", True, f"Bash runs without a sandbox: {problem}")
    warning = None
    if privileges == "caps":
        warning = f"Bash runs under bubblewrap without a user namespace ({problem}): a root sandbox keeps root's access to files"
    wrap = BwrapWrapper(
        path, workspace.root, workspace.tmp_dir, settings.network, privileges, settings.hide, settings.expose, settings.env,
        seccomp=_usable_filter(path, settings.network, privileges, [workspace.root, workspace.tmp_dir]),
    )
    return Sandbox(wrap, "bwrap", settings.network, warning)
