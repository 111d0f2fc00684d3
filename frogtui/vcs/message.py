"""Commit messages: drafted by the model from the staged diff, shaped to git's conventions
(a subject of at most 72 characters, a blank line, a body), with a deterministic fallback."""
from __future__ import annotations

import re
import textwrap
import threading
from typing import Any

from frogtui.errors import ModelError
from frogtui.protocol import ToolCall
from frogtui.vcs.hunks import encode, parse_diff

SUBJECT_MAX = 72
DIFF_CHARS_MAX = 12_000
"""The diff is cut to this many characters in the prompt (a 4B model does best with little)."""
DRAFT_MAX_TOKENS = 2048

PROMPT = """Write a git commit message for the diff below.
Format: a subject line in the imperative mood of at most 72 characters, then a blank line, then a \
short body (one to five lines) saying what changed and why. Output only the message: no quotes, \
no code fences, no preamble.

Diff:
{diff}"""

_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL)
_FENCE = re.compile(r"^```[\w-]*\s*$", re.MULTILINE)
_SUBJECT_PREFIX = re.compile(r"^(subject|commit message|title)\s*:\s*", re.IGNORECASE)
_MARKUP = re.compile(r"</?(tool_call|tool_response|function|parameter|think)\b|<(function|parameter)=", re.IGNORECASE)
"""Tool-call or reasoning markup: a message holding it is not a commit message."""
_REASONING_START = re.compile(
    r"^(okay|ok|alright|hmm+|so|well|let me|let's|i need|i should|i will|i'll|i'm going|we need|the user|looking at)\b", re.IGNORECASE
)
"""How a model's reasoning (not an imperative subject) starts."""


def draft_commit_message(model: Any, diff: str, *, cancel: threading.Event | None = None) -> str:
    """Ask ``model`` (a ``frogtui.protocol.Model``; None: no model) for a commit message for
    ``diff``, in one turn without tools. Reasoning is dropped and the text is shaped by
    ``shape_message``; when the model fails, calls a tool or says nothing usable (tool-call
    markup, reasoning, an empty subject), ``summary_message(diff)``."""
    if model is None:
        return summary_message(diff)
    shown = diff if len(diff) <= DIFF_CHARS_MAX else diff[:DIFF_CHARS_MAX] + "\n[diff cut here]\n"
    messages = [{"role": "user", "content": PROMPT.format(diff=shown)}]
    pieces: list[str] = []
    try:
        for item in model.stream_turn(messages, [], max_tokens=DRAFT_MAX_TOKENS, cancel=cancel or threading.Event()):
            if isinstance(item, str):
                pieces.append(item)
            elif isinstance(item, ToolCall):  # the model tried to act instead of writing a message
                return summary_message(diff)
    except ModelError:
        return summary_message(diff)
    answer = strip_reasoning("".join(pieces), opens_reasoning=bool(getattr(model, "opens_reasoning", False)))
    shaped = shape_message(answer)
    if not shaped:
        return summary_message(diff)
    if "\n\n" not in shaped:  # a subject alone: the file list becomes the body
        shaped += "\n\n" + summary_message(diff).split("\n\n", 1)[1]
    return shaped


def strip_reasoning(text: str, *, opens_reasoning: bool) -> str:
    """The answer part of raw model text: everything after the last ``</think>`` (what comes
    before it is reasoning, whether or not the prompt opened it), without ``<think>`` blocks; empty
    when the prompt opened the reasoning and it never closed."""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    elif opens_reasoning:
        return ""
    return _THINK.sub("", text)


def shape_message(text: str) -> str:
    """Subject (at most 72 characters) + blank line + body, from free model text; '' when it is
    not a commit message: empty, a subject without a letter or digit, reasoning, or tool-call or
    reasoning markup anywhere.

    A subject that is too long is cut at a word boundary and kept whole as the body's first line.
    """
    if _MARKUP.search(text):
        return ""
    text = _FENCE.sub("", text).strip().strip('"').strip()
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        return ""
    subject = _SUBJECT_PREFIX.sub("", lines[0].strip().lstrip("#").strip()).rstrip(".")
    body_lines = lines[1:]
    while body_lines and not body_lines[0].strip():
        body_lines.pop(0)
    if len(subject) > SUBJECT_MAX:
        body_lines = [subject, ""] + body_lines if body_lines else [subject]
        subject = textwrap.shorten(subject, SUBJECT_MAX, placeholder="")
    if not any(ch.isalnum() for ch in subject) or _REASONING_START.match(subject):
        return ""
    body = "\n".join(body_lines).strip()
    return f"{subject}\n\n{body}" if body else subject


def summary_message(diff: str) -> str:
    """A deterministic message listing what the diff changes (no model needed)."""
    files = parse_diff(encode(diff)).files
    if not files:
        return "Update files"
    verbs = {"added": "Add", "deleted": "Delete"}
    if len(files) == 1:
        subject = f"{verbs.get(files[0].status, 'Update')} {files[0].path}"
    else:
        names = ", ".join(f.path.rsplit("/", 1)[-1] for f in files)
        subject = f"Update {len(files)} files: {names}"
    if len(subject) > SUBJECT_MAX:
        subject = textwrap.shorten(subject, SUBJECT_MAX, placeholder="…") if " " in subject else subject[: SUBJECT_MAX - 1] + "…"
    body = []
    for change in files:
        added = sum(len(g.added) for g in change.groups)
        removed = sum(len(g.removed) for g in change.groups)
        detail = change.status if change.whole else f"+{added} -{removed}"
        body.append(f"- {change.path}: {detail}")
    return subject + "\n\n" + "\n".join(body)
