"""Bash under bubblewrap: the system read-only, the repository and the session's private temp
folder writable, a fresh ``/tmp``, and no network unless the rules allow it.

``make_sandbox`` checks once per process that bwrap can really create its namespaces here (it
cannot in some containers) and otherwise falls back to no sandbox with a clear warning.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from frogtui.approval.rules import SandboxSettings
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.workspace import Workspace

_PROBES: dict[tuple[str, bool], str | None] = {}


@dataclass(frozen=True)
class BwrapWrapper:
    """A ``CommandWrapper``: turns ``bash -lc COMMAND`` into the same command under bubblewrap."""

    bwrap: str
    root: Path
    tmp_dir: Path
    network: bool = False

    def __call__(self, argv: Sequence[str]) -> list[str]:
        return [*bwrap_options(self.bwrap, self.root, self.tmp_dir, self.network), *git_guard(self.root), "--", *argv]


GIT_RUNS_FROM = ("hooks", "config", "config.worktree", "info/attributes")
"""What in ``.git`` decides commands git runs later, outside the sandbox (hooks, ``core.pager``,
``alias.*``, ``core.fsmonitor``, filter drivers): read-only inside it."""


def git_guard(root: Path) -> list[str]:
    """bwrap options that keep a sandboxed command from planting code that git runs later, outside
    the sandbox: ``.git`` is bound onto itself (a mount point cannot be renamed or removed, so
    ``mv .git old && cp -r old .git`` fails) and its hooks and config are bound read-only. A
    ``.git`` file (a worktree or submodule pointer) is read-only as a whole. The hooks folder is
    created first when missing, so that it cannot be created inside."""
    git_dir = root / ".git"
    if git_dir.is_symlink() or not git_dir.exists():
        return []
    if git_dir.is_file():
        return ["--ro-bind", str(git_dir), str(git_dir)]
    options = ["--bind", str(git_dir), str(git_dir)]
    try:
        (git_dir / "hooks").mkdir(exist_ok=True)
    except OSError:
        pass  # a read-only .git: nothing can be planted there either
    folders = [git_dir, *sorted(p.parent for p in git_dir.glob("modules/**/config"))]
    for folder in folders:
        for name in GIT_RUNS_FROM:
            path = folder / name
            if path.exists() and not path.is_symlink():
                options += ["--ro-bind", str(path), str(path)]
    return options


def bwrap_options(bwrap: str, root: Path, tmp_dir: Path, network: bool) -> list[str]:
    """bwrap's argv up to (not including) ``--``. Later mounts cover earlier ones, so the
    writable folders are bound after the read-only system and the fresh ``/tmp``."""
    options = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-ipc",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        "--tmpfs", "/var/tmp",
        "--bind", str(root), str(root),
        "--bind", str(tmp_dir), str(tmp_dir),
        "--chdir", str(root),
    ]
    if not network:
        options.insert(2, "--unshare-net")
    return options


@dataclass(frozen=True)
class Sandbox:
    """How Bash will run.

    Attributes:
        wrap: The wrapper to give ``ToolRunner(workspace, wrap=...)``; None without a sandbox.
        kind: ``bwrap`` or ``none``.
        network: Whether sandboxed commands may use the network.
        warning: Set when Bash runs without a sandbox: say it to the person.
    """

    wrap: CommandWrapper | None
    kind: str
    network: bool
    warning: str | None = None

    def describe(self) -> str:
        if self.wrap is None:
            return "Bash runs without a sandbox"
        return f"Bash runs under bubblewrap (repository and temp folder writable, network {'on' if self.network else 'off'})"


def probe_bwrap(bwrap: str, network: bool = False) -> str | None:
    """Why bwrap cannot sandbox here (None when it works). Runs bwrap once per process."""
    key = (bwrap, network)
    if key not in _PROBES:
        with tempfile.TemporaryDirectory(prefix="frogtui-bwrap-probe-") as folder:
            _PROBES[key] = _run_probe([*bwrap_options(bwrap, Path(folder), Path(folder), network), "--", "true"])
    return _PROBES[key]


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
        return Sandbox(
            None,
            "none",
            True,
            "Bash runs without a sandbox: bubblewrap (bwrap) is not installed; install it to confine Bash to the repository",
        )
    problem = probe_bwrap(path, settings.network)
    if problem is not None:
        return Sandbox(None, "none", True, f"Bash runs without a sandbox: {problem}")
    return Sandbox(BwrapWrapper(path, workspace.root, workspace.tmp_dir, settings.network), "bwrap", settings.network)
