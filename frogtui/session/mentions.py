"""``@path`` in a person's message: the file's text attached to the message (issue 34, item 2).

A mention is the person's own request to show the model a file, so what the policy would *ask*
about is attached (the person asked), while what it *denies* (the floor: secrets, paths hidden
from the agent; a deny rule) is not, and the message says so. The text is what Leaf's Read
returns for the file (numbered lines, cut at Read's limit), so the model sees exactly what its
own Read would have shown; Leaf's prompt and tools are unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from frogtui.approval import PolicyEngine
from frogtui.protocol import ToolCall
from frogtui.tools import Workspace
from frogtui.tools.files import read
from frogtui.tools.specs import READ

MENTION = re.compile(r"(?<![\w@])@((?:[^\s@`'\"]|\\ )+)")
"""``@path`` at the start of a word (``a@b.c`` is an address, not a mention); ``\\ `` escapes a space."""
TRAILING = ".,;:!?)]}"
"""Punctuation that ends a sentence, not the path (``see @a.py.``)."""


@dataclass(frozen=True)
class Attached:
    """One file attached: its path as written and the size of the text attached."""

    path: str
    chars: int


@dataclass(frozen=True)
class Mentioned:
    """A message with its mentions resolved.

    Attributes:
        text: The message for the model: the person's words, then one delimited block per file.
        attached: The files attached, in the order mentioned.
        refused: One line per mention that was not attached, saying why.
    """

    text: str
    attached: list[Attached] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def mentions(text: str) -> list[str]:
    """The paths ``text`` mentions, each once, in order."""
    found: list[str] = []
    for match in MENTION.finditer(text):
        path = match.group(1).replace("\\ ", " ").rstrip(TRAILING)
        if path and path not in found:
            found.append(path)
    return found


def attach_mentions(text: str, engine: PolicyEngine, workspace: Workspace) -> Mentioned:
    """``text`` with the text of each file it mentions attached, as far as the policy lets Read see it."""
    attached: list[Attached] = []
    refused: list[str] = []
    blocks: list[str] = []
    for index, path in enumerate(mentions(text)):
        decision = engine.evaluate(ToolCall(f"mention_{index}", READ.name, {"file_path": path}))
        if decision.kind == "deny":
            refused.append(f"@{path} not attached: {decision.reason}")
            continue
        try:
            body = read(workspace, path)
        except (OSError, ValueError) as err:  # missing, a folder, not text, outside the root
            refused.append(f"@{path} not attached: {err}")
            continue
        blocks.append(f'<file path="{path}">\n{body}\n</file>')
        attached.append(Attached(path, len(body)))
    if not blocks:
        return Mentioned(text, attached, refused)
    return Mentioned(f"{text}\n\nFiles the person attached (as Read shows them):\n" + "\n".join(blocks), attached, refused)
