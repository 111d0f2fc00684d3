"""The floor: what no configuration, mode or person's "yes" can allow. Pure functions over facts.

- writes outside the repository (and its private temp folder), shell start-up files included;
- deleting or overwriting the repository root, ``.git`` internals or the home folder of any user;
- pointing git outside the repository (``git -C``, ``--git-dir``, ``--work-tree``), or creating a
  worktree or a clone outside it;
- a download piped or handed to a shell (``curl ... | sh``);
- scheduling code to run later (``crontab FILE``, ``at``, ``systemd-run``, ``launchctl``);
- reading a known secret store (``~/.ssh``, ``~/.aws``, ``~/.config/gh``, ``~/.netrc``, keyrings,
  gnupg), also by reading a folder that holds one recursively (``grep -r x ~``).
"""

from __future__ import annotations

import os

from frogtui.approval.decision import Decision
from frogtui.approval.facts import PathFact

FLOOR_OUTSIDE = "floor: writes outside the repository"
FLOOR_PROTECTED = "floor: protected folder"
FLOOR_SECRET = "floor: secret store"
FLOOR_DOWNLOAD = "floor: download run by a shell"
FLOOR_SCHEDULE = "floor: schedules code to run later"
FLOOR_STARTUP = "floor: shell start-up file"
FLOOR_GIT_PLACE = "floor: git pointed outside the repository"
FLOOR_HIDDEN = "floor: hidden from the agent"
STARTUP_FILES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".bash_logout",
        ".profile",
        ".zshrc",
        ".zshenv",
        ".zprofile",
        ".zlogin",
        ".zlogout",
        ".kshrc",
        ".cshrc",
        ".tcshrc",
        ".login",
        ".inputrc",
        "config.fish",
        "environment",
        ".xprofile",
        ".xinitrc",
    }
)
"""Files a shell (or a session) reads and runs when it starts."""


def floor_deny(rule: str, reason: str) -> Decision:
    return Decision("deny", rule, reason, floor=True)


def secret_read(fact: PathFact, *, recursive: bool = False) -> Decision | None:
    """The floor's answer to reading ``fact`` (with ``recursive``, everything under it), or None
    when reading it is not below the floor."""
    if fact.secret:
        return floor_deny(FLOOR_SECRET, f"{fact.written} is in the secret store {fact.secret}; frogtui never reads it")
    if recursive and fact.holds_secret:
        return floor_deny(
            FLOOR_SECRET, f"reading everything under {fact.written} reads the secret store {fact.holds_secret}; frogtui never reads it"
        )
    return None


def place_floor(fact: PathFact, how: str) -> Decision | None:
    """The floor's answer to pointing git at ``fact`` (``git -C DIR``), or None when it is inside."""
    if fact.known and not fact.inside:
        return floor_deny(FLOOR_GIT_PLACE, f"{how} {fact.written} points git at {fact.real}, outside the repository")
    return None


def schedule_floor(shown: str, why: str) -> Decision:
    return floor_deny(FLOOR_SCHEDULE, f"{shown}: {why}")


def write_floor(fact: PathFact, how: str = "") -> Decision | None:
    """The floor's answer to writing (or deleting) ``fact``, or None when the floor allows it."""
    verb = f" ({how})" if how else ""
    if not fact.known or fact.special:
        return None
    if fact.secret:
        return floor_deny(FLOOR_SECRET, f"{fact.written}{verb} is in the secret store {fact.secret}")
    if fact.protected:
        return floor_deny(FLOOR_PROTECTED, f"{fact.written}{verb} would change {fact.protected}, which frogtui never deletes or overwrites")
    if not fact.inside and os.path.basename(fact.real) in STARTUP_FILES:
        return floor_deny(
            FLOOR_STARTUP, f"{fact.written}{verb} is a shell start-up file ({fact.real}); code there runs later, outside frogtui"
        )
    if not fact.inside:
        return floor_deny(FLOOR_OUTSIDE, f"{fact.written}{verb} resolves to {fact.real}, outside the repository")
    return None


def download_floor(description: str) -> Decision:
    return floor_deny(FLOOR_DOWNLOAD, f"the command runs downloaded code in a shell ({description})")
