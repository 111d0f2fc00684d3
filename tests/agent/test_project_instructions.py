"""The repository's AGENTS.md (or CLAUDE.md) is given to the model with the task, not in Leaf's
system prompt; capped, shown to the person, and off with a config key (issue 24, build item 9).
The file is repository content: a link out of the repository, a FIFO, a binary or a huge file is
handled, never followed, blocked on or given whole."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from frogtui.agent.project_instructions import MAX_BYTES, read_instructions, without_instructions
from frogtui.agent.saved import Conversation
from frogtui.cli import main
from frogtui.config import config_dir
from tests.support import turn, write_replay

LEAF_SYSTEM_PROMPT = (
    "You are a software-engineering agent working in a checked-out repository.\n"
    "Use the available tools to inspect files, make focused edits, and run commands.\n"
    "Solve the task, validate when practical, then give a brief final answer."
)
RULES = "# Rules\n\nRun the tests with `python -m pytest -q` before you answer.\n"


def run(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict, str]:
    replay = write_replay(tmp_path / "r.jsonl", [turn("", answer="ok")])
    out = tmp_path / "t.json"
    code = main(["run", "Fix the bug", "--repo", str(repo), "--model", f"replay:{replay}", "--trajectory", str(out), *extra])
    return code, json.loads(out.read_text()), capsys.readouterr().err


def test_agents_md_goes_with_the_task_and_the_system_prompt_stays_leafs(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (py_repo / "AGENTS.md").write_text(RULES)
    (py_repo / "CLAUDE.md").write_text("not this one\n")
    code, data, err = run(py_repo, tmp_path, capsys)
    assert code == 0, err
    system, user = data["messages"][0], data["messages"][1]
    assert system == {"role": "system", "content": LEAF_SYSTEM_PROMPT}, "Leaf's three lines, byte for byte"
    assert user["role"] == "user"
    assert user["content"] == (
        "# AGENTS.md instructions for this repository\n\n<INSTRUCTIONS>\n" + RULES.strip("\n") + "\n</INSTRUCTIONS>\n\nFix the bug"
    )
    assert "not this one" not in json.dumps(data)
    shown = [line for line in err.splitlines() if "AGENTS.md" in line]
    assert shown == [f"frogtui: AGENTS.md ({len(RULES)} bytes) is given to the model with the task "
                     "(project_instructions = false in config.toml turns it off)"]
    assert Conversation.read(data).task == "Fix the bug", "a resumed session and a hand-off see the person's task"


def test_claude_md_where_there_is_no_agents_md(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_repo / "CLAUDE.md").write_text(RULES)
    code, data, err = run(py_repo, tmp_path, capsys)
    assert code == 0
    assert data["messages"][1]["content"].startswith("# CLAUDE.md instructions for this repository\n\n<INSTRUCTIONS>\n# Rules")
    assert "frogtui: CLAUDE.md (" in err


def test_turned_off_by_flag_and_by_config(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_repo / "AGENTS.md").write_text(RULES)
    code, data, err = run(py_repo, tmp_path, capsys, "--no-project-instructions")
    assert code == 0 and data["messages"][1]["content"] == "Fix the bug" and "AGENTS.md" not in err
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text("project_instructions = false\n")
    code, data, err = run(py_repo, tmp_path, capsys)
    assert code == 0 and data["messages"][1]["content"] == "Fix the bug" and "AGENTS.md" not in err
    (config_dir() / "config.toml").write_text('project_instructions = "no"\n')
    code = main(["run", "x", "--repo", str(py_repo), "--model", "replay:/nonexistent"])
    assert code == 2 and "project_instructions must be true or false" in capsys.readouterr().err


def test_a_link_out_of_the_repository_is_not_read(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_ed25519"
    secret.parent.mkdir(parents=True)
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY----- planted\n")
    (py_repo / "AGENTS.md").symlink_to(secret)
    (py_repo / "CLAUDE.md").write_text(RULES)
    code, data, err = run(py_repo, tmp_path, capsys)
    assert code == 0
    assert "planted" not in json.dumps(data) and "planted" not in err
    assert data["messages"][1]["content"] == "Fix the bug", "the file that exists is the one read, and it is refused"
    assert f"frogtui: AGENTS.md is not given to the model: it is a link to {secret}, outside the repository" in err.splitlines()


def test_a_link_inside_the_repository_is_read(py_repo: Path) -> None:
    (py_repo / "docs").mkdir()
    (py_repo / "docs" / "agents.md").write_text(RULES)
    (py_repo / "AGENTS.md").symlink_to("docs/agents.md")
    found = read_instructions(py_repo)
    assert found is not None and found.text == RULES.strip("\n") and not found.skipped


def test_a_huge_file_is_cut_and_says_so(py_repo: Path) -> None:
    line = "Use tabs. é\n"  # a two-byte character: the cut may fall inside one
    (py_repo / "AGENTS.md").write_text(line * 40_000)
    size = (py_repo / "AGENTS.md").stat().st_size
    found = read_instructions(py_repo)
    assert found is not None and found.cut and not found.skipped
    assert len(found.text.encode()) <= MAX_BYTES
    message = found.with_task("task")
    assert f"[AGENTS.md cut here: the first {MAX_BYTES:,} of {size:,} bytes are shown]\n</INSTRUCTIONS>\n\ntask" in message
    assert found.line == (f"AGENTS.md is given to the model with the task, cut to its first {MAX_BYTES:,} of {size:,} bytes "
                          "(project_instructions = false in config.toml turns it off)")
    assert without_instructions(message) == "task"


@pytest.mark.parametrize("content,why", [
    (b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "it is not text (it holds NUL bytes)"),
    (b"caf\xe9 latin-1\n", "it is not UTF-8 text"),
])
def test_a_binary_file_is_not_given(py_repo: Path, content: bytes, why: str) -> None:
    (py_repo / "AGENTS.md").write_bytes(content)
    found = read_instructions(py_repo)
    assert found is not None and found.skipped == why and found.with_task("task") == "task"
    assert found.line == f"AGENTS.md is not given to the model: {why}"


def test_a_fifo_or_a_folder_is_refused_without_blocking(py_repo: Path) -> None:
    os.mkfifo(py_repo / "AGENTS.md")
    found = read_instructions(py_repo)
    assert found is not None and "not a regular file" in found.skipped
    os.unlink(py_repo / "AGENTS.md")
    (py_repo / "AGENTS.md").mkdir()
    found = read_instructions(py_repo)
    assert found is not None and found.skipped and found.with_task("t") == "t"


def test_no_file_no_instructions(py_repo: Path) -> None:
    assert read_instructions(py_repo) is None


def test_a_hand_off_starts_with_the_instructions_once(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fresh conversation of a hand-off gets them again, and its drafted task is the person's."""
    from tests.test_headless_long import LONG_TURNS, small_context

    small_context(tmp_path, monkeypatch, py_repo)
    (py_repo / "AGENTS.md").write_text("Be brief.\n")
    replay = write_replay(tmp_path / "long.jsonl", LONG_TURNS)
    out = tmp_path / "t.json"
    code = main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all", "--handoff",
                 "--trajectory", str(out)])
    assert code == 0, capsys.readouterr().err
    first = json.loads(out.read_text())["messages"][1]["content"]
    assert first.startswith("# AGENTS.md instructions for this repository\n\n<INSTRUCTIONS>\nBe brief.\n</INSTRUCTIONS>\n\n# Hand-off\n")
    assert first.count("<INSTRUCTIONS>") == 1 and "## Task\ngo\n" in first
