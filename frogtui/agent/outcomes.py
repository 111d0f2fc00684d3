"""How a run ends: its result, the exception that ends it, and what the model sees for a denied
call. How one call ended travels as data: ``tools.ToolOutcome``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frogtui.agent.events import ExitReason
from frogtui.agent.saved import Conversation
from frogtui.protocol import Approval
from frogtui.tools import observations


@dataclass(frozen=True)
class RunResult:
    exit_reason: ExitReason
    final_message: str
    error: str | None
    trajectory: dict[str, Any]
    """The conversation's trajectory as it is saved (``Trajectory.as_dict``)."""

    @property
    def conversation(self) -> Conversation:
        """The trajectory read back (``agent.saved``)."""
        return Conversation.read(self.trajectory)


class Stop(Exception):
    """Ends the run with a named exit reason (control flow that carries its message). Raised for a
    call, it carries that call's ``observation`` too, and the step's other calls are not run."""

    def __init__(self, exit_reason: ExitReason, error: str | None = None, observation: str | None = None) -> None:
        super().__init__(exit_reason)
        self.exit_reason, self.error, self.observation = exit_reason, error, observation


def denial_observation(approval: Approval) -> str:
    """What the model sees for a denied call: the person's words, or the rule's reason."""
    if approval.by == "person":
        return observations.denied_by_person(approval.reason)
    return observations.denied_by_policy(approval.reason)
