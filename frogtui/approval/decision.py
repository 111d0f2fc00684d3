"""The answer of the policy: allow, ask or deny, with the rule that decided and why."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["allow", "ask", "deny"]
KINDS: tuple[Kind, ...] = ("allow", "ask", "deny")
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
"""Deny beats ask beats allow."""


@dataclass(frozen=True)
class Decision:
    """What the policy says about one action.

    Attributes:
        kind: ``allow`` (run without asking), ``ask`` (a person decides) or ``deny``.
        rule: The rule that decided, e.g. ``Bash: pytest *``, ``Read: allow (default)`` or
            ``floor: writes outside the repository``. Every automatic decision names one.
        reason: One sentence for a person (and, for a denial, for the model).
        floor: True when the non-negotiable floor decided; no mode, rule or person lifts it.
        read_only: For Bash: the command is proven to only read files and print (every effect of
            every command it runs), so it changes nothing (no checkpoint is needed before it).
        justification: The deciding rule's ``justification`` (why the person wrote it), '' when
            none: shown to the person when it asks, told to the model when it denies.
        in_repository_edit: A Write or Edit of a known path inside the repository that only the
            tool's default asks about (no rule of the person's matched): what ``--approve edits``
            allows.
    """

    kind: Kind
    rule: str
    reason: str
    floor: bool = False
    read_only: bool = False
    justification: str = ""
    in_repository_edit: bool = False

    @property
    def strictness(self) -> int:
        return STRICTNESS[self.kind]


def strictest(decisions: Iterable[Decision]) -> Decision | None:
    """The strictest decision (floor first among equals, then the earliest), or None when empty."""
    best: Decision | None = None
    for decision in decisions:
        if best is None or (decision.strictness, decision.floor) > (best.strictness, best.floor):
            best = decision
    return best


def stricter_kind(a: Kind, b: Kind) -> Kind:
    """The stricter of two kinds."""
    return a if STRICTNESS[a] >= STRICTNESS[b] else b
