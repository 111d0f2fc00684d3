"""The approval modes as an editor shows them (a session mode and the ``mode`` config option).
What each does is ``approval.apply_mode``'s, the same in every front end; this module only names
them, and stays light (``initialize`` answers before the policy is imported)."""
from __future__ import annotations

from frogtui.config import APPROVAL_MODES

MODES = APPROVAL_MODES
MODE_TEXT: dict[str, tuple[str, str]] = {
    "policy": ("Ask (policy)", "Ask about what the rules say to ask about (the default)"),
    "edits": ("Accept edits", "Allow Write and Edit inside the repository without asking; commands as the rules say"),
    "all": ("Allow all", "Allow everything the floor and your deny rules allow, without asking; FrogNano has no safety alignment"),
    "none": ("Read only", "Deny every Write, Edit and Bash; Read and Glob as the rules say, never asking"),
}
"""Name and description of each mode."""
