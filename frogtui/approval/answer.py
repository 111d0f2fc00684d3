"""What the gate (``approval.Approver``) asks a person, and what the person answers: the whole of
what a front end (the app's modal, the editor's ``session/request_permission``) exchanges with it."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from frogtui.approval.decision import Decision
from frogtui.protocol import ApprovalRequest, FileHunks
from frogtui.tools.effects import Effect
from frogtui.tools.proposals import Proposal

Verdict = Literal["allow", "ask", "deny", "skip"]
"""What the rules say of one effect of a proposal: it lands, a person decides, it stops the whole
proposal, or it is left out (a FIFO, Python bytecode: never carried over, never in the way)."""


@dataclass(frozen=True)
class Judged:
    """One effect of a proposal with what the rules (and the approval mode) say of it."""

    effect: Effect
    verdict: Verdict
    rule: str
    """The rule that decided (``Write: src/**``, ``floor: protected folder``, ``control file``…)."""
    reason: str
    ignored: bool = False
    """git ignores its path (a cache, ``.venv``, ``node_modules``): shown grouped with counts,
    unless it runs later."""
    by: str = "rule"
    """Who decided: ``rule``, ``floor`` or ``mode`` (as ``Approval.by``)."""

    def line(self) -> str:
        """The effect and the verdict on one line (the model's and the trace's)."""
        word = {"allow": "allowed", "ask": "needs a person", "deny": "denied", "skip": "left out"}[self.verdict]
        return f"{self.effect.describe(full=False)}: {word} ({self.rule})"


@dataclass(frozen=True)
class Question:
    """A call the policy asks a person about, under the approval mode."""

    request: ApprovalRequest
    """The call as it would run (with the person's edits so far), its step, the working folder,
    the Write/Edit preview and, for a repeat, why it repeats."""
    decision: Decision
    """Why the policy asks (its rule and reason)."""
    session_rules: tuple[str, ...] = ()
    """The narrow rules "always allow" would store, as people read them (``Bash: pytest *``);
    empty when none is safe (then "always allow" allows this once)."""
    proposal: Proposal | None = None
    """A command that ran as a proposal: the question is whether its effects land (``judged``:
    each effect with what the rules say of it); None otherwise."""
    judged: tuple[Judged, ...] = ()
    """The proposal's effects, judged."""

    @property
    def session_rule(self) -> str:
        """The rules "always allow" would store, joined by ``; `` ('' when none)."""
        return "; ".join(self.session_rules)


@dataclass(frozen=True)
class PersonAnswer:
    """What the person answered."""

    choice: Literal["once", "always", "deny", "edit", "run"]
    """``run``: a proposal's command is run for real instead (directly, with the network as
    configured), its effects not judged first."""
    reason: str = ""
    """Deny: the reason sent to the model (may be empty)."""
    arguments: dict[str, Any] | None = None
    """Edit: the call's new arguments (the policy decides on them again)."""
    accepted: tuple[str, ...] | None = None
    """A proposal: the paths of the effects to land when only some are accepted; None: all of them."""
    hunks: tuple[FileHunks, ...] = ()
    """A proposal: its text files accepted in part, with the hunks of each to land (their paths
    are among those accepted)."""
    by: str = "person"
    """Who answered: the person, or ``display`` for a denial without asking, when the front end
    could not show the call whole (the person would allow what they cannot see)."""


Ask = Callable[[Question], PersonAnswer]
"""A front end's way to ask a person (it may block: the gate runs on the agent's thread)."""
