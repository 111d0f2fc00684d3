"""The check that decides whether an attempt passed: the person's ``--check CMD``, or one proposed
from the repository's files. It runs through the same Bash tool runner (and so the same sandbox)
as the attempt's own commands, in the attempt's worktree.

A proposed check is a command the repository chose (a ``conftest.py`` runs with ``pytest``), not
the person: it goes through the gate like a command of the model's (``gate_proposal``). In the
app the person confirms, edits or declines it; headless, only a rule of the person's that allows
it runs it (under ``policy``, whatever ``--approve`` says), and never without the sandbox:
otherwise it is said and not run, and ``--check`` names it."""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from frogtui.approval import Approver, PolicyEngine, audit_line, make_sandbox
from frogtui.approval.backstop import backstopped
from frogtui.config import Config
from frogtui.protocol import ApprovalRequest, ToolCall
from frogtui.tools import ToolRunner, Workspace
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
    outcome = runner.run(check_call(command), cancel=cancel)
    lines = output_lines(outcome.observation)
    return CheckResult(outcome.exit_code == 0, outcome.exit_code, "\n".join(lines[-TAIL_LINES:]))


@dataclass(frozen=True)
class ProposalAnswer:
    """The gate's answer to running a proposed check headless.

    Attributes:
        refused: why it does not run ('' when it does).
        audit: the session log's approval line for it.
    """

    refused: str
    audit: str


def check_call(command: str) -> ToolCall:
    """The check as a Bash call (the gate's question, the runner's call)."""
    return ToolCall(id="check", name=BASH.name, arguments={"command": command, "timeout": CHECK_TIMEOUT_S})


def gate_proposal(command: str, config: Config, tmp_dir: Path) -> ProposalAnswer:
    """Whether the check ``command`` proposed from the repository may run with nobody to ask: the
    person's rules as a single run loads them (the floor, deny rules, the project file) under
    ``policy`` must allow it, and Bash must run in the sandbox.

    Raises:
        ConfigError: a rules file is not valid.
    """
    workspace = Workspace(config.repo, tmp_dir=tmp_dir)
    engine = PolicyEngine.load(workspace, config.rules_file)
    sandbox = make_sandbox(workspace, engine.rules.sandbox)
    engine.base_rules, _ = backstopped(engine.base_rules, sandbox)
    call = check_call(command)
    approval = Approver(engine, mode="policy").approve(ApprovalRequest(call=call, step=0, root=str(workspace.root)))
    audit = audit_line(0, call, approval)
    if not approval.allowed:
        return ProposalAnswer(f"no rule of yours allows it ({approval.reason})", audit)
    if sandbox.wrap is None:
        return ProposalAnswer("Bash runs without a sandbox here, and a command the repository proposed runs only sandboxed", audit)
    return ProposalAnswer("", audit)
