"""`frogtui run` in a long session: ``--handoff`` continues a full conversation in a fresh one (and
without it the run ends with ``max_context_len`` as in Leaf), and a call repeated three times is
denied headless under ``--approve policy``, saying it repeated."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogtui.config import config_dir
from frogtui.session import Session
from tests.support import git, turn, write_replay, xml_call
from tests.test_headless import approvals, run

NOTES = "".join(f"line {n}: notes that take room in the context\n" for n in range(60))
"""A file whose Read fills most of a 1,000-token budget (the replay model counts 4 characters a token)."""
LONG_TURNS = [
    turn("Look at the notes.", xml_call("Read", file_path="notes.txt")),
    turn("Fix it and read again.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b"),
         xml_call("Read", file_path="notes.txt")),
    turn("Record the change.", xml_call("Write", file_path="CHANGES.md", content="add() adds\n")),
    turn("Check.", xml_call("Bash", command="python -m pytest -q")),
    turn("Done.", answer="add() is fixed and the change is recorded."),
]


def small_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: Path) -> None:
    """A 1,000-token budget with a 400-token hand-off margin, and notes.txt in the repository."""
    config = tmp_path / "config.toml"
    config.write_text("[limits]\nmax_context_tokens = 1000\nhandoff_margin = 400\n")
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))
    (repo / "notes.txt").write_text(NOTES)
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")


def test_without_handoff_a_full_context_ends_the_run_as_in_leaf(py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_context(tmp_path, monkeypatch, py_repo)
    code, trajectory = run(py_repo, write_replay(tmp_path / "long.jsonl", LONG_TURNS), "all")
    assert (code, trajectory["exit_reason"], trajectory["n_steps"]) == (1, "max_context_len", 3)
    assert trajectory["next_trajectory"] is None and len(Session.latest(py_repo).load_chain()) == 1


def test_handoff_continues_in_a_fresh_conversation_to_a_final_answer(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    small_context(tmp_path, monkeypatch, py_repo)
    code, trajectory = run(py_repo, write_replay(tmp_path / "long.jsonl", LONG_TURNS), "all", "--handoff")
    assert code == 0 and trajectory["exit_reason"] == "agent"
    assert "hand-off: a fresh conversation starts" in capsys.readouterr().err
    # the new conversation is Leaf's shape: the system prompt, then the hand-off as the first user message
    first_user = trajectory["messages"][1]
    assert [m["role"] for m in trajectory["messages"][:2]] == ["system", "user"]
    assert first_user["content"].startswith("# Hand-off\n") and "## Task\ngo\n" in first_user["content"]
    assert "- calc.py (+1 -1)" in first_user["content"] and "step 1: Read notes.txt -> ok" in first_user["content"]
    assert [s["step"] for s in trajectory["steps"]] == [3, 4, 5]  # step numbers go on counting
    # the patch holds both conversations' changes
    assert "+    return a + b" in trajectory["output_patch"] and "+add() adds" in trajectory["output_patch"]
    session = Session.latest(py_repo)
    chain = session.load_chain()
    assert [c.run for c in chain] == [1, 2]
    assert chain[0].next == "trajectory-2.json" and chain[1].previous == "trajectory.json"
    assert chain[0].exit_reason == "max_context_len" and "hand-off margin" in (chain[0].error or "")
    assert chain[1].session_tokens > chain[1].context_tokens
    # the session's replay holds every turn of both conversations, in order
    replayed = [json.loads(line)["content"] for line in session.replay_path.read_text().splitlines()]
    assert replayed == LONG_TURNS
    assert session.load_trajectory() == chain[1]


def test_a_call_repeated_three_times_is_denied_headless_and_marked(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[[rules]]\ntool = "Bash"\nmatch = "git status"\ndecision = "allow"\n')
    status = xml_call("Bash", command="git status")
    turns = [turn("look", status), turn("again", status), turn("again", status), turn("ok", answer="stuck")]
    replay = write_replay(tmp_path / "loop.jsonl", turns)
    code, trajectory = run(py_repo, replay, "policy")
    assert code == 0
    decided = approvals(trajectory)
    assert [(a["decision"], a["by"], a.get("repeat", "")) for a in decided] == [
        ("allow", "rule", ""),
        ("allow", "rule", ""),
        ("deny", "mode", "this exact call ran twice already in a row, with the same result"),
    ]
    observation = trajectory["steps"][2]["observations"][0]["observation"]
    assert observation.startswith("PermissionError: this exact call ran twice already in a row, with the same result")
    assert "rule Bash: git status would allow it otherwise" in observation
    assert "[repeat: this exact call ran twice already in a row" in capsys.readouterr().err
