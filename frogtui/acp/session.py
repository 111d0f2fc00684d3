"""One ACP session: a frogtui session folder, its policy, sandbox and checkpoints, and (from the
first prompt on) its agent. ``run`` is called on a worker thread, one prompt at a time."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from frogtui.acp.approver import AcpApprover
from frogtui.acp.outbox import Outbox
from frogtui.acp.sink import AcpSink
from frogtui.agent.loop import Agent, RunResult
from frogtui.approval import PolicyEngine, make_sandbox
from frogtui.config import Config
from frogtui.protocol import Model
from frogtui.session import Session
from frogtui.tools import ToolRunner, Workspace
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import RepoState, discover, not_a_repo_message, resume, session_patch


@dataclass
class AcpSession:
    """Everything one ACP session needs besides the model (which the process shares)."""

    session: Session
    config: Config
    outbox: Outbox
    engine: PolicyEngine
    sandbox_wrap: Any
    repo_state: RepoState | None
    checkpoints: Checkpoints | None
    notes: list[str] = field(default_factory=list)
    """Lines for the person: no sandbox, not a repository, ignored project rules."""
    saved: dict[str, Any] | None = None
    """The saved conversation of a loaded session (restored into the agent on the first prompt)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    agent: Agent | None = None
    rewind_note: str = ""
    """What the model is told with the next message after an undo."""
    undone: set[tuple[int, int]] = field(default_factory=set)
    busy: bool = False
    """A prompt is running."""
    unshown: list[str] = field(default_factory=list)
    """Warnings the person has not seen yet (shown at the start of the next prompt's answer)."""

    def __post_init__(self) -> None:
        self.unshown = list(self.notes)
        self.sink = AcpSink(self.outbox, str(self.engine.workspace.root), self._context_size, log=self.session.log)
        self.approver = AcpApprover(self.engine, self.sink, cancel=self.cancelled, log=self.session.log)

    @property
    def id(self) -> str:
        return self.session.id

    def _context_size(self) -> int:
        return self.agent.context_budget if self.agent is not None else self.config.limits.max_context_tokens

    def run(self, text: str, model: Model) -> RunResult:
        """Run one prompt (the task, or a follow-up) to its end (worker thread)."""
        agent = self.agent or self._build_agent(model)
        if self.rewind_note:
            text, self.rewind_note = f"{self.rewind_note}\n\n{text}", ""
        if any(m.get("role") == "user" for m in agent.messages):
            return agent.send(text)
        return agent.run(text)

    def cancel(self) -> None:
        """Stop generation or the running command, and deny what is waiting for an answer."""
        self.cancelled.set()
        if self.agent is not None:
            self.agent.interrupt()

    def _build_agent(self, model: Model) -> Agent:
        agent = Agent(
            model,
            ToolRunner(self.engine.workspace, wrap=self.sandbox_wrap),
            self.approver,
            _CancelAware(self),
            limits=self.config.limits,
            before_action=self.checkpoints.before_action if self.checkpoints is not None else None,
            patch=session_patch(self.repo_state),
            on_step_end=self.session.save_trajectory,
        )
        if self.saved is not None:
            agent.restore(self.saved)
        self.agent = agent
        return agent


class _CancelAware:
    """The sink, plus: a cancel that arrived while the loop was clearing its flag still stops it."""

    def __init__(self, owner: AcpSession) -> None:
        self.owner = owner

    def emit(self, event: Any) -> None:
        agent = self.owner.agent
        if self.owner.cancelled.is_set() and agent is not None and not agent.cancel.is_set():
            agent.interrupt()
        self.owner.sink.emit(event)


def open_session(config: Config, session: Session, outbox: Outbox, *, resumed: bool) -> AcpSession:
    """Build the policy, sandbox and checkpoints of ``session`` (blocking: git and bwrap run).

    Raises:
        ConfigError: a rules file is not valid.
    """
    workspace = Workspace(config.repo, tmp_dir=session.tmp_dir)
    engine = PolicyEngine.load(workspace, config.rules_file)
    sandbox = make_sandbox(workspace, engine.rules.sandbox)
    state = resume(config.repo, session.id) if resumed else discover(config.repo, session.id)
    notes = [line for line in (sandbox.warning, *engine.rules.notes) if line]
    if state is None:
        notes.append(not_a_repo_message(config.repo))
    for line in notes:
        session.log(f"warning: {line}")
    session.log(sandbox.describe())
    return AcpSession(
        session=session,
        config=config,
        outbox=outbox,
        engine=engine,
        sandbox_wrap=sandbox.wrap,
        repo_state=state,
        checkpoints=Checkpoints(state) if state is not None else None,
        notes=notes,
    )
