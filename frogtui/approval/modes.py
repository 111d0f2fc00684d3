"""Approval modes: how a front end applies ``policy``, ``all`` or ``none`` to the policy's answer.

One pure function, ``apply_mode``, used by every front end (the app, ``frogtui run``, the ACP
agent), so a mode means the same thing everywhere:

- ``policy``: what the policy allows runs, what it denies is denied, what it asks about is asked
  (a front end without a person denies it, saying so);
- ``all``: what the policy would ask about runs too; the floor and explicit deny rules still deny;
- ``none``: every Write, Edit and Bash is denied; Read and Glob as the policy says, with what it
  would ask about denied.
"""
from __future__ import annotations

from frogtui.approval.decision import Decision
from frogtui.config import APPROVAL_MODES, ApprovalMode
from frogtui.protocol import Approval
from frogtui.tools import MUTATING_TOOLS

__all__ = ["APPROVAL_MODES", "ApprovalMode", "apply_mode"]


def apply_mode(mode: ApprovalMode, decision: Decision, tool: str, *, label: str = "") -> Approval | None:
    """The answer for ``tool`` under ``mode``, given the policy's ``decision``; None when a person
    must be asked (``policy`` mode and an ``ask``).

    Args:
        mode: ``policy``, ``all`` or ``none``.
        decision: what the policy said about the call.
        tool: the call's tool name.
        label: how the mode is named in the answer's rule and reason (``--approve all`` headless);
            default ``mode: MODE``.
    """
    label = label or f"mode: {mode}"
    if decision.floor:
        return Approval("deny", decision.reason, by="floor", rule=decision.rule)
    if decision.kind == "deny":
        return Approval("deny", decision.reason, by="rule", rule=decision.rule)
    if mode == "none" and tool in MUTATING_TOOLS:
        return Approval("deny", f"{tool} is not allowed under {label}", by="mode", rule=label)
    if decision.kind == "allow":
        return Approval("allow", decision.reason, by="rule", rule=decision.rule)
    if mode == "all":
        return Approval("allow", f"{label} (the policy would ask: {decision.reason})", by="mode", rule=label)
    if mode == "none":
        return Approval("deny", f"{decision.reason}; {label} denies what the policy would ask about", by="mode", rule=decision.rule)
    return None
