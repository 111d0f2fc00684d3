"""Approval modes: how a front end applies ``policy``, ``edits``, ``all`` or ``none`` to the policy's answer.

One pure function, ``apply_mode``, used by every front end (the app, ``frogtui run``, the ACP
agent), so a mode means the same thing everywhere:

- ``policy``: what the policy allows runs, what it denies is denied, what it asks about is asked
  (a front end without a person denies it, saying so);
- ``edits``: as ``policy``, but a Write or Edit inside the repository that only the tool's default
  would ask about runs, as if a rule allowed it (``Decision.in_repository_edit``); Bash, anything
  outside the repository and the person's own ask rules are exactly as under ``policy``;
- ``all``: what the policy would ask about runs too; the floor and explicit deny rules still deny;
- ``none``: every Write, Edit and Bash is denied; Read and Glob as the policy says, with what it
  would ask about denied.

A repeated call (``ApprovalRequest.repeat``: the model is going round in circles) counts as an
``ask`` even when a rule allows it: under ``policy`` the person is asked (told it repeats), and a
front end without a person denies it with ``repeat_denial``; ``all`` lets it run; the floor, deny
rules and ``none`` deny as they would.
"""
from __future__ import annotations

from frogtui.approval.decision import Decision
from frogtui.config import APPROVAL_MODES, ApprovalMode
from frogtui.protocol import Approval
from frogtui.tools import MUTATING_TOOLS

__all__ = ["APPROVAL_MODES", "ApprovalMode", "apply_mode"]


def apply_mode(mode: ApprovalMode, decision: Decision, tool: str, *, label: str = "", repeat: str = "") -> Approval | None:
    """The answer for ``tool`` under ``mode``, given the policy's ``decision``; None when a person
    must be asked (``policy`` mode and an ``ask``, or a repeat).

    Args:
        mode: ``policy``, ``edits``, ``all`` or ``none``.
        decision: what the policy said about the call.
        tool: the call's tool name.
        label: how the mode is named in the answer's rule and reason (``--approve all`` headless);
            default ``mode: MODE``.
        repeat: why the call is a repeat (``ApprovalRequest.repeat``), '' when it is not.
    """
    label = label or f"mode: {mode}"
    if decision.floor:
        return Approval("deny", decision.reason, by="floor", rule=decision.rule)
    if decision.kind == "deny":
        why = f". Why: {decision.justification}" if decision.justification else ""
        return Approval("deny", decision.reason + why, by="rule", rule=decision.rule)
    if mode == "none" and tool in MUTATING_TOOLS:
        return Approval("deny", f"{tool} is not allowed under {label}", by="mode", rule=label)
    asking = mode in ("policy", "edits")
    if decision.kind == "allow" and not (repeat and asking):  # read_only: proven to change nothing: no checkpoint
        return Approval("allow", decision.reason, by="rule", rule=decision.rule, read_only=decision.read_only)
    if mode == "edits" and decision.kind == "ask" and decision.in_repository_edit and not repeat:
        return Approval("allow", f"{label}: {tool} inside the repository (the policy would ask: {decision.reason})", by="mode", rule=label)
    if mode == "all":
        return Approval("allow", f"{label} (the policy would ask: {decision.reason})", by="mode", rule=label, read_only=decision.read_only)
    if mode == "none":
        return Approval("deny", f"{decision.reason}; {label} denies what the policy would ask about", by="mode", rule=decision.rule)
    return None


def repeat_denial(repeat: str, decision: Decision) -> Approval:
    """The answer of a front end without a person to a repeated call (``frogtui run --approve
    policy``): denied, telling the model it repeated."""
    allowed = f" (rule {decision.rule} would allow it otherwise)" if decision.kind == "allow" and decision.rule else ""
    return Approval(
        "deny",
        f"{repeat}{allowed}; a repeated call needs a person's approval and the run is headless. "
        "Do not run it again: try something different.",
        by="mode",
        rule=decision.rule,
    )
