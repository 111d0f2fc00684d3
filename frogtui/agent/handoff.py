"""The hand-off: a fresh Leaf conversation's first user message that carries an earlier one on.

When a conversation's context fills (or the person asks for it), frogtui drafts a hand-off from its
own records — the original task, the files changed (the session's diff), the calls made and how
each ended (the trajectory), the model's last words — and starts a new conversation with it. The
model then sees what it was trained on: one task, one user message, an empty context.

The format is plain Markdown with fixed headings, so a person can edit the draft or write their own::

    # Hand-off
    This continues an earlier conversation on the same task, which ended: <why>.

    ## Task
    <the original task, verbatim>

    ## Follow-up messages          (only when the person sent any)
    - <each follow-up, first line>

    ## Files changed so far
    - path (+added -removed)

    ## Calls made (last N of M)
    - step S: Bash `pytest -q` -> exit 1
    - step S: Edit src/app.py -> ok

    ## Last message from the assistant
    <its last non-empty answer>

    ## What remains
    <what frogtui knows: the last failing call, and an instruction to check the work>

Drafting reads only data already in memory: no model, no git (the caller passes the patch text).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from frogtui.agent.saved import Conversation
from frogtui.tools.observations import Reading
from frogtui.tools.specs import first_line, tool_spec

MAX_CALLS = 40
"""Calls listed in the hand-off (the most recent ones)."""
MAX_LINE = 160
"""A listed call or message is cut to this many characters."""
MAX_SUMMARY = 2000
"""The assistant's last message is cut to this many characters."""

_DIFF_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")


@dataclass(frozen=True)
class CallOutcome:
    """One call of the earlier conversation and how it ended."""

    step: int
    tool: str
    summary: str
    """The call in a few words: ``Bash `pytest -q` ``, ``Edit src/app.py``."""
    outcome: str
    """``ok``, ``exit 1``, ``denied``, ``error``, ``timeout``, ``interrupted``."""

    @property
    def failed(self) -> bool:
        return self.outcome != "ok"


def one_line(text: str, limit: int = MAX_LINE) -> str:
    """The first line of ``text``, cut to ``limit`` characters (an ellipsis marks a cut)."""
    return first_line(text, limit)


def call_summary(tool: str, arguments: dict[str, Any]) -> str:
    """A call in a few words, as the hand-off lists it (its spec's ``summary``)."""
    spec = tool_spec(tool)
    if spec is None:
        return f"{tool} {arguments.get('file_path', '')}".rstrip()
    return spec.summary(arguments)


def said(reading: Reading) -> str:
    """How a call ended, in the hand-off's words: ``ok``, ``exit 1``, ``not run``…"""
    return f"exit {reading.exit_code}" if reading.kind == "exit" else reading.kind.replace("_", " ")


def call_outcomes(conversation: Conversation) -> list[CallOutcome]:
    """Every tool call of a conversation with how it ended (``agent.saved`` decides: as recorded,
    else read from its text), in order."""
    return [CallOutcome(c.turn, c.tool, call_summary(c.tool, c.arguments), said(c.ended)) for c in conversation.calls]


def changed_files(patch: str) -> list[tuple[str, int, int]]:
    """``(path, added, removed)`` for each file of a git diff, in order."""
    files: list[tuple[str, int, int]] = []
    path, added, removed = None, 0, 0
    for line in patch.splitlines():
        header = _DIFF_HEADER.match(line)
        if header:
            if path is not None:
                files.append((path, added, removed))
            path, added, removed = header.group(2), 0, 0
        elif path is not None and line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif path is not None and line.startswith("-") and not line.startswith("--- "):
            removed += 1
    if path is not None:
        files.append((path, added, removed))
    return files


ENDINGS = {
    "max_context_len": "its context filled up",
    "max_turns": "it reached the step limit",
    "max_tokens_per_turn": "a turn reached the token limit",
    "cancelled": "the person interrupted it",
    "agent": "the assistant answered",
    "requested": "the person asked for a fresh conversation",
}


def draft_handoff(
    conversation: Conversation,
    *,
    patch: str = "",
    ended: str = "max_context_len",
    task: str | None = None,
) -> str:
    """The hand-off for a conversation (``agent.saved.Conversation``: the one the loop holds,
    ``Conversation.of``, or a saved one).

    Args:
        conversation: the earlier conversation; each call's outcome is as recorded (or, for a
            session saved before outcomes were, read from its text).
        patch: the session's diff so far (``git diff`` of its changes), for the files changed.
        ended: why the earlier conversation ended (an exit reason, or ``requested``).
        task: the original task, when the transcript's first user message is itself a hand-off.
    """
    users = conversation.user_messages()
    original = task if task is not None else (users[0] if users else "")
    parts = ["# Hand-off", f"This continues an earlier conversation on the same task, which ended: {ENDINGS.get(ended, ended)}.",
             "", "## Task", original.strip() or "(no task recorded)"]
    follow_ups = users[1:]
    if follow_ups:
        parts += ["", "## Follow-up messages", *[f"- {one_line(text)}" for text in follow_ups]]
    files = changed_files(patch)
    parts += ["", "## Files changed so far"]
    parts += [f"- {path} (+{added} -{removed})" for path, added, removed in files] or ["- none"]
    calls = call_outcomes(conversation)
    shown = calls[-MAX_CALLS:]
    heading = f"## Calls made (last {len(shown)} of {len(calls)})" if len(shown) < len(calls) else f"## Calls made ({len(calls)})"
    parts += ["", heading]
    parts += [f"- step {c.step}: {c.summary} -> {c.outcome}" for c in shown] or ["- none"]
    last = conversation.last_answer()
    if last:
        cut = last if len(last) <= MAX_SUMMARY else last[:MAX_SUMMARY] + " …"
        parts += ["", "## Last message from the assistant", cut]
    parts += ["", "## What remains", *_remaining(calls, files)]
    return "\n".join(parts) + "\n"


def _remaining(calls: list[CallOutcome], files: list[tuple[str, int, int]]) -> list[str]:
    lines = []
    last_failed = next((c for c in reversed(calls) if c.failed), None)
    if calls and calls[-1].failed:
        lines.append(f"The last call failed: {calls[-1].summary} -> {calls[-1].outcome}.")
    elif last_failed is not None:
        lines.append(f"The last failing call was at step {last_failed.step}: {last_failed.summary} -> {last_failed.outcome}.")
    if files:
        lines.append("The files above are already changed on disk; read them again rather than redoing the work.")
    lines.append("Check what is done against the task, then finish what is left.")
    return lines
