"""``--approve edits`` (issue 34, item 1): Write and Edit inside the repository run as if a rule
allowed them; Bash, anything outside the repository, the person's own ask rules, the floor and
deny rules are exactly as under ``policy``."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogtui.approval import APPROVAL_MODES, Decision, apply_mode
from frogtui.cli import main
from frogtui.config import config_dir
from tests.support import turn, write_replay, xml_call

IN_REPO = Decision("ask", "Write: ask (default)", "Write inside the repository is asked about by default", in_repository_edit=True)
OUTSIDE = Decision("ask", "Write: outside the repository", "/elsewhere is outside the repository")
BY_RULE = Decision("ask", "Write: .github/**", ".github/x is asked about by rule 'Write: .github/**'")
BASH = Decision("ask", "Bash: ask (default)", "Bash runs commands")


def test_edits_is_a_mode_f2_reaches_between_policy_and_all() -> None:
    assert APPROVAL_MODES.index("edits") == APPROVAL_MODES.index("policy") + 1
    assert APPROVAL_MODES.index("all") == APPROVAL_MODES.index("edits") + 1


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_edits_allows_a_write_or_edit_the_defaults_would_ask_about(tool: str) -> None:
    allowed = apply_mode("edits", IN_REPO, tool)
    assert allowed is not None and (allowed.decision, allowed.by, allowed.rule) == ("allow", "mode", "mode: edits")
    assert "inside the repository" in allowed.reason
    assert not allowed.read_only, "an edit takes its checkpoint"


@pytest.mark.parametrize("decision", [OUTSIDE, BY_RULE, BASH])
def test_edits_asks_what_policy_asks_outside_the_repository_by_the_persons_rules_and_for_bash(decision: Decision) -> None:
    tool = "Bash" if decision is BASH else "Write"
    assert apply_mode("edits", decision, tool) is None
    assert apply_mode("policy", decision, tool) is None


def test_a_repeated_edit_is_asked_about_under_edits_as_under_policy() -> None:
    assert apply_mode("edits", IN_REPO, "Write", repeat="this exact call ran twice already") is None


def _run(repo: Path, replay: Path, mode: str) -> dict:
    out = repo.parent / f"t-{mode}.json"
    assert main(["run", "go", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", mode, "--trajectory", str(out)]) == 0
    return json.loads(out.read_text())


def test_headless_edits_lands_writes_and_edits_policy_denies_and_decides_bash_as_policy(py_repo: Path, tmp_path: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    outside = tmp_path / "outside.txt"
    commands = ["ls", "touch made-by-bash", "git status", "python -c 'open(\"x\",\"w\")'"]
    turns = [
        turn("", xml_call("Write", file_path="new.py", content="x = 1\n")),
        turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("", xml_call("Write", file_path=str(outside), content="no\n")),
        *[turn("", xml_call("Bash", command=c)) for c in commands],
        turn("", answer="done"),
    ]
    decided = {}
    for mode in ("policy", "edits"):
        repo = py_repo if mode == "edits" else _copy(py_repo, tmp_path / "policy-repo")
        data = _run(repo, write_replay(tmp_path / f"{mode}.jsonl", turns), mode)
        decided[mode] = [(a["tool"], a["decision"]) for step in data["steps"] for a in step["approvals"]]
        if mode == "policy":
            assert not (repo / "new.py").exists() and "a - b" in (repo / "calc.py").read_text()
    assert (py_repo / "new.py").read_text() == "x = 1\n"
    assert "a + b" in (py_repo / "calc.py").read_text()
    assert not outside.exists(), "outside the repository is not an edit the mode allows"
    assert decided["edits"][:2] == [("Write", "allow"), ("Edit", "allow")]
    assert decided["policy"][:2] == [("Write", "deny"), ("Edit", "deny")]
    bash = [d for d in decided["edits"] if d[0] == "Bash"]
    assert len(bash) == len(commands) and bash == [d for d in decided["policy"] if d[0] == "Bash"], "every Bash decided as under policy"
    assert not (py_repo / "made-by-bash").exists()


def _copy(repo: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(repo, to, symlinks=True)
    return to
