"""``frogtui acp`` end to end: a subprocess driven through the SDK's client side, replay models."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from acp.helpers import text_block

from tests.acp.client import ScriptedClient, acp_agent
from tests.support import turn, write_replay, xml_call

DENY_PUSH = '[[rules]]\ntool = "Bash"\nmatch = "git push *"\ndecision = "deny"\n'


def user_rules(text: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rules.toml").write_text(text)


def session_folder(session_id: str) -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions" / session_id


def full_session_turns() -> list[str]:
    return [
        turn("Look at calc.py first.", xml_call("Read", file_path="calc.py")),
        turn("add subtracts: fix it.", xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")),
        turn("Add a docstring.", xml_call("Edit", file_path="calc.py", old_string="def add(a, b):", new_string='def add(a, b):\n    """Sum."""')),
        turn("And a comment.", xml_call("Edit", file_path="calc.py", old_string="    return a + b", new_string="    return a + b  # fixed ✓")),
        turn("Publish it.", xml_call("Bash", command="git push origin main", description="Push the fix")),
        turn("Pushing is not allowed; done.", answer="Fixed `add`: it adds now. ✓"),
    ]


async def test_full_session(py_repo: Path, tmp_path: Path) -> None:
    user_rules(DENY_PUSH)
    replay = write_replay(tmp_path / "replay.jsonl", full_session_turns())
    client = ScriptedClient(["allow_once", "allow_always"])
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(py_repo))
        assert new.modes.current_mode_id == "policy"
        assert [o.id for o in new.config_options] == ["mode"]
        response = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("fix the failing test")]), 60)
    assert response.stop_reason == "end_turn"

    # two questions: the first edit (allowed once), the second (always allowed); the third edit is not asked
    assert len(client.permissions) == 2
    first, options = client.permissions[0]
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert "Edit: ./calc.py" in options[1].name
    assert first.kind == "edit" and first.title == "Edit calc.py"
    diff = [c for c in first.content if c.type == "diff"][0]
    assert diff.path == str(py_repo / "calc.py") and "a - b" in diff.old_text and "a + b" in diff.new_text
    assert any("asks because" in c.content.text for c in first.content if c.type == "content")
    assert first.locations[0].path == str(py_repo / "calc.py")

    calls = client.calls()
    load, *starts = client.of("tool_call")
    assert load.kind == "other" and load.title.startswith("Loading model replay:") and client.final_status(load.tool_call_id) == "completed"
    assert [u.kind for u in starts] == ["read", "edit", "edit", "edit", "execute"]
    assert starts[4].title == "git push origin main"
    assert any("Push the fix" in c.content.text for c in starts[4].content)
    assert [client.final_status(u.tool_call_id) for u in starts] == ["completed", "completed", "completed", "completed", "failed"]
    bash_text = " ".join(c.content.text for u in calls[starts[4].tool_call_id] for c in u.content or [] if c.type == "content")
    assert "Denied by rule `Bash: git push *`" in bash_text
    third_notes = " ".join(c.content.text for u in calls[starts[3].tool_call_id] for c in u.content or [] if c.type == "content")
    assert "Allowed by rule `Edit: ./calc.py`" in third_notes
    assert "Fixed `add`: it adds now. ✓" in client.text("agent_message_chunk")
    assert "add subtracts" in client.text("agent_thought_chunk")
    assert client.of("usage_update") and client.of("available_commands_update")
    assert (py_repo / "calc.py").read_text() == 'def add(a, b):\n    """Sum."""\n    return a + b  # fixed ✓\n'

    saved = json.loads((session_folder(new.session_id) / "trajectory.json").read_text())
    tool_messages = [m["content"] for m in saved["messages"] if m["role"] == "tool"]
    assert tool_messages[4].startswith("PermissionError: ") and "git push" in tool_messages[4]
    assert saved["exit_reason"] == "agent"
