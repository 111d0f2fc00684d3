"""What the app knows about the current session beyond the session core: plain data, reset when a
new task starts."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from frogtui.agent.events import ExitReason


@dataclass
class SessionUiState:
    """Per-session state of the app (the conversation itself is the ``SessionCore``'s)."""

    wired: bool = False
    """The session core is prepared and the approver has its policy: a run may start."""
    pending_task: str | None = None
    """A task typed before the model was ready; it starts when the model is."""
    last_exit_reason: ExitReason | None = None
    """How the last run ended (``agent``, ``cancelled``...), None before the first."""

    def reset(self) -> None:
        """A new session: nothing wired, nothing pending, no run yet."""
        self.wired, self.pending_task, self.last_exit_reason = False, None, None
