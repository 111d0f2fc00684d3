"""The floor: what no configuration, mode or person's "yes" can allow. Pure functions over facts.

- writes outside the repository (and its private temp folder);
- deleting or overwriting the repository root, ``.git`` internals or the home folder;
- a download piped or handed to a shell (``curl ... | sh``);
- reading a known secret store (``~/.ssh``, ``~/.aws``, ``~/.config/gh``, ``~/.netrc``, keyrings, gnupg).
"""
from __future__ import annotations

from frogtui.approval.decision import Decision
from frogtui.approval.facts import PathFact

FLOOR_OUTSIDE = "floor: writes outside the repository"
FLOOR_PROTECTED = "floor: protected folder"
FLOOR_SECRET = "floor: secret store"
FLOOR_DOWNLOAD = "floor: download run by a shell"


def floor_deny(rule: str, reason: str) -> Decision:
    return Decision("deny", rule, reason, floor=True)


def secret_read(fact: PathFact) -> Decision | None:
    """The floor's answer to reading ``fact``, or None when reading it is not below the floor."""
    if fact.secret:
        return floor_deny(FLOOR_SECRET, f"{fact.written} is in the secret store {fact.secret}; frogtui never reads it")
    return None


def write_floor(fact: PathFact, how: str = "") -> Decision | None:
    """The floor's answer to writing (or deleting) ``fact``, or None when the floor allows it."""
    verb = f" ({how})" if how else ""
    if not fact.known or fact.special:
        return None
    if fact.secret:
        return floor_deny(FLOOR_SECRET, f"{fact.written}{verb} is in the secret store {fact.secret}")
    if fact.protected:
        return floor_deny(FLOOR_PROTECTED, f"{fact.written}{verb} would change {fact.protected}, which frogtui never deletes or overwrites")
    if not fact.inside:
        return floor_deny(FLOOR_OUTSIDE, f"{fact.written}{verb} resolves to {fact.real}, outside the repository")
    return None


def download_floor(description: str) -> Decision:
    return floor_deny(FLOOR_DOWNLOAD, f"the command runs downloaded code in a shell ({description})")
