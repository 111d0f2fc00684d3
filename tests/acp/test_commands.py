"""Slash commands (/review, /undo, /rules) and errors that end a turn with a message, through a
``frogtui acp`` subprocess."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from acp.helpers import text_block

from tests.acp.support import ScriptedClient, acp_agent
from tests.support import turn, write_replay, xml_call


async def test_review_undo_rules(py_repo: Path, tmp_path: Path) -> None:
    replay = write_replay(
        tmp_path / "replay.jsonl",
        [
            turn("Fix.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
            turn("Done.", answer="Fixed."),
            turn("Again?", answer="I see the rewind."),
        ],
    )
    client = ScriptedClient()
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(py_repo))
        sid = new.session_id
        await conn.set_session_mode(session_id=sid, mode_id="all")
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("fix")]), 60)
        commands = client.of("available_commands_update")[0].available_commands  # sent right after session/new's answer
        assert [c.name for c in commands] == ["review", "undo", "rules"]

        async def command(text: str) -> str:
            before = len(client.of("agent_message_chunk"))
            response = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(text)]), 60)
            assert response.stop_reason == "end_turn"
            return "".join(u.content.text for u in client.of("agent_message_chunk")[before:])

        review = await command("/review")
        assert "- `calc.py` +1 −1" in review and "-    return a - b" in review and "```diff" in review
        rules = await command("/rules")
        assert "Approval mode: `all`" in rules and "- Bash: ask" in rules and "Bash's python: " in rules
        undo = await command("/undo")
        assert undo.startswith("Undid step 1 (Edit).")
        assert (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
        assert "Nothing (more) to undo" in await command("/undo")
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("what now?")]), 60)
    saved = json.loads((Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions" / sid / "trajectory.json").read_text())
    last_user = [m["content"] for m in saved["messages"] if m["role"] == "user"][-1]
    assert last_user.startswith("The user rewound the files to the checkpoint taken before step 1 (Edit).") and last_user.endswith(
        "what now?"
    )


async def test_review_names_what_changed_under_ignored_paths(py_repo: Path, tmp_path: Path) -> None:
    """Issue 23: a command's change under an ignored path is in no diff; /review names it."""
    (py_repo / ".gitignore").write_text(".venv/\n")
    replay = write_replay(tmp_path / "replay.jsonl", [
        turn("Plant.", xml_call("Bash", command="mkdir -p .venv/bin && echo x > .venv/bin/git")),
        turn("Done.", answer="Done."),
    ])
    client = ScriptedClient()
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        sid = (await conn.new_session(cwd=str(py_repo))).session_id
        await conn.set_session_mode(session_id=sid, mode_id="all")
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("go")]), 60)
        before = len(client.of("agent_message_chunk"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/review")]), 60)
        review = "".join(u.content.text for u in client.of("agent_message_chunk")[before:])
    assert (py_repo / ".venv" / "bin" / "git").exists()
    assert "Changed under ignored paths (in no diff, and undo cannot restore them): .venv/bin/git." in review, review


async def test_a_model_that_does_not_load_ends_the_turn_with_a_message(py_repo: Path, tmp_path: Path) -> None:
    client = ScriptedClient()
    async with acp_agent(client, "--model", str(tmp_path / "missing.gguf"), cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(py_repo))
        for _ in range(2):  # the connection lives on
            response = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("go")]), 60)
            assert response.stop_reason == "end_turn"
    assert client.text("agent_message_chunk").count(f"frogtui: model file not found: {tmp_path / 'missing.gguf'}") == 2
    loads = client.of("tool_call")
    assert len(loads) == 2 and all(client.final_status(u.tool_call_id) == "failed" for u in loads)


async def test_warnings_are_shown_with_the_next_answer(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    replay = write_replay(tmp_path / "replay.jsonl", [turn("Hi.", answer="Hello.")])
    client = ScriptedClient()
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=folder, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(folder))
        await conn.set_session_mode(session_id=new.session_id, mode_id="all")
        await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("hi")]), 60)
    first = client.of("agent_message_chunk")[0].content.text
    assert f"> frogtui: {folder} is not in a git repository" in first
    assert "> frogtui: approval mode all: " in first and "no safety alignment" in first
    assert client.text("agent_message_chunk").endswith("Hello.")
