"""One ACP session: the session core (``agent.session_core.SessionCore``: the session folder,
policy, sandbox, checkpoints, the agent) with the gate (asking through ``session/request_permission``)
and the ACP sink plugged in. ``run`` is called on a worker thread, one prompt at a time."""
from __future__ import annotations

import threading
from typing import Any

from frogtui.acp.outbox import Outbox
from frogtui.acp.permission import PermissionAsk
from frogtui.acp.sink import AcpSink
from frogtui.agent.loop import RunResult
from frogtui.agent.session_core import SessionCore
from frogtui.approval import Approver


class AcpSession:
    """One ACP session (its id is the frogtui session's).

    Args:
        core: The session core, prepared (``prepare`` ran).
        outbox: The session's way to the client.
        notes: Warnings from ``prepare`` (no sandbox, not a repository, ignored project rules),
            shown with the next answer.
    """

    def __init__(self, core: SessionCore, outbox: Outbox, notes: list[str]) -> None:
        assert core.engine is not None, "prepare() comes first"
        self.core = core
        self.outbox = outbox
        self.notes = list(notes)
        self.unshown = list(notes)
        """Warnings the person has not seen yet (shown at the start of the next prompt's answer)."""
        self.busy = False
        """A prompt is running."""
        self.sink = AcpSink(outbox, str(core.engine.workspace.root), self._context_size, log=core.session.log)
        self.cancelled = threading.Event()
        """Set when the prompt is cancelled (cleared when the next starts): nothing more is asked."""
        asking = PermissionAsk(self.sink, self.cancelled)
        self.approver = Approver(core.engine, ask=asking.ask, show=asking.show, mode=core.config.approve, log=core.session.log)

    @property
    def id(self) -> str:
        return self.core.session.id

    def _context_size(self) -> int:
        agent = self.core.agent
        return agent.context_budget if agent is not None else self.core.config.limits.max_context_tokens

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
        agent = self.owner.core.agent
        if self.owner.cancelled.is_set() and agent is not None and not agent.cancel.is_set():
            agent.interrupt()
        self.owner.sink.emit(event)
