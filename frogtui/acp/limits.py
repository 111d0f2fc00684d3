"""Size caps: every ACP message frogtui sends stays well under what clients accept (Toad hangs on
a 13 MB message, the Node SDK drops a connection over 32 MiB). Sizes are JSON-encoded bytes, as
the SDK writes them (``ensure_ascii``: up to 12 bytes for one character)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_MESSAGE_BYTES = 1_000_000
"""No update is sent larger than this; a larger one loses its content (with a note)."""
DIFF_SIDE_BYTES = 300_000
"""Each side (old, new) of a diff."""
TEXT_BYTES = 100_000
"""A text content block (an observation, a note)."""
INPUT_BYTES = 16_000
"""Each string of a tool call's raw input (a Write's content is shown as the diff; a permission
request carries a command whole, up to ``SHOWN_COMMAND_BYTES``)."""
SHOWN_COMMAND_BYTES = 64_000
"""The longest command a permission request shows (JSON bytes): it goes whole into one fenced
code block, which editors draw as one text block. A longer command that would be asked about is
refused without asking (the person could not see what "Allow once" runs); the model reads why."""
CHUNK_BYTES = 64_000
"""A reasoning or answer chunk (merged deltas)."""
DIFF_CONTEXT = 3
"""Unchanged lines kept around the change when a diff is cut down to its changed region."""


def json_size(text: str) -> int:
    """Bytes ``text`` takes as a JSON string (quotes included)."""
    return len(json.dumps(text))


def fit(text: str, budget: int) -> tuple[str, int]:
    """The longest prefix of ``text`` (cut at a line end when one is near) that fits ``budget``
    JSON bytes, and how many characters were cut."""
    if len(text) * 12 + 2 <= budget or json_size(text) <= budget:
        return text, 0
    keep = len(text)
    while keep > 0:
        ratio = json_size(text[:keep]) / max(keep, 1)
        keep = min(keep - 1, int(budget / max(ratio, 1.0) * 0.97))
        if json_size(text[:keep]) <= budget:
            break
    line_end = text.rfind("\n", 0, keep)
    if line_end > keep * 0.9:
        keep = line_end + 1
    return text[:keep], len(text) - keep


def cap_text(text: str, budget: int = TEXT_BYTES, what: str = "output") -> str:
    """``text`` within ``budget`` bytes, with a note saying how much was left out."""
    kept, cut = fit(text, budget - 200)
    return kept if not cut else f"{kept}\n[frogtui: {what} truncated: {cut:,} more characters not shown]"


def cap_input(value: Any, budget: int = INPUT_BYTES) -> Any:
    """A tool call's arguments with every string longer than ``budget`` bytes cut (for ``rawInput``)."""
    if isinstance(value, str):
        return cap_text(value, budget, "argument")
    if isinstance(value, dict):
        return {k: cap_input(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [cap_input(v, budget) for v in value]
    return value


@dataclass(frozen=True)
class CappedDiff:
    old_text: str | None
    new_text: str
    note: str
    """Empty when the whole file is shown; else what is shown instead."""
    complete: bool = True
    """Every changed line is shown (False: the changed region itself was cut to fit)."""


def cap_diff(before: str | None, after: str, side_budget: int = DIFF_SIDE_BYTES) -> CappedDiff:
    """The two sides of a change, small enough to send: the whole files when they fit, else the
    changed region with a few lines around it, else that region cut (each case says so)."""
    if json_size(after) <= side_budget and (before is None or json_size(before) <= side_budget):
        return CappedDiff(before, after, "")
    old = (before or "").splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = max(prefix - DIFF_CONTEXT, 0)
    keep_after = max(suffix - DIFF_CONTEXT, 0)
    old_part = "".join(old[start : len(old) - keep_after])
    new_part = "".join(new[start : len(new) - keep_after])
    note = (
        f"The change is large: only lines {start + 1}–{len(new) - keep_after} of {len(new)} (new file) are shown; "
        "the whole change is in the session's trajectory and in git."
    )
    old_kept, old_cut = fit(old_part, side_budget)
    new_kept, new_cut = fit(new_part, side_budget)
    if old_cut or new_cut:
        note += f" Cut further to fit the message: {old_cut:,} characters of the old text and {new_cut:,} of the new are not shown."
    return CappedDiff(old_kept if before is not None else None, new_kept, note, complete=not (old_cut or new_cut))
