"""The headless approver (``frogtui run --approve policy|none|all``) around a ``PolicyEngine``."""
from __future__ import annotations

from collections.abc import Callable

from frogtui.approval.engine import PolicyEngine
from frogtui.protocol import Approval, ApprovalRequest, ToolCall

MODES = ("policy", "none", "all")
MUTATING = frozenset({"Write", "Edit", "Bash"})


def audit_line(step: int, call: ToolCall, approval: Approval) -> str:
    """One session-log line for a decision: what, who decided, which rule, why."""
    return (
        f"approval step={step} tool={call.name} decision={approval.decision} by={approval.by} "
        f"rule={approval.rule!r} reason={approval.reason!r}"
    )


class PolicyApprover:
    """Answers for a run without a person.

    - ``policy``: allows what the policy allows and denies what it would ask about (saying so);
    - ``none``: also denies every Write, Edit and Bash;
    - ``all``: allows what the policy would ask about, but never what the floor or an explicit
      deny rule denies.

    Args:
        engine: The policy.
        mode: ``policy``, ``none`` or ``all``.
        log: Called with one line per decision (e.g. ``Session.log``), for the audit trail.
    """

    def __init__(self, engine: PolicyEngine, mode: str = "policy", log: Callable[[str], None] | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown approval mode {mode!r}")
        self.engine = engine
        self.mode = mode
        self.log = log

    def approve(self, request: ApprovalRequest) -> Approval:
        approval = self._answer(request)
        if self.log is not None:
            self.log(audit_line(request.step, request.call, approval))
        return approval

    def _answer(self, request: ApprovalRequest) -> Approval:
        tool = request.call.name
        decision = self.engine.evaluate(request)
        if decision.floor:
            return Approval("deny", decision.reason, by="floor", rule=decision.rule)
        if decision.kind == "deny":
            return Approval("deny", decision.reason, by="rule", rule=decision.rule)
        if self.mode == "all":
            note = "" if decision.kind == "allow" else f" (the policy would ask: {decision.reason})"
            return Approval("allow", f"--approve all{note}", by="mode", rule="--approve all")
        if self.mode == "none" and tool in MUTATING:
            return Approval("deny", f"{tool} is not allowed in this run (--approve none)", by="mode", rule="--approve none")
        if decision.kind == "allow":
            return Approval("allow", decision.reason, by="rule", rule=decision.rule)
        return Approval(
            "deny",
            f"{decision.reason}; this needs a person's approval and the run is headless (--approve policy denies what it would ask about)",
            by="mode",
            rule=decision.rule,
        )
