"""Commit messages: drafted by the model from the staged diff, shaped to git's conventions
(a subject of at most 72 characters, a blank line, a body), with a deterministic fallback; the
drafts kept per diff (``Drafts``), and the commit trailer that names the model (``trailer_for``)."""
from __future__ import annotations

import re
import textwrap
import threading
from collections.abc import Callable
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
_DIFF_LINE = re.compile(
    r"^(diff --git |diff --cc |index [0-9a-f]+\.\.|--- |\+\+\+ |@@ |new file mode |deleted file mode "
    r"|similarity index |rename from |[+-]\s)"
)
"""A line of a diff (not a sentence about one)."""
_TAG = re.compile(r"</?[A-Za-z_][\w-]*(\s[^>]*)?>|```")
"""Markup in a subject: an XML/HTML tag or a code fence."""


def draft_commit_message(
    model: Any, diff: str, *, cancel: threading.Event | None = None, progress: Callable[[int], Any] | None = None,
) -> str:
    """Ask ``model`` (a ``frogtui.protocol.Model``; None: no model) for a commit message for
    ``diff``, in one turn without tools. Reasoning is dropped and the text is shaped by
    ``shape_message``; when the model fails, calls a tool, is cancelled (``cancel`` set) or says
    nothing usable (diff text, tool-call or other markup, reasoning, an empty subject),
    ``summary_message(diff)``. ``progress`` is called (on this thread) with the number of pieces
    (about tokens) streamed so far, after each."""
    if model is None:
        return summary_message(diff)
    cancel = cancel or threading.Event()
    shown = diff if len(diff) <= DIFF_CHARS_MAX else diff[:DIFF_CHARS_MAX] + "\n[diff cut here]\n"
    messages = [{"role": "user", "content": PROMPT.format(diff=shown)}]
    pieces: list[str] = []
    try:
        for item in model.stream_turn(messages, [], max_tokens=DRAFT_MAX_TOKENS, cancel=cancel):
            if cancel.is_set():
                return summary_message(diff)
            if isinstance(item, str):
                pieces.append(item)
                if progress is not None:
                    progress(len(pieces))
            elif isinstance(item, ToolCall):  # the model tried to act instead of writing a message
                return summary_message(diff)
    except ModelError:
        return summary_message(diff)
    if cancel.is_set():
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
    not a commit message: empty, a subject without a letter or digit, reasoning, a line of a diff
    or markup (a tag, a code fence) as the subject, or tool-call or reasoning markup anywhere.

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
    if _DIFF_LINE.match(lines[0]) or _DIFF_LINE.match(subject) or _TAG.search(subject):
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
        names = ", ".join(f.path for f in files)  # from the repository's root: out.txt could be anywhere
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


class Drafts:
    """The messages a model drafted, by model and diff: a review opened again on the same accepted
    changes shows the draft it made rather than asking the model again (minutes on a CPU)."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], str] = {}

    def get(self, model: Any, diff: str) -> str | None:
        """The draft ``model`` made for ``diff``, None when it made none."""
        return self._kept.get((str(getattr(model, "name", "")), diff))

    def put(self, model: Any, diff: str, message: str) -> None:
        self._kept[(str(getattr(model, "name", "")), diff)] = message


MODEL_FIELD = "{model}"
"""In ``Config.commit_trailer``: replaced by the name of the model that ran."""


def trailer_for(template: str, model: Any, *, spec: str = "") -> str:
    """The commit trailer ``template`` with ``{model}`` replaced by the model's name (a GGUF's file
    name without ``.gguf``; a server's model without `` @ URL``), or ``spec`` when no model was
    loaded (a review before the model loaded, or after a resume)."""
    if MODEL_FIELD not in template:
        return template
    name = str(getattr(model, "name", "") or "") if model is not None else ""
    name = name.split(" @ ", 1)[0].removesuffix(".gguf") or spec or "an unknown model"
    return template.replace(MODEL_FIELD, name)
