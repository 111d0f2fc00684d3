"""Bash under bubblewrap: no capabilities (a user namespace, even as root), the system read-only,
``.git`` read-only, the person's secret stores and every daemon socket hidden, the repository and
the session's private temp folder writable, a fresh ``/tmp``, an allowlisted environment, and no
network unless the rules allow it. The mounts are in ``mounts``.

``make_sandbox`` checks once per process that bwrap can really create its namespaces here (it
cannot in some containers) and otherwise falls back to no sandbox with a clear warning.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from frogtui.approval.rules import SandboxSettings
from frogtui.approval.sandbox import home as sandbox_home
from frogtui.approval.sandbox import landlock, mounts, seccomp
from frogtui.approval.sandbox.gitconfig import sanitized_copy
from frogtui.approval.sandbox.trusted import trusted_options
from frogtui.approval.trusted import protected_inside
from frogtui.config import state_dir
from frogtui.programs import at_start, which
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.environment import sandbox_environment
from frogtui.tools.project_env import project_environ
from frogtui.tools.workspace import Workspace

_PROBES: dict[tuple[str, bool, str], str | None] = {}


@dataclass(frozen=True)
class BwrapWrapper:
    """A ``CommandWrapper``: turns the shell's argv into the same command under bubblewrap.

    Attributes:
        privileges: how privileges are taken away (``mounts.PRIVILEGES``: ``userns``,
            ``userns-nested`` with bwrap before 0.8, ``caps`` where no user namespace can be made).
        hide: More paths to mask; expose: paths under the hidden home folder shown read-only (a
            secret store named there is left visible); env_names: more environment variables to
            pass (``[sandbox]``).
        seccomp: The seccomp filter file, None where there is none (another machine, or bwrap
            refused it).
        gitconfig: The person's global git config without credentials (``gitconfig``),
            shown at ``~/.gitconfig`` in the hidden home folder; None when there is none.
        landlock: Whether bwrap runs in a Landlock domain scoped to abstract Unix sockets (with the
            network on: the host's abstract sockets stay unreachable; ``landlock``).
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
    gitconfig: str | None = None
    landlock: bool = False
    read_only: bool = False
    """The read-only mode (``read_only_wrapper``): every mount read-only, the repository included,
    an empty private temp folder, no network."""
    trusted: tuple[str, ...] = ()
    """frogtui's own files inside the repository (``approval.trusted.protected_inside``): read-only
    (the state folder hidden), ``sandbox/trusted.py``."""
    _system: list[str] = field(default_factory=list, compare=False, repr=False)

    def __call__(self, argv: Sequence[str]) -> list[str]:
        wrapped = [*self.options(project_environ(os.environ, self.root)), "--", *argv]
        wrapped = seccomp.with_filter(wrapped, self.seccomp) if self.seccomp else wrapped
        return landlock.with_scope(wrapped) if self.landlock else wrapped

    def options(self, environ: Mapping[str, str]) -> list[str]:
        """bwrap's argv up to (not including) ``--``, built from the disk as it is now."""
        if not self._system:
            self._system.extend(mounts.system_options(self.network, self.privileges))
        writable = [self.root, self.tmp_dir]
        view = self.home_view(environ)
        options = [self.bwrap, *self._system, *mounts.runtime_options(environ, writable, self.network, view.hidden)]
        options += sandbox_home.hide_options(view) + self._gitconfig_options(environ, view)
        options += sandbox_home.socket_options(view, mounts.listening_sockets())
        options += mounts.toolchain_options(environ, writable, view.hidden)
        options += mounts.state_first_options(state_dir(), writable)
        options += ["--bind", str(self.root), str(self.root), "--bind", str(self.tmp_dir), str(self.tmp_dir)]
        for path in mounts.git_paths(self.root):  # a worktree's git dir in a hidden folder is shown, read-only
            if any(path == str(w) or path.startswith(f"{w}/") for w in writable) or not sandbox_home.visible(path, view):
                options += ["--ro-bind", path, path]
        options += mounts.submodule_options(self.root)
        secrets = mounts.secret_paths(_home(environ), self.hide, self.expose)
        options += mounts.mask_options([path for path in secrets if sandbox_home.visible(path, view)], writable)
        options += mounts.state_options(state_dir(), writable)
        options += trusted_options(self.trusted, self.root, self.tmp_dir, os.path.realpath(state_dir()))
        options += sandbox_home.seal_options(view)
        options = [*options, "--chdir", str(self.root)]
        return read_only_options(options, self.tmp_dir) if self.read_only else options

    def read_only_wrapper(self) -> BwrapWrapper:
        """The same sandbox in its read-only mode, for a command run without a checkpoint because
        the policy proved it only reads (``Approval.read_only``): if the analysis was wrong, the
        command still cannot write the repository or reach the network."""
        return replace(self, read_only=True)

    def home_view(self, environ: Mapping[str, str]) -> sandbox_home.HomeView:
        """What the sandbox hides (the home folder, the folder holding the repository) and shows
        of it, from the disk as it is now."""
        return sandbox_home.home_view(_home(environ), self.root, [self.root, self.tmp_dir], self.expose)

    def _gitconfig_options(self, environ: Mapping[str, str], view: sandbox_home.HomeView) -> list[str]:
        target = self._gitconfig_target(environ, view)
        return ["--ro-bind", self.gitconfig, target] if self.gitconfig and target else []

    def _gitconfig_target(self, environ: Mapping[str, str], view: sandbox_home.HomeView) -> str | None:
        """Where the sanitized git config is shown: ``~/.gitconfig`` when the home folder is hidden
        (and ``expose`` does not name the real one)."""
        target = os.path.join(os.path.realpath(_home(environ)), ".gitconfig")
        return target if self.gitconfig and not sandbox_home.visible(target, view) else None

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment for a sandboxed command: the allowlist plus ``[sandbox] env``; git's
        global config is the sanitized copy where the home folder is hidden."""
        env = sandbox_environment(environ, self.env_names)
        view = self.home_view(environ)
        target = self._gitconfig_target(environ, view)
        if target:
            env["GIT_CONFIG_GLOBAL"] = target
        elif "GIT_CONFIG_GLOBAL" in env and not sandbox_home.visible(os.path.realpath(env["GIT_CONFIG_GLOBAL"]), view):
            del env["GIT_CONFIG_GLOBAL"]
        return env

    def confines(self) -> list[str]:
        """What this sandbox confines, one phrase each (for ``describe`` and ``frogtui doctor``)."""
        masked = mounts.secret_paths(_home(os.environ), self.hide, self.expose)
        view = self.home_view(os.environ)
        return [
            *(["everything read-only (the repository too), an empty private temp folder"] if self.read_only else []),
            CONFINES_PRIVILEGES[self.privileges],
            "seccomp filter (ptrace, mount, bpf, io_uring, keyrings, TIOCSTI, vsock, set-ID)" if self.seccomp else "no seccomp filter",
            "system and .git read-only",
            f"home folder hidden ({len(view.shown)} toolchain folder(s) shown read-only)" if view.hidden else "home folder visible",
            f"{len(masked)} secret store(s) hidden",
            "/run and sockets hidden",
            "other sessions hidden",
            *([f"frogtui's own files in the repository read-only ({', '.join(self.trusted)})"] if self.trusted else []),
            "allowlisted environment",
            _network_phrase(self.network and not self.read_only, self.landlock),
        ]


def _network_phrase(network: bool, scoped: bool) -> str:
    if not network:
        return "network off"
    if scoped:
        return "network on (abstract Unix sockets outside unreachable: Landlock scope)"
    return "network on (abstract Unix sockets reachable)"


def _home(environ: Mapping[str, str]) -> str:
    return environ.get("HOME") or os.path.expanduser("~")


def read_only_options(options: list[str], tmp_dir: Path) -> list[str]:
    """bwrap's options (up to ``--`` and the trailing ``--chdir``) made read-only: every ``--bind``
    a ``--ro-bind`` (the repository, a submodule, the session's temp folder), the network
    unshared, and an empty tmpfs over the session's temp folder (``TMPDIR``), private to the
    command and gone after it."""
    made = ["--ro-bind" if option == "--bind" else option for option in options]
    if "--unshare-net" not in made:
        made.insert(1, "--unshare-net")
    chdir = len(made) - 2 if made[-2:-1] == ["--chdir"] else len(made)
    return [*made[:chdir], "--tmpfs", str(tmp_dir), *made[chdir:]]


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
        done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
                              cwd="/", env={"PATH": at_start().path})
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not start: {err}"
    first = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[0]
    return None if done.returncode == 0 else f"bwrap cannot create its sandbox here ({first})"


def make_sandbox(workspace: Workspace, settings: SandboxSettings, *, bwrap: str | None = None,
                 landlock_abi: int | None = None) -> Sandbox:
    """The sandbox for ``workspace`` under ``settings`` (``[sandbox]`` in the rules).

    Args:
        bwrap: The bwrap to use (default: the one on ``PATH``).
        landlock_abi: The kernel's Landlock ABI (default: asked of the kernel): with the network
            on, below ``landlock.SCOPE_ABI`` the network is refused.
    """
    if settings.bash == "none":
        return Sandbox(None, "none", True, 'Bash runs without a sandbox: [sandbox] bash = "none" in the rules')
    path = bwrap or which("bwrap", workspace.root)  # never one the sandbox could have written (frogtui.programs)
    if path is None:
        missing = ("Bash runs without a sandbox: bubblewrap (bwrap) is not installed (on PATH outside a repository); "
                   "install it to confine Bash to the repository")
        return Sandbox(None, "none", True, missing)
    network, refused = settings.network, None
    if network:
        abi = landlock.abi_version() if landlock_abi is None else landlock_abi
        if not landlock.scopes_abstract_sockets(abi):
            network, refused = False, landlock.refusal(abi)
    privileges = _privileges(path, network)
    if network and privileges is not None:
        refused = _launcher_problem(path, privileges)
        network = refused is None
        privileges = privileges if network else _privileges(path, network)
    problem = probe_bwrap(path, network)
    if privileges is None:
        return Sandbox(None, "none", True, f"Bash runs without a sandbox: {problem}")
    warnings = [refused] if refused else []
    if privileges == "caps":
        warnings.append(f"Bash runs under bubblewrap without a user namespace ({problem}): a root sandbox keeps root's access to files")
    wrap = BwrapWrapper(
        path, workspace.root, workspace.tmp_dir, network, privileges, settings.hide, settings.expose, settings.env,
        seccomp=_usable_filter(path, network, privileges, [workspace.root, workspace.tmp_dir]),
        gitconfig=sanitized_copy(os.environ, str(workspace.root)), landlock=network,
        trusted=protected_inside(workspace.root, workspace.tmp_dir),
    )
    return Sandbox(wrap, "bwrap", network, "; ".join(warnings) or None)


def _privileges(bwrap: str, network: bool) -> str | None:
    """The best way bwrap can take privileges away here (``mounts.PRIVILEGES``), None: none works."""
    return next((level for level in mounts.PRIVILEGES if probe_bwrap(bwrap, network, level) is None), None)


def _launcher_problem(bwrap: str, privileges: str) -> str | None:
    """Why the Landlock launcher cannot start bwrap with the network on (None: it can; probed
    once per process)."""
    key = (f"{bwrap}+landlock", True, privileges)
    if key not in _PROBES:
        with tempfile.TemporaryDirectory(prefix="frogtui-bwrap-probe-") as folder:
            argv = [bwrap, *mounts.system_options(True, privileges), "--bind", folder, folder, "--", "true"]
            _PROBES[key] = _run_probe(landlock.with_scope(argv))
    problem = _PROBES[key]
    if problem is None:
        return None
    return f"[sandbox] network = true refused: the Landlock launcher cannot start bwrap ({problem}); Bash runs with the network off"
