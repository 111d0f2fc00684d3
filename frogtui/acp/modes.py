"""The approval modes, as the app has them: what each means and the answer it gives without asking."""
from __future__ import annotations

from typing import TYPE_CHECKING

from frogtui.protocol import Approval

if TYPE_CHECKING:
    from frogtui.approval import Decision

MODES = ("policy", "all", "none")
"""The approval modes, as in the app: ``policy`` asks when the rules say ask; ``all`` allows what
the floor and the deny rules do not deny; ``none`` denies what the rules would ask about."""


def mode_answer(decision: Decision, mode: str) -> Approval | None:
    """The answer without asking anyone, or None when a person must be asked."""
    if decision.kind == "deny":
        return Approval("deny", decision.reason, by="floor" if decision.floor else "rule", rule=decision.rule)
    if decision.kind == "allow":
        return Approval("allow", decision.reason, by="rule", rule=decision.rule)
    if mode == "all":
        return Approval("allow", f"approval mode: all (the policy would ask: {decision.reason})", by="mode", rule="mode: all")
    if mode == "none":
        return Approval("deny", f"{decision.reason}; approval mode 'none' denies what it would ask about", by="mode", rule="mode: none")
    return None


MODE_TEXT = {
    "policy": ("Ask (policy)", "Ask before what the rules say to ask about (the default)"),
    "all": ("Allow all", "Allow everything the floor and your deny rules allow, without asking; FrogNano has no safety alignment"),
    "none": ("Deny asks", "Deny what the rules would ask about; only what they allow runs"),
}
