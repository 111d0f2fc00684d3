"""Bash under real bubblewrap: it can write in the repository and its private temp folder, cannot
write anywhere else, and cannot reach the network (a socket listening on 127.0.0.1 outside)."""
from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogtui.approval import SandboxSettings, make_sandbox
from frogtui.approval.sandbox import probe_bwrap
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.workspace import Workspace
from tests.support import git

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or probe_bwrap(BWRAP) is not None,
    reason=f"bubblewrap is not usable here: {probe_bwrap(BWRAP) if BWRAP else 'not installed'}",
)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "repo"
    root.mkdir()
    tmp_dir = tmp_path / "session-tmp"
    tmp_dir.mkdir()
    return Workspace(root, tmp_dir=tmp_dir)


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


def run(workspace: Workspace, command: str, settings: SandboxSettings | None = None) -> str:
    sandbox = make_sandbox(workspace, settings or SandboxSettings())
    assert sandbox.wrap is not None, sandbox.warning
    runner = ToolRunner(workspace, wrap=sandbox.wrap)
    return runner.run(ToolCall("t", "Bash", {"command": command})).observation


def connect_command(port: int) -> str:
    return f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3); print(\"CONNECTED\")'"


@needs_bwrap
def test_writes_inside_the_repository_and_temp_folder(workspace: Workspace) -> None:
    observation = run(workspace, 'echo inside > made.txt && echo tmp > "$TMPDIR/t.txt" && mkdir -p a/b && echo ok')
    assert observation.startswith("Exit code: 0"), observation
    assert (workspace.root / "made.txt").read_text() == "inside\n"
    assert (workspace.tmp_dir / "t.txt").read_text() == "tmp\n"


@needs_bwrap
def test_cannot_write_outside_the_repository(workspace: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "keep.txt"
    victim.write_text("original\n")
    home_file = Path(os.path.expanduser("~")) / "frogtui-sandbox-probe.txt"
    observation = run(
        workspace,
        f"echo x > {outside}/new.txt; echo x > {victim}; rm -f {victim}; echo x > {home_file}; touch /etc/frogtui-probe; echo done",
    )
    assert "Read-only file system" in observation
    assert victim.read_text() == "original\n"
    assert not (outside / "new.txt").exists()
    assert not home_file.exists()
    assert not Path("/etc/frogtui-probe").exists()


@needs_bwrap
def test_tmp_is_private(workspace: Workspace) -> None:
    marker = Path("/tmp") / f"frogtui-sandbox-{os.getpid()}"
    observation = run(workspace, f"echo x > {marker} && cat {marker}")
    assert observation.startswith("Exit code: 0")
    assert not marker.exists(), "/tmp inside the sandbox is a fresh tmpfs"


@needs_bwrap
def test_no_network_unless_the_rules_allow_it(workspace: Workspace, listener: int) -> None:
    blocked = run(workspace, connect_command(listener))
    assert "CONNECTED" not in blocked and not blocked.startswith("Exit code: 0")
    allowed = run(workspace, connect_command(listener), SandboxSettings(network=True))
    assert "CONNECTED" in allowed, allowed


def test_sandbox_none_warns(workspace: Workspace) -> None:
    sandbox = make_sandbox(workspace, SandboxSettings(bash="none"))
    assert sandbox.wrap is None and sandbox.warning is not None
    assert "without a sandbox" in sandbox.warning and 'bash = "none"' in sandbox.warning


def test_unusable_bwrap_falls_back_with_a_warning(workspace: Workspace, tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    sandbox = make_sandbox(workspace, SandboxSettings(), bwrap=str(fake))
    assert sandbox.wrap is None
    assert (
        sandbox.warning
        == "Bash runs without a sandbox: bwrap cannot create its sandbox here (bwrap: No permissions to creating new namespace)"
    )


@needs_bwrap
def test_git_hooks_and_config_cannot_be_planted(workspace: Workspace) -> None:
    """A sandboxed command must not leave code that git runs later outside the sandbox: no hook,
    no ``core.pager``/``alias.x = !...`` in .git/config, not even by moving .git aside. ``.git`` is
    read-only as a whole: git reads (log) but cannot commit, with git's own message."""
    root = workspace.root
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    config_before = (root / ".git" / "config").read_text()
    attempts = [
        "printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
        "git config core.pager 'touch PWNED'",
        "git config alias.st '!touch PWNED'",
        "echo '[core] fsmonitor = touch PWNED' >> .git/config",
        "rm -f .git/config",
        "mv .git/hooks .git/hooks-old",
        "mv .git/config .git/config-old",
        "mv .git .git-old",
        "rm -rf .git/hooks",
    ]
    for attempt in attempts:
        run(workspace, attempt)
        assert (root / ".git" / "config").read_text() == config_before, attempt
        assert not (root / ".git" / "hooks" / "pre-commit").exists(), attempt
        assert (root / ".git" / "HEAD").exists(), attempt
    committed = run(workspace, "git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one")
    assert committed.startswith("Exit code: 128") and "index.lock': Read-only file system" in committed, committed
    git(root, "status")
    assert not (root / "PWNED").exists()
