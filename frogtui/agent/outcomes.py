"""How a run ends: its result, the exception that ends it, what the model sees for a denied call,
and how one call ended (as data, beside its observation)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frogtui.agent.events import ExitReason
from frogtui.protocol import Approval


@dataclass(frozen=True)
class RunResult:
    exit_reason: ExitReason
    final_message: str
    error: str | None
    trajectory: dict[str, Any]


@dataclass(frozen=True)
class CallResult:
    """What one call gave the model, and how it ended as data (never parsed back from the text)."""

    observation: str
    ok: bool = False
    """The call ran and worked (a Bash command exited 0); False when it failed or did not run."""
    exit_code: int | None = None
    """A Bash command's exit code; None for the other tools, a timeout and a call that did not run."""
    ran: bool = True
    """False for a call that did not run (invalid, denied, interrupted before it ran)."""


class Stop(Exception):
    """Ends the run with a named exit reason (control flow that carries its message). Raised for a
    call, it carries that call's ``observation`` too, and the step's other calls are not run."""

    def __init__(self, exit_reason: ExitReason, error: str | None = None, observation: str | None = None) -> None:
        super().__init__(exit_reason)
        self.exit_reason, self.error, self.observation = exit_reason, error, observation


def denial_observation(approval: Approval) -> str:
    """What the model sees for a denied call: the person's words, or the rule's reason."""
    if approval.by == "person":
        text = "The user denied this tool call."
        return f"{text} Reason: {approval.reason}" if approval.reason else text
    return f"PermissionError: {approval.reason or 'denied by policy'}"
