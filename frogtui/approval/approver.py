"""The headless approver (``frogtui run --approve policy|none|all``) around a ``PolicyEngine``."""
from __future__ import annotations

from collections.abc import Callable

from frogtui.approval.engine import PolicyEngine
from frogtui.approval.modes import APPROVAL_MODES, ApprovalMode, apply_mode, repeat_denial
from frogtui.protocol import Approval, ApprovalRequest, ToolCall


def audit_line(step: int, call: ToolCall, approval: Approval) -> str:
    """One session-log line for a decision: what, who decided, which rule, why."""
    return (
        f"approval step={step} tool={call.name} decision={approval.decision} by={approval.by} "
        f"rule={approval.rule!r} reason={approval.reason!r}"
    )


class PolicyApprover:
    """Answers for a run without a person: ``approval.modes.apply_mode`` under ``--approve MODE``,
    and what it would ask a person about is denied (saying so).

    Args:
        engine: The policy.
        mode: ``policy``, ``none`` or ``all``.
        log: Called with one line per decision (e.g. ``Session.log``), for the audit trail.
    """

    def __init__(self, engine: PolicyEngine, mode: ApprovalMode = "policy", log: Callable[[str], None] | None = None) -> None:
        if mode not in APPROVAL_MODES:
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
        decision = self.engine.evaluate(request)
        approval = apply_mode(self.mode, decision, request.call.name, label=f"--approve {self.mode}", repeat=request.repeat)
        if approval is not None:
            return approval
        if request.repeat:
            return repeat_denial(request.repeat, decision)
        return Approval(
            "deny",
            f"{decision.reason}; this needs a person's approval and the run is headless (--approve policy denies what it would ask about)",
            by="mode",
            rule=decision.rule,
        )
