"""Issue 23 item 6: a permission request shows the person everything "Allow once" would run.

A long one-line command is in the request whole, in a fenced code block (the title is short); a
command longer than ``limits.SHOWN_COMMAND_BYTES``, or a Write whose changed lines do not fit the
diff's limit, is refused without asking, with a reason the model reads as the observation."""
from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from acp.helpers import text_block

from frogtui.acp.limits import SHOWN_COMMAND_BYTES
from tests.acp.support import ScriptedClient, acp_agent, session_folder
from tests.support import turn, write_replay, xml_call

TAIL = "touch tail-marker-7c1e.txt"


def roomy_limits() -> None:
    """The replay model counts a long word as many tokens: room for a long call in one turn (and a
    word of 17,000 letters is what the repeat guard ends: off here)."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\nmax_tokens_per_turn = 10000000\nmax_context_tokens = 100000000\nrepeat_text = 0\n")


def long_command(length: int) -> str:
    """One line of ``length`` characters that ends with the tail marker."""
    head = "echo "
    return head + "A" * (length - len(head) - len(TAIL) - 3) + " ; " + TAIL


def content_texts(tool_call) -> list[str]:  # noqa: ANN001 - the SDK's ToolCallUpdate
    return [c.content.text for c in tool_call.content or [] if c.type == "content"]


async def run_session(py_repo: Path, tmp_path: Path, calls: list[str], answers: list[str | None]) -> tuple[ScriptedClient, str]:
    roomy_limits()
    replay = write_replay(tmp_path / "replay.jsonl", [turn("Do it.", call) for call in calls] + [turn("Done.", answer="ok")])
    client = ScriptedClient(list(answers))
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=py_repo, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(py_repo))
        response = await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("go")]), 120)
    assert response.stop_reason == "end_turn"
    return client, new.session_id


def observations(session_id: str) -> list[str]:
    saved = json.loads((session_folder(session_id) / "trajectory.json").read_text())
    return [m["content"] for m in saved["messages"] if m["role"] == "tool"]


async def test_a_long_one_line_command_is_in_the_request_whole(py_repo: Path, tmp_path: Path) -> None:
    command = long_command(17_301)
    assert len(command) == 17_301 and "\n" not in command
    client, _ = await run_session(py_repo, tmp_path, [xml_call("Bash", command=command, description="List the files")], ["reject_once"])
    assert len(client.permissions) == 1
    asked, _options = client.permissions[0]
    assert len(asked.title) <= 200
    fenced = [t for t in content_texts(asked) if t.startswith("```") and command in t]  # (a proposal's output is fenced too)
    assert len(fenced) == 1 and fenced[0].rstrip("`\n").endswith(TAIL)
    assert asked.raw_input["command"] == command  # not cut either
    # the model's own description is labelled as the model's, after the command
    texts = content_texts(asked)
    described = next(i for i, t in enumerate(texts) if "List the files" in t)
    assert "model" in texts[described].lower() and described > texts.index(fenced[0])
    assert not (py_repo / "tail-marker-7c1e.txt").exists()


async def test_a_command_too_long_to_show_is_refused_without_asking(py_repo: Path, tmp_path: Path) -> None:
    command = long_command(SHOWN_COMMAND_BYTES + 5_000)
    client, session_id = await run_session(py_repo, tmp_path, [xml_call("Bash", command=command)], ["allow_once"])
    assert client.permissions == []
    assert not (py_repo / "tail-marker-7c1e.txt").exists()
    _load, bash = client.of("tool_call")
    assert client.final_status(bash.tool_call_id) == "failed"
    seen = observations(session_id)[0]
    assert seen.startswith("PermissionError: ") and "too long to show" in seen and f"{SHOWN_COMMAND_BYTES:,}" in seen


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
async def test_a_write_is_asked_with_its_whole_change_or_refused(py_repo: Path, tmp_path: Path) -> None:
    shown = "".join(f"fits {n}\n" for n in range(20_000)) + "TAIL-OF-WRITE-1\n"  # ~200 kB: fits the diff's limit
    unshown = "".join(f"too big {n} ✓\n" for n in range(40_000)) + "TAIL-OF-WRITE-2\n"  # ~700 kB of JSON
    client, session_id = await run_session(
        py_repo,
        tmp_path,
        [xml_call("Write", file_path="fits.txt", content=shown), xml_call("Write", file_path="big.txt", content=unshown)],
        ["allow_once", "allow_once"],
    )
    assert len(client.permissions) == 1
    asked, _options = client.permissions[0]
    diff = [c for c in asked.content if c.type == "diff"]
    assert len(diff) == 1 and diff[0].new_text == shown
    assert (py_repo / "fits.txt").read_text() == shown
    assert not (py_repo / "big.txt").exists()
    seen = observations(session_id)[1]
    assert seen.startswith("PermissionError: ") and "too long to show" in seen
