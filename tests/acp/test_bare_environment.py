"""Editors start agents with a bare environment (the ACP Python SDK's client passes HOME, LOGNAME,
PATH, SHELL, TERM, USER): no ``XDG_CONFIG_HOME``, no ``VIRTUAL_ENV`` (issue 24, item 1). The
person's config is still found (``~/.config/frogtui``, platformdirs' default), and the agent's
Bash still gets the repository's ``.venv``."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from acp.helpers import text_block

from tests.acp.support import DENY_PUSH, ScriptedClient, acp_agent
from tests.support import turn, write_replay, xml_call

BARE = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


async def test_the_persons_config_and_the_projects_venv_with_a_bare_environment(py_repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "frogtui").mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Bare Person\n\temail = bare@example.invalid\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(py_repo / ".venv")], check=True, timeout=120)
    replay = write_replay(tmp_path / "replay.jsonl", [
        turn("Which python?", xml_call("Bash", command="python -c 'import sys; print(\"PREFIX=\" + sys.prefix)'")),
        turn("Publish.", xml_call("Bash", command="git push origin main")),
        turn("Done.", answer="FROM-THE-PERSONS-CONFIG"),
    ])
    (home / ".config" / "frogtui" / "config.toml").write_text(f'model = "replay:{replay}"\n')
    (home / ".config" / "frogtui" / "rules.toml").write_text(DENY_PUSH)
    env = {name: os.environ.get(name, "") for name in BARE}
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)))  # the test's own imports
    client = ScriptedClient(["allow_once"])
    async with acp_agent(client, cwd=py_repo, stderr=tmp_path / "stderr", env=env, process=True) as conn:
        new = await conn.new_session(cwd=str(py_repo))
        response = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("go")]), 60)
    stderr = (tmp_path / "stderr").read_text()
    assert response.stop_reason == "end_turn", stderr
    assert client.text("agent_message_chunk").endswith("FROM-THE-PERSONS-CONFIG"), stderr
    outputs = str([u for u in client.of("tool_call_update")])
    assert f"PREFIX={py_repo / '.venv'}" in outputs, outputs
    # the command changed nothing, so it ran as a proposal without a question (issue 31); the person's deny rule holds
    assert "ran as a proposal" in outputs or len(client.permissions) == 1, outputs
    assert "git push" in outputs and "rules.toml" in outputs, outputs
