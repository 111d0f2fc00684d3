"""With ``[sandbox] network = true`` the sandbox shares the host's network namespace, and with it
every abstract Unix socket (X11, some D-Bus buses): issue 23, finding 8. Landlock's abstract-socket
scope keeps them unreachable; on a kernel without it the network is refused, with the reason.
Real bubblewrap, a real abstract socket listening in the test process."""
from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogtui import doctor
from frogtui.approval import SandboxSettings, make_sandbox
from frogtui.approval.sandbox import landlock, probe_bwrap
from frogtui.config import config_dir
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.workspace import Workspace

BWRAP = shutil.which("bwrap")
pytestmark = [pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here"),
              pytest.mark.xdist_group("host sockets")]  # beside test_sandbox_escape.py's run as nobody: one worker
SCOPED = landlock.scopes_abstract_sockets(landlock.abi_version())

PROBE = """
import socket, sys
try:
    outside = socket.socket(socket.AF_UNIX)
    outside.connect(sys.argv[1].replace("@", "\\0", 1)); print("CONNECTED-OUTSIDE")
except OSError as err:
    print("refused outside:", err)
a, b = socket.socketpair(); a.sendall(b"pair ok"); print(b.recv(10).decode())
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    (tmp_path / "repo").mkdir()
    (tmp_path / "tmp").mkdir()
    workspace = Workspace(tmp_path / "repo", tmp_dir=tmp_path / "tmp")
    (workspace.tmp_dir / "probe.py").write_text(PROBE)
    return workspace


@pytest.fixture
def abstract_socket() -> Iterator[str]:
    """An abstract Unix socket listening in this process (as X11 or a D-Bus bus would), as ``@name``."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(f"\0frogtui-test-{os.getpid()}")
    server.listen()
    try:
        yield f"@frogtui-test-{os.getpid()}"
    finally:
        server.close()


def run(workspace: Workspace, command: str, **sandbox: object) -> tuple[str, str | None]:
    made = make_sandbox(workspace, SandboxSettings(network=True), **sandbox)  # type: ignore[arg-type]
    assert made.wrap is not None
    return ToolRunner(workspace, wrap=made.wrap).run(ToolCall("t", "Bash", {"command": command})).observation, made.warning


@pytest.mark.skipif(not SCOPED, reason=f"LOUD SKIP: this kernel has Landlock ABI {landlock.abi_version()}, no abstract-socket scope")
def test_with_the_network_on_abstract_sockets_outside_are_unreachable(workspace: Workspace, abstract_socket: str) -> None:
    observation, warning = run(workspace, f"python3 $TMPDIR/probe.py {abstract_socket}")
    assert warning is None
    assert "CONNECTED-OUTSIDE" not in observation and "refused outside: [Errno 1] Operation not permitted" in observation, observation
    assert "pair ok" in observation, "the sandbox's own socket pairs still work"
    sandbox = make_sandbox(workspace, SandboxSettings(network=True))
    assert sandbox.network and "abstract Unix sockets outside unreachable: Landlock scope" in sandbox.describe()


def test_without_the_scope_the_network_is_refused_with_the_reason(workspace: Workspace, abstract_socket: str) -> None:
    """A kernel before 6.12 (Landlock ABI 5), simulated: the sandbox runs with the network off,
    so its own network namespace holds no abstract socket of the host."""
    observation, warning = run(workspace, f"python3 $TMPDIR/probe.py {abstract_socket}", landlock_abi=5)
    assert warning is not None and warning.startswith("[sandbox] network = true refused: this kernel has Landlock ABI 5"), warning
    assert "CONNECTED-OUTSIDE" not in observation and "refused outside" in observation, observation
    sandbox = make_sandbox(workspace, SandboxSettings(network=True), landlock_abi=0)
    assert not sandbox.network and "network off" in sandbox.describe() and "has no Landlock" in (sandbox.warning or "")


def test_doctor_says_which(workspace: Workspace) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text("[sandbox]\nnetwork = true\n")
    text = "\n".join(doctor._sandbox_lines(workspace.root, None))
    if SCOPED:
        assert "network on (abstract Unix sockets outside unreachable: Landlock scope)" in text, text
    else:
        assert "WARNING [sandbox] network = true refused" in text and "network off" in text, text
