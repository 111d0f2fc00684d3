"""No pathname Unix socket outside the sandbox is reachable from inside, wherever it lies (issue 30,
finding 3): a tmux server's socket inside the repository ran ``run-shell`` outside the sandbox, in
both sandboxes, the read-only one included. A mount covers only the sockets found before a command
starts; the seccomp filter refuses every Unix socket a command could point at an address, so a
socket made outside at any time, anywhere, stays out of reach. The command's own socket pairs
still work. Real bubblewrap, a real tmux server, real sockets listening in the test process."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogtui.approval import SandboxSettings, make_sandbox
from frogtui.approval.sandbox import BwrapWrapper, probe_bwrap
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.bash import run_bash
from frogtui.tools.workspace import Workspace

BWRAP = shutil.which("bwrap")
TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here")

PROBE = """
import os, socket, sys, time
deadline = time.monotonic() + 5
while not os.path.exists(sys.argv[-1]) and time.monotonic() < deadline:  # the last is made outside after the command started
    time.sleep(0.02)
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        print("CONNECTED", path)
    except OSError as err:
        print("refused", os.path.basename(path), type(err).__name__)
    try:
        d = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0]
        d.sendto(b"x", path)
        print("SENT", path)
    except OSError as err:
        print("refused dgram", os.path.basename(path), type(err).__name__)
a, b = socket.socketpair()
b.close()
try:
    a.connect(sys.argv[1]); print("RECONNECTED")
except OSError as err:
    print("pair stays paired", type(err).__name__)
a, b = socket.socketpair()
a.sendall(b"own pair ok"); print(b.recv(20).decode())
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "repo").mkdir()
    (tmp_path / "tmp").mkdir()
    workspace = Workspace(tmp_path / "repo", tmp_dir=tmp_path / "tmp")
    (workspace.root / "probe.py").write_text(PROBE)  # the read-only sandbox empties the temp folder
    return workspace


def wrapper(workspace: Workspace, read_only: bool) -> BwrapWrapper:
    sandbox = make_sandbox(workspace, SandboxSettings())
    assert isinstance(sandbox.wrap, BwrapWrapper) and sandbox.wrap.seccomp is not None, sandbox.warning
    return sandbox.wrap.read_only_wrapper() if read_only else sandbox.wrap


def run(workspace: Workspace, command: str, read_only: bool = False) -> str:
    runner = ToolRunner(workspace, wrap=wrapper(workspace, read_only))
    return runner.run(ToolCall("t", "Bash", {"command": command}), read_only=read_only).observation


@pytest.fixture
def tmux_in_repo(workspace: Workspace) -> Iterator[Path]:
    """A tmux server started outside the sandbox (as the person, or devenv, would) whose socket is
    ``./sock`` in the repository."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    sock = workspace.root / "sock"
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run([TMUX, "-S", str(sock), "new-session", "-d"], check=True, env=env, timeout=20, cwd=workspace.root)
    try:
        yield sock
    finally:
        subprocess.run([TMUX, "-S", str(sock), "kill-server"], check=False, env=env, timeout=20, capture_output=True)


@pytest.mark.parametrize("read_only", [False, True], ids=["sandbox", "read-only sandbox"])
def test_a_tmux_server_socket_in_the_repository_runs_nothing_outside(workspace: Workspace, tmux_in_repo: Path,
                                                                     tmp_path: Path, read_only: bool) -> None:
    marker = tmp_path / "marker"
    observation = run(workspace, f"tmux -S ./sock run-shell 'touch {marker}'; echo tmux said $?", read_only)
    assert not marker.exists(), observation
    assert "tmux said 1" in observation, observation


@pytest.mark.parametrize("read_only", [False, True], ids=["sandbox", "read-only sandbox"])
def test_no_outside_socket_is_reachable_wherever_it_lies(workspace: Workspace, on_disk: Path, read_only: bool) -> None:
    """Listening sockets made outside: in the repository, in the session's temp folder, in a folder
    outside both, and one that appears only after the command started (no mount made at the
    start can cover it). Each is tried as a stream and as a datagram address."""
    paths = [workspace.root / "dev.sock", workspace.tmp_dir / "db.sock", on_disk / "agent.sock"]
    late = workspace.root / "late.sock"
    servers = []
    for path in paths:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen()
        servers.append(server)
    late_server = socket.socket(socket.AF_UNIX)
    timer = threading.Timer(0.3, lambda: (late_server.bind(str(late)), late_server.listen()))
    try:
        timer.start()
        observation = run(workspace, "python3 probe.py " + " ".join(str(p) for p in [*paths, late]), read_only)
    finally:
        timer.join()
        for server in [*servers, late_server]:
            server.close()
    assert late.exists(), "the late socket was made while the command ran"
    assert "CONNECTED" not in observation and "SENT" not in observation and "RECONNECTED" not in observation, observation
    assert observation.count("refused ") == 2 * (len(paths) + 1), observation
    assert "pair stays paired" in observation and "own pair ok" in observation, "a command's own socket pairs still work"


def test_without_the_filter_the_person_is_told(workspace: Workspace, tmp_path: Path) -> None:
    """A bwrap that refuses ``--seccomp`` (or a machine with no filter): the sandbox still runs,
    and says at the start that Unix sockets are not kept out."""
    fake = tmp_path / "bwrap"
    fake.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = "--seccomp" ] && {{ echo "bwrap: Unknown option --seccomp" >&2; exit 1; }}; '
                    f'[ "$a" = "--" ] && break; done\nexec {BWRAP} "$@"\n')
    fake.chmod(0o755)
    sandbox = make_sandbox(workspace, SandboxSettings(), bwrap=str(fake))
    assert isinstance(sandbox.wrap, BwrapWrapper) and sandbox.wrap.seccomp is None
    assert sandbox.warning is not None and "a Unix socket made outside the sandbox in the repository" in sandbox.warning
    assert "no seccomp filter (Unix sockets in the repository reachable)" in sandbox.describe()


@pytest.mark.parametrize("read_only", [False, True], ids=["sandbox", "read-only sandbox"])
def test_a_socket_gone_between_the_scan_and_the_mounts_is_not_a_failed_command(
    workspace: Workspace, on_disk: Path, read_only: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mounts cover the sockets listening when the argv is made; one that went away (with its
    folder) before bwrap mounted over it failed the command with bwrap's ``Can't mkdir parents for
    …/agent.sock`` (seen in CI: another test's socket). The home folder is elsewhere, so the
    socket's folder is shown and the socket covered."""
    monkeypatch.setenv("HOME", str(tmp_path))
    folder = on_disk / "gone"
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "agent.sock"))
    server.listen()
    real = wrapper(workspace, read_only)
    made: list[list[str]] = []

    def wrap(argv: list[str]) -> list[str]:
        made.append(real(argv))
        if len(made) == 1:
            server.close()
            shutil.rmtree(folder)
        return made[-1]

    try:
        observation = run_bash("echo ran", str(workspace.root), wrap=wrap).observation
    finally:
        server.close()
    assert str(folder / "agent.sock") in made[0], "the socket was covered when it listened"
    assert observation == "Exit code: 0\nSTDOUT:\nran\n\nSTDERR:\n", observation
    assert len(made) == 2, "the argv is made again once, without the socket"
