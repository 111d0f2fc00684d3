"""Protocol hygiene of ``frogtui acp``: nothing but ACP on stdout, every message small."""
from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp.connection import StreamDirection, StreamEvent
from acp.helpers import text_block

from frogtui.acp.limits import MAX_MESSAGE_BYTES
from tests.acp.support import ScriptedClient, acp_agent
from tests.support import turn, write_replay, xml_call

POLLUTER = '''
import importlib.abc, os, sys

class Polluter(importlib.abc.MetaPathFinder):
    """Writes to fd 1 three ways when the model code is imported (the first prompt)."""
    def find_spec(self, name, path, target=None):
        if name == "frogtui.models.replay":
            os.write(1, b"POLLUTION-FD1\\n")
            print("POLLUTION-PRINT", flush=True)
            import ctypes
            libc = ctypes.CDLL(None)
            libc.puts(b"POLLUTION-C")
            libc.fflush(None)
        return None

sys.meta_path.insert(0, Polluter())
'''


async def test_output_to_fd1_during_model_load_does_not_reach_the_stream(
    py_repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(POLLUTER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    replay = write_replay(
        tmp_path / "replay.jsonl", [turn("Read.", xml_call("Read", file_path="calc.py")), turn("Done.", answer="Ünïcødé ✓ 🐸")]
    )
    client = ScriptedClient()
    caplog.set_level(logging.DEBUG)
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr", env=env, process=True) as conn:
        new = await conn.new_session(cwd=str(py_repo))
        response = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("go 🐸")]), 60)
    assert response.stop_reason == "end_turn"
    assert client.text("agent_message_chunk").endswith("Ünïcødé ✓ 🐸")  # after any warning (no sandbox...)
    stderr = (tmp_path / "stderr").read_text()
    assert "POLLUTION-FD1" in stderr and "POLLUTION-PRINT" in stderr and "POLLUTION-C" in stderr
    assert not [r for r in caplog.records if "parsing JSON-RPC" in r.getMessage()]


@pytest.mark.slow
async def test_large_output_and_diff_stay_under_the_size_limit(py_repo: Path, tmp_path: Path) -> None:
    old = "".join(f"línea {n} ✓ del archivo\n" for n in range(20_000))
    new = "".join(f"línea {n} ✗ cambiada 🐸\n" for n in range(20_000))
    (py_repo / "big.txt").write_text(old)
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "[limits]\nmax_tokens_per_turn = 1000000\nmax_context_tokens = 100000000\nrepeat_text = 0\n"
    )  # the replay model counts words and chars/4; 5 MB of one letter is what the repeat guard would end
    big_write = "é" * 5_000_000
    replay = write_replay(
        tmp_path / "replay.jsonl",
        [
            turn("Rewrite.", xml_call("Write", file_path="big.txt", content=new)),
            turn("Huge.", xml_call("Write", file_path="huge.txt", content=big_write)),
            turn("Output.", xml_call("Bash", command="head -c 5000000 /dev/zero | tr '\\\\0' x")),
            turn("Done.", answer="ok"),
        ],
    )
    sizes: list[int] = []

    def measure(event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            sizes.append(len(json.dumps(event.message)))

    client = ScriptedClient()
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr", observers=[measure],
                         process=True) as conn:
        new_session = await conn.new_session(cwd=str(py_repo))
        await conn.set_session_mode(session_id=new_session.session_id, mode_id="all")
        response = await asyncio.wait_for(conn.prompt(session_id=new_session.session_id, prompt=[text_block("go")]), 120)
    assert response.stop_reason == "end_turn"
    assert (py_repo / "big.txt").read_text() == new and (py_repo / "huge.txt").read_text() == big_write
    assert max(sizes) < MAX_MESSAGE_BYTES
    _load, rewrite, huge, bash = client.of("tool_call")
    diffs = [c for u in client.calls()[rewrite.tool_call_id] for c in u.content or [] if c.type == "diff"]
    assert diffs and diffs[-1].new_text.startswith("línea ") and diffs[-1].old_text.startswith("línea ")
    notes = " ".join(c.content.text for u in client.calls()[rewrite.tool_call_id] for c in u.content or [] if c.type == "content")
    assert "The change is large" in notes
    assert "[frogtui: argument truncated" in huge.raw_input["content"]
    assert client.final_status(bash.tool_call_id) == "completed"


def test_initialize_needs_no_heavy_import() -> None:
    """``initialize`` answers from what the server module imports: no model, git, policy or UI code."""
    heavy = ("llama_cpp", "bashlex", "git", "textual", "frogtui.approval")
    code = f"import sys, frogtui.acp.server; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ))
    assert done.stdout.strip() == "[]"
