"""The smoke session from the official Node client (``@agentclientprotocol/sdk``). Needs node, npm
and the package in the local npm cache (``npm install --offline``: the suite never uses the
network); otherwise it is skipped, saying why."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.acp.support import DENY_PUSH, full_session_turns, user_rules
from tests.support import write_replay

SDK = "@agentclientprotocol/sdk@2.4.0"


@pytest.fixture(scope="module")
def node_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("SKIPPED LOUDLY: node or npm is not installed; the Node ACP client smoke test did not run")
    folder = tmp_path_factory.mktemp("node-client")
    install = subprocess.run(
        ["npm", "install", "--offline", "--no-audit", "--no-fund", "--prefix", str(folder), SDK],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if install.returncode != 0:
        pytest.skip(
            f"SKIPPED LOUDLY: {SDK} is not in the local npm cache (run `npm cache add {SDK}` once online): {install.stderr.strip()[-300:]}"
        )
    return folder


@pytest.mark.slow
def test_node_client_smoke_session(node_sdk: Path, py_repo: Path, tmp_path: Path) -> None:
    user_rules(DENY_PUSH)
    replay = write_replay(tmp_path / "replay.jsonl", full_session_turns())
    script = node_sdk / "node_smoke.mjs"
    shutil.copy(Path(__file__).with_name("node_smoke.mjs"), script)
    done = subprocess.run(
        ["node", str(script), sys.executable, str(replay), str(py_repo)], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["protocolVersion"] == 1 and summary["stopReason"] == "end_turn"
    assert [p["options"] for p in summary["permissions"]] == [["allow_once", "allow_always", "reject_once"]] * 2
    assert [u for u in summary["updates"] if u.startswith("tool_call:")] == [
        f"tool_call:{k}" for k in ("other", "read", "edit", "edit", "edit", "execute")
    ]
    assert "Fixed `add`: it adds now. ✓" in summary["message"]
    assert (py_repo / "calc.py").read_text().endswith("return a + b  # fixed ✓\n")
