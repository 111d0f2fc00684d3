"""The check that decides whether an attempt passed: the person's ``--check CMD``, or one proposed
from the repository's files. It runs through the same Bash tool runner (and so the same sandbox)
as the attempt's own commands, in the attempt's worktree."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.observations import output_lines
from frogtui.tools.specs import BASH

TAIL_LINES = 5
"""Lines of a check's output kept for the table."""
CHECK_TIMEOUT_S = 600
"""A check runs at most this long (the Bash tool's ceiling)."""

PROPOSALS = (
    (("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py"), "python -m pytest -q"),
    (("package.json",), "npm test"),
    (("Cargo.toml",), "cargo test"),
    (("go.mod",), "go test ./..."),
)
"""Files that suggest a test command, in order of preference."""


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    exit_code: int | None
    tail: str
    """The last ``TAIL_LINES`` lines of its output."""


def propose_check(root: Path) -> str | None:
    """A test command for the repository at ``root`` (pytest, npm test, cargo test, go test), None
    when nothing suggests one. Python test files (``test_*.py``) at the top count for pytest."""
    for names, command in PROPOSALS:
        if any((root / name).exists() for name in names):
            return command
    if any(root.glob("test_*.py")) or (root / "tests").is_dir():
        return "python -m pytest -q"
    return None


def run_check(runner: ToolRunner, command: str, cancel: threading.Event | None = None) -> CheckResult:
    """Run ``command`` as a Bash call of the attempt (its sandbox, its worktree, its temp folder)."""
    call = ToolCall(id="check", name=BASH.name, arguments={"command": command, "timeout": CHECK_TIMEOUT_S})
    outcome = runner.run(call, cancel=cancel)
    lines = output_lines(outcome.observation)
    return CheckResult(outcome.exit_code == 0, outcome.exit_code, "\n".join(lines[-TAIL_LINES:]))
