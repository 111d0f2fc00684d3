"""Over ACP, a command that ran as a proposal is asked about with what it did: the permission
request carries each effect's diff (a deletion: the old text against nothing) and what the rules
say of it; "Apply its changes" lands them, "Reject its changes" lands none."""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp.helpers import text_block

from tests.acp.support import ScriptedClient, acp_agent, user_rules
from tests.overlay import needs_overlay
from tests.support import turn, write_replay, xml_call

pytestmark = needs_overlay


@pytest.mark.parametrize(("answer", "way"), [("allow_once", "auto"), ("reject_once", "auto"), ("reject_once", "undo")])
async def test_the_request_carries_the_effects_as_diffs(py_repo: Path, tmp_path: Path, answer: str, way: str) -> None:
    user_rules(f'[bash]\nproposals = "{way}"\n')  # run then undo: the same request, and a rejection puts the tree back
    command = "sed -i 's/a - b/a + b/' calc.py && rm test_calc.py"
    replay = write_replay(tmp_path / "replay.jsonl", [turn("Fix.", xml_call("Bash", command=command)), turn("Done.", answer="ok")])
    client = ScriptedClient([answer])
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(py_repo))
        await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("fix")]), 120)
    ((asked, options),) = client.permissions
    names = [o.name for o in options]
    assert names[0] == "Apply its changes" and "Reject its changes" in names and names[-1].startswith("Run it for real instead")
    diffs = {Path(c.path).name: c for c in asked.content if c.type == "diff"}
    assert set(diffs) == {"calc.py", "test_calc.py"}
    assert "a - b" in diffs["calc.py"].old_text and "a + b" in diffs["calc.py"].new_text
    assert "def test_add" in diffs["test_calc.py"].old_text and diffs["test_calc.py"].new_text == ""
    texts = [c.content.text for c in asked.content if c.type == "content"]
    assert "- deleted test_calc.py: needs a person (Write: ask (default))" in texts
    applied = answer == "allow_once"
    assert ("a + b" in (py_repo / "calc.py").read_text()) is applied
    assert (py_repo / "test_calc.py").exists() is not applied
