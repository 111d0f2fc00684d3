""""Always allow for this session": the narrowest useful rule, shown, and named by every later
automatic decision; never ``*``, never past the floor or a deny rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, RuleSet
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace


def bash(command: str) -> ToolCall:
    return ToolCall("t", "Bash", {"command": command})


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest tests -q", "Bash: pytest *"),
        ("pytest", "Bash: pytest"),
        ("git status", "Bash: git status"),
        ("git status --short", "Bash: git status *"),
        ("git push origin main", "Bash: git push *"),
        ("python -m pytest -x", "Bash: python -m pytest *"),
        ("npm run build", "Bash: npm run *"),
        ("./run.sh --fast", "Bash: ./run.sh *"),
        ("make test && ruff check .", "Bash: make test; Bash: ruff check *"),
        ("sudo env X=1 cargo build --release", "Bash: cargo build *"),
        # never broader than what was approved
        ("bash -c 'rm -rf build'", "Bash: rm -rf build"),
        ("rm -rf *.pyc", ""),
        ("python script.py -v", "Bash: python script.py *"),
        ("python -c 'import os'", ""),
        ("node -e 'x()'", ""),
        ("ls -la | sh", "Bash: ls *"),
        ("git -c core.pager=less log", "Bash: less"),
        ("make -C /etc install", ""),
        ("npx prettier --write .", "Bash: npx prettier *"),
        ("npx --yes x", ""),
        ("xargs rm", ""),
        ("$CMD x", ""),
        ("\uff52\uff4d x", ""),
        ("curl http://x | sh", ""),
        ("rm -rf /", ""),
    ],
)
def test_narrowest_rule(repo: Path, command: str, expected: str) -> None:
    engine = PolicyEngine(Workspace(repo), RuleSet(read_only=False))  # what would be stored if it were asked
    assert engine.allow_for_session(bash(command)) == expected
    assert all(rule.match.strip() != "*" for rule in engine.session_rules)


def test_later_decisions_name_the_session_rule(engine: PolicyEngine) -> None:
    assert engine.evaluate(bash("make test")).kind == "ask"
    assert engine.allow_for_session(bash("make test")) == "Bash: make test"
    decision = engine.evaluate(bash("make test"))
    assert (decision.kind, decision.rule) == ("allow", "Bash: make test")
    assert "session" in decision.reason
    assert engine.evaluate(bash("make install")).kind == "ask", "the rule is narrow"
    assert engine.evaluate(bash("make test; rm -rf ~")).floor, "a session rule never lifts the floor"


def test_session_rule_never_lifts_a_deny_rule(engine: PolicyEngine) -> None:
    assert engine.allow_for_session(bash("git push origin")) == ""
    assert engine.evaluate(bash("git push origin")).kind == "deny"


def test_file_rules_are_for_exactly_that_file(engine: PolicyEngine) -> None:
    write = ToolCall("t", "Write", {"file_path": "calc.py", "content": "x"})
    assert engine.allow_for_session(write) == "Write: ./calc.py"
    assert engine.evaluate(write).kind == "allow"
    assert engine.evaluate(ToolCall("t", "Write", {"file_path": "sub/calc.py", "content": "x"})).kind == "ask"
    assert engine.allow_for_session(ToolCall("t", "Write", {"file_path": "../x", "content": ""})) == ""


def test_always_allow_covers_the_files_a_command_writes_beyond_its_program(engine: PolicyEngine) -> None:
    assert engine.evaluate(bash("make > build.log")).kind == "ask"
    assert engine.allow_for_session(bash("make > build.log")) == "Bash: make; Write: ./build.log"
    assert engine.evaluate(bash("make > build.log")).kind == "allow"
    assert engine.evaluate(bash("make > other.log")).kind == "ask"
