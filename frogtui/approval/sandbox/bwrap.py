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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from frogtui.approval.rules import SandboxSettings
from frogtui.approval.sandbox import gitconfig, landlock, mounts, seccomp
from frogtui.approval.sandbox import home as sandbox_home
from frogtui.approval.sandbox.gitconfig import sanitized_copy
from frogtui.approval.sandbox.trusted import trusted_options
from frogtui.approval.sandbox.view import SandboxView
from frogtui.approval.trusted import protected_inside
from frogtui.config import state_dir
from frogtui.programs import at_start, which
from frogtui.temp_folders import process_folder
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.environment import sandbox_environment
from frogtui.tools.project_env import escaping_virtualenvs, project_environ
from frogtui.tools.workspace import Workspace

_PROBES: dict[tuple[str, bool, str], str | None] = {}


@dataclass(frozen=True)
class MountStart:
    """What the sandbox's mounts are computed from, taken once at start from the person's settings
    and environment (``BwrapWrapper.start``), never again from a disk the sandbox writes.

    Attributes:
        environ: The environment Bash starts from (``project_environ``) at start.
        home: What is hidden of the home folder and the project's parent, and shown of them.
        git_paths: ``.git`` and the git dir and common dir it names (``mounts.git_paths``).
        git_configs: Their config files (and submodules'), served without credentials.
        notes: What was ignored and why, for the person (a ``.venv`` that leads out of the
            repository).
    """

    environ: Mapping[str, str]
    home: sandbox_home.HomeView
    git_paths: tuple[str, ...]
    git_configs: tuple[str, ...]
    notes: tuple[str, ...]


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
        project: The person's repository when ``root`` is a copy of it elsewhere (an attempt's
            worktree): the folder holding it is hidden as for a single run.
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
    project: Path | None = None
    environment_of: Path | None = None
    """The repository whose environment Bash gets (``Workspace.environment_of``: an attempt's)."""
    trusted: tuple[str, ...] = ()
    """frogtui's own files inside the repository (``approval.trusted.protected_inside``): read-only
    (the state folder hidden), ``sandbox/trusted.py``."""
    _system: list[str] = field(default_factory=list, compare=False, repr=False)
    _start: dict[str, MountStart] = field(default_factory=dict, compare=False, repr=False)

    def __call__(self, argv: Sequence[str]) -> list[str]:
        wrapped = [*self.options(), "--", *argv]
        wrapped = seccomp.with_filter(wrapped, self.seccomp) if self.seccomp else wrapped
        return landlock.with_scope(wrapped) if self.landlock else wrapped

    def start(self, environ: Mapping[str, str] | None = None) -> MountStart:
        """What the mounts are computed from, taken the first time it is asked (``make_sandbox``
        asks at the session's start) from ``environ`` (default: the project's environment then),
        and kept: a ``.venv`` or a ``.git`` file a command makes later binds nothing."""
        if "start" not in self._start:
            env = dict(environ) if environ is not None else project_environ(os.environ, self.root, self.environment_of)
            writable = [self.root, self.tmp_dir]
            view = sandbox_home.home_view(_home(env), self.root, writable, self.expose, self.project)
            paths = tuple(mounts.git_paths(self.root))
            notes = tuple(f"{folder} leads outside the repository (to {real}): ignored, nothing of it is bound into the sandbox"
                          for folder, real in mounts.escaping_folders(env, writable))
            self._start["start"] = MountStart(env, view, paths, tuple(gitconfig.repository_configs(paths)), notes)
        return self._start["start"]

    def options(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """bwrap's argv up to (not including) ``--``: from what was taken at start (``start``;
        ``environ`` counts only if nothing was taken yet) and what the sandbox cannot change as
        it is now (the listening sockets, the secret stores, the submodules in the index)."""
        start = self.start(environ)
        environ = start.environ
        if not self._system:
            self._system.extend(mounts.system_options(self.network, self.privileges))
        writable = [self.root, self.tmp_dir]
        view = start.home
        options = [self.bwrap, *self._system, *mounts.runtime_options(environ, writable, self.network, view.hidden)]
        options += sandbox_home.hide_options(view) + self._gitconfig_options(environ, view)
        options += sandbox_home.socket_options(view, mounts.listening_sockets())
        options += mounts.toolchain_options(environ, writable, view.hidden)
        options += mounts.state_first_options(state_dir(), writable)
        options += ["--bind", str(self.root), str(self.root), "--bind", str(self.tmp_dir), str(self.tmp_dir)]
        for path in start.git_paths:  # a worktree's git dir in a hidden folder is shown, read-only
            if any(path == str(w) or path.startswith(f"{w}/") for w in writable) or not sandbox_home.visible(path, view):
                options += ["--ro-bind", path, path]
        options += mounts.submodule_options(self.root)
        copies, included = _repository_config_options(start.git_configs)
        options += copies
        included = [path for path in included if not mounts.under_any(path, [*map(str, writable)])
                    or mounts.under_any(path, start.git_paths)]  # a file of the working tree is the sandbox's own
        secrets = [*mounts.secret_paths(_home(environ), self.hide, self.expose), *included]
        shown = SandboxView.of(options)  # every secret store masked wherever anything bound shows it
        options += mounts.mask_places([(place, path) for path in secrets for place in shown.places(path)], writable)
        options += mounts.state_options(state_dir(), writable)
        options += trusted_options(self.trusted, self.root, self.tmp_dir, os.path.realpath(state_dir()))
        options += sandbox_home.seal_options(view)
        options = [*options, "--chdir", str(self.root)]
        return read_only_options(options, self.tmp_dir) if self.read_only else options

    def view(self) -> SandboxView:
        """What a command run now sees (the mounts it runs with), for Read and Glob."""
        return SandboxView.of(self.options())

    def shown(self) -> Callable[[str], str | None]:
        """``CommandWrapper.shown``: at a host's real path, the host file a command run now sees
        there (the file, a sanitized copy bound over it: the repository's git config), None where
        the sandbox hides it."""
        return self.view().source

    def read_only_wrapper(self) -> BwrapWrapper:
        """The same sandbox in its read-only mode, for a command run without a checkpoint because
        the policy proved it only reads (``Approval.read_only``): if the analysis was wrong, the
        command still cannot write the repository or reach the network."""
        return replace(self, read_only=True)

    def home_view(self, environ: Mapping[str, str] | None = None) -> sandbox_home.HomeView:
        """What the sandbox hides (the home folder, the folder holding the repository) and shows
        of it, as taken at start (``start``)."""
        return self.start(environ).home

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
        start = self.start()
        masked = mounts.secret_paths(_home(start.environ), self.hide, self.expose)
        view = start.home
        return [
            *(["everything read-only (the repository too), an empty private temp folder"] if self.read_only else []),
            CONFINES_PRIVILEGES[self.privileges],
            "seccomp filter (ptrace, mount, bpf, io_uring, keyrings, TIOCSTI, vsock, Unix sockets but socket pairs)" if self.seccomp
            else "no seccomp filter (Unix sockets in the repository reachable)",
            "system and .git read-only",
            f"home folder hidden ({len(view.shown)} toolchain folder(s) shown read-only)" if view.hidden else "home folder visible",
            f"{len(masked)} secret store(s) hidden",
            "/run and sockets hidden",
            "other sessions hidden",
            *([f"frogtui's own files in the repository read-only ({', '.join(self.trusted)})"] if self.trusted else []),
            "allowlisted environment",
            _network_phrase(self.network and not self.read_only, self.landlock),
        ]


def _repository_config_options(configs: Sequence[str]) -> tuple[list[str], list[str]]:
    """The repository's config files each served as a copy without credentials
    (``gitconfig.repository_copy``), and the files they include (masked like a secret store)."""
    options: list[str] = []
    included: list[str] = []
    for config in configs:
        copy, holds = gitconfig.repository_copy(config)
        options += ["--ro-bind", copy, config]
        included += holds
    return options, included


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


NO_FILTER = ("Bash runs under bubblewrap without its seccomp filter (none for this machine, or bwrap refused it): "
             "a Unix socket made outside the sandbox in the repository, or after a command started, is reachable, "
             "and so are ptrace, io_uring and the other calls the filter refuses")
"""The warning where the seccomp filter cannot be used."""

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
    notes: tuple[str, ...] = ()
    """What the sandbox ignored at start and why (a ``.venv`` leading out of the repository): say
    it to the person."""

    def describe(self) -> str:
        if not isinstance(self.wrap, BwrapWrapper):
            return "Bash runs without a sandbox"
        confines = ", ".join(self.wrap.confines())
        return f"Bash runs under bubblewrap: {confines}; writable: the repository (not .git) and the session's temp folder"


def probe_bwrap(bwrap: str, network: bool = False, privileges: str = "userns") -> str | None:
    """Why bwrap cannot sandbox here (None when it works). Runs bwrap once per process."""
    key = (bwrap, network, privileges)
    if key not in _PROBES:
        with tempfile.TemporaryDirectory(prefix="bwrap-probe-", dir=process_folder()) as folder:
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
        with tempfile.TemporaryDirectory(prefix="bwrap-probe-", dir=process_folder()) as folder:
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
                 landlock_abi: int | None = None, project: Path | None = None) -> Sandbox:
    """The sandbox for ``workspace`` under ``settings`` (``[sandbox]`` in the rules), its mounts
    taken now (``BwrapWrapper.start``).

    Args:
        bwrap: The bwrap to use (default: the one on ``PATH``).
        landlock_abi: The kernel's Landlock ABI (default: asked of the kernel): with the network
            on, below ``landlock.SCOPE_ABI`` the network is refused.
        project: The person's repository when the workspace is a copy of it elsewhere (an
            attempt's worktree): what a single run there hides is hidden too.
    """
    ignored = tuple(f"{folder} leads outside the repository (to {real}): ignored (not Bash's python, nothing of it bound into the sandbox)"
                    for folder, real in escaping_virtualenvs(os.environ, workspace.root))
    if settings.bash == "none":
        return Sandbox(None, "none", True, 'Bash runs without a sandbox: [sandbox] bash = "none" in the rules', ignored)
    path = bwrap or which("bwrap", workspace.root)  # never one the sandbox could have written (frogtui.programs)
    if path is None:
        missing = ("Bash runs without a sandbox: bubblewrap (bwrap) is not installed (on PATH outside a repository); "
                   "install it to confine Bash to the repository")
        return Sandbox(None, "none", True, missing, ignored)
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
        return Sandbox(None, "none", True, f"Bash runs without a sandbox: {problem}", ignored)
    warnings = [refused] if refused else []
    if privileges == "caps":
        warnings.append(f"Bash runs under bubblewrap without a user namespace ({problem}): a root sandbox keeps root's access to files")
    filter_path = _usable_filter(path, network, privileges, [workspace.root, workspace.tmp_dir])
    if filter_path is None:
        warnings.append(NO_FILTER)
    wrap = BwrapWrapper(
        path, workspace.root, workspace.tmp_dir, network, privileges, settings.hide, settings.expose, settings.env,
        seccomp=filter_path,
        gitconfig=sanitized_copy(os.environ, str(workspace.root)), landlock=network, project=project,
        environment_of=workspace.environment_of,
        trusted=protected_inside(workspace.root, workspace.tmp_dir),
    )
    start = wrap.start(project_environ(os.environ, workspace.root, workspace.environment_of))
    return Sandbox(wrap, "bwrap", network, "; ".join(warnings) or None, (*ignored, *start.notes))


def _privileges(bwrap: str, network: bool) -> str | None:
    """The best way bwrap can take privileges away here (``mounts.PRIVILEGES``), None: none works."""
    return next((level for level in mounts.PRIVILEGES if probe_bwrap(bwrap, network, level) is None), None)


def _launcher_problem(bwrap: str, privileges: str) -> str | None:
    """Why the Landlock launcher cannot start bwrap with the network on (None: it can; probed
    once per process)."""
    key = (f"{bwrap}+landlock", True, privileges)
    if key not in _PROBES:
        with tempfile.TemporaryDirectory(prefix="bwrap-probe-", dir=process_folder()) as folder:
            argv = [bwrap, *mounts.system_options(True, privileges), "--bind", folder, folder, "--", "true"]
            _PROBES[key] = _run_probe(landlock.with_scope(argv))
    problem = _PROBES[key]
    if problem is None:
        return None
    return f"[sandbox] network = true refused: the Landlock launcher cannot start bwrap ({problem}); Bash runs with the network off"
