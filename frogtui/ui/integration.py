"""Where the app meets the other packages: the approval engine and sandbox (``frogtui.approval``),
checkpoints, rewind and review (``frogtui.vcs`` and its ``ReviewScreen``).

``wire_session`` does the slow parts (probing bubblewrap, recording the repository state) and runs
on a worker thread.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frogtui.approval import PolicyEngine, make_sandbox
from frogtui.config import Config
from frogtui.protocol import ApprovalRequest, ToolCall
from frogtui.session import Session
from frogtui.tools import Workspace
from frogtui.tools.bash import CommandWrapper
from frogtui.ui.messages import PolicyVerdict
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import RepoState, discover, init_repo, not_a_repo_message, resume


class EnginePolicy:
    """``UiPolicy`` over the approval engine: its decision, its narrow session rules."""

    def __init__(self, engine: PolicyEngine) -> None:
        self.engine = engine

    def verdict(self, request: ApprovalRequest) -> PolicyVerdict:
        decision = self.engine.evaluate(request)
        return PolicyVerdict(decision.kind, decision.rule, decision.reason, floor=decision.floor)

    def session_rule(self, call: ToolCall) -> str:
        return "; ".join(rule.text for rule in self.engine.session_rules_for(call))

    def allow_for_session(self, call: ToolCall) -> str:
        return self.engine.allow_for_session(call)


@dataclass
class SessionWiring:
    """Everything a session's agent needs besides the model."""

    workspace: Workspace
    policy: EnginePolicy
    sandbox_wrap: CommandWrapper | None
    repo_state: RepoState | None
    checkpoints: Checkpoints | None
    notes: list[str] = field(default_factory=list)
    """Lines to show the person (no sandbox, not a repository, ignored project rules)."""


def wire_session(config: Config, session: Session, *, resumed: bool) -> SessionWiring:
    """Build the policy, sandbox and checkpoints for ``session`` (blocking: run it on a worker).

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
    return SessionWiring(
        workspace=workspace,
        policy=EnginePolicy(engine),
        sandbox_wrap=sandbox.wrap,
        repo_state=state,
        checkpoints=Checkpoints(state) if state is not None else None,
        notes=notes,
    )


def enable_git(wiring: SessionWiring, config: Config, session: Session) -> RepoState:
    """Run ``git init`` in the repository folder and turn on checkpoints, review and undo for the
    session (blocking: run it on a worker). Returns the new repository state."""
    init_repo(config.repo)
    state = discover(config.repo, session.id)
    if state is None:  # pragma: no cover - git init succeeded but the folder is still not a repository
        raise RuntimeError(f"git init did not create a repository in {config.repo}")
    wiring.repo_state = state
    wiring.checkpoints = Checkpoints(state)
    wiring.notes = [n for n in wiring.notes if n != not_a_repo_message(config.repo)]
    return state


def review_screen(wiring: SessionWiring | None, config: Config, model: Any) -> Any:
    """The review & commit screen for the session, or a one-line reason why it cannot open."""
    if wiring is None or wiring.repo_state is None:
        return "Review & commit needs a git repository."
    from frogtui.ui.review import ReviewScreen
    from frogtui.vcs.review import ReviewSession

    return ReviewScreen(ReviewSession(wiring.repo_state, trailer=config.commit_trailer), model=model)
