"""One ACP session: the session core (``session.core.SessionCore``: the session folder and log,
policy, sandbox, checkpoints, the agent) with the gate (asking through ``session/request_permission``)
and the ACP sink plugged in. ``run`` is called on a worker thread, one prompt at a time."""
from __future__ import annotations

import threading
from typing import Any

from frogtui.acp.outbox import Outbox
from frogtui.acp.permission import PermissionAsk
from frogtui.acp.sink import AcpSink
from frogtui.agent.loop import RunResult
from frogtui.session.core import SessionCore


class AcpSession:
    """One ACP session (its id is the frogtui session's).

    Args:
        core: The session core, prepared (``prepare`` ran).
        outbox: The session's way to the client.
        notes: Warnings from ``prepare`` (no sandbox, not a repository, ignored project rules),
            shown with the next answer.
    """

    def __init__(self, core: SessionCore, outbox: Outbox, notes: list[str]) -> None:
        self.core = core
        self.outbox = outbox
        self.notes = list(notes)
        self.unshown = list(notes)
        """Warnings the person has not seen yet (shown at the start of the next prompt's answer)."""
        self.busy = False
        """A prompt is running."""
        self.sink = AcpSink(outbox, str(core.root), core.context_budget)
        self.cancelled = threading.Event()
        """Set when the prompt is cancelled (cleared when the next starts): nothing more is asked."""
        asking = PermissionAsk(self.sink, self.cancelled)
        self.approver = core.gate(ask=asking.ask, show=asking.show)  # the session log keeps the decisions

    @property
    def id(self) -> str:
        return self.core.session.id

    def run(self, text: str) -> RunResult:
        """Run one prompt (the task, or a follow-up) to its end (worker thread; the model is loaded)."""
        self.core.start(self.approver, _CancelAware(self))
        return self.core.send(text)

    def cancel(self) -> None:
        """Stop generation or the running command; what waits for an answer is denied."""
        self.cancelled.set()
        self.core.interrupt()


class _CancelAware:
    """The sink, plus: a cancel that came while the loop was clearing its flag still stops it."""

    def __init__(self, owner: AcpSession) -> None:
        self.owner = owner

    def emit(self, event: Any) -> None:
        core = self.owner.core
        if self.owner.cancelled.is_set() and not core.interrupted:
            core.interrupt()
        self.owner.sink.emit(event)
