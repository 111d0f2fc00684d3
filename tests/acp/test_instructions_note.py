"""An ACP session says that the repository's AGENTS.md goes to the model with the first prompt (a
note, issue 24 build item 9), and ``session/load`` replays the prompt as the person wrote it."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp.helpers import text_block

from tests.acp.support import ScriptedClient, acp_agent, session_folder
from tests.support import turn, write_replay

RULES = "Run `python -m pytest -q` before you answer.\n"


async def test_agents_md_is_a_note_and_goes_with_the_first_prompt(py_repo: Path, tmp_path: Path) -> None:
    (py_repo / "AGENTS.md").write_text(RULES)
    replay = write_replay(tmp_path / "r.jsonl", [turn("Look.", answer="It subtracts.")])
    client = ScriptedClient()
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(py_repo))
        await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("what does add do?")]), 60)
    assert f"> frogtui: AGENTS.md ({len(RULES)} bytes) is given to the model with the task" in client.text("agent_message_chunk")
    saved = json.loads((session_folder(new.session_id) / "trajectory.json").read_text())
    first = [m["content"] for m in saved["messages"] if m["role"] == "user"][0]
    assert first.startswith("# AGENTS.md instructions for this repository\n\n<INSTRUCTIONS>\n" + RULES)
    assert first.endswith("</INSTRUCTIONS>\n\nwhat does add do?")

    reloaded = ScriptedClient()
    async with acp_agent(reloaded, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr2") as conn:
        await asyncio.wait_for(conn.load_session(cwd=str(py_repo), session_id=new.session_id), 30)
    assert reloaded.text("user_message_chunk") == "what does add do?"
