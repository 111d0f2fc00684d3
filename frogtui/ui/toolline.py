"""One compact line per tool call in the chat, in order with its step's reasoning and answer:

    ● Bash  pytest -q  ✓ person · 1.7s · exit 0
    ● Edit  calc.py  ✗ denied by person: "use pytest -x"

The line reads the call's ``TraceEntry`` (the trace pane keeps it up to date) and is redrawn in
place as the call goes proposed → asking → running → finished: one line of the chat's ``StepLog``
(``ui/steplog.py``), so an update repaints that line only. The text is assembled from plain strings (a command holding
``[brackets]`` is shown as typed); colours are theme variables.
"""
from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content

from frogtui.ui.trace import MARKS, STOPPED, UNDONE, TraceEntry

MIN_ARGS_WIDTH = 8
"""The arguments keep this many cells before the outcome takes its short form."""
ARGS_FLOOR = 4
"""The arguments keep at least this many cells, so the short outcome is never cut."""
QUOTE_MIN = 14
"""A denial reason shown in fewer cells than this is dropped instead (the short outcome)."""
REASON_CHARS = 60
"""How much of a denial reason the line shows."""
BULLET_STYLES = {
    "proposed": "$text-muted",
    "asking": "$warning",
    "running": "$accent",
    "allowed": "$accent",
    "done": "$success",
}
"""The bullet's colour by status; every other status (failed, denied, stopped) is ``$error``."""

Part = tuple[str, str]
"""A piece of the line and its style (a theme variable, or "")."""


def _quote(text: str, limit: int = REASON_CHARS) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= limit else f'"{flat[: limit - 1].rstrip()}…"'


def outcome_parts(entry: TraceEntry, short: bool = False) -> list[Part]:
    """What became of the call so far: ``running…``, ``✓ person · 1.7s · exit 0``, ``✗ denied by rule``…

    ``short`` (a narrow chat): no duration, no rule or reason, ``✗ person`` for ``✗ denied by person``.
    """
    parts = status_parts(entry, short)
    return [("↻ " if short else "↻ repeat ", "$warning"), *parts] if entry.repeat else parts


def status_parts(entry: TraceEntry, short: bool = False) -> list[Part]:
    status = entry.status
    if entry.undone:  # what it changed was rewound: no ✓ left
        return [(UNDONE, "$warning")] + ([] if short or entry.decision != "allow" else [(f" (allowed by {entry.by})", "$text-muted")])
    if status == "proposed":
        return [("…", "$text-muted")]
    if status == "asking":
        return [("? asking" if short else "? waiting for you", "$warning")]
    if entry.decision == "deny":
        who = f"✗ {entry.by or 'rule'}" if short else f"✗ denied by {entry.by or 'rule'}"
        if short:
            return [(who, "$error")]
        if entry.by == "person" and entry.reason:
            return [(who, "$error"), (f": {_quote(entry.reason)}", "$text-muted")]
        return [(who, "$error")] + ([(f" ({entry.rule})", "$text-muted")] if entry.rule and entry.by != "person" else [])
    if status == "skipped":  # invalid: nothing ran and nobody was asked
        first = entry.observation.strip().splitlines()[0] if entry.observation.strip() and not short else ""
        return [("✗ not run", "$error")] + ([(f": {_quote(first)}", "$text-muted")] if first else [])
    parts: list[Part] = []
    if entry.decision in MARKS:
        edited = (" ✎" if short else " (edited)") if entry.edited else ""
        parts.append((f"{MARKS[entry.decision]} {entry.by}{edited}", "$success"))
    if status in ("running", "allowed"):
        parts.append((" · running…" if parts else "running…", "$accent"))
        return parts
    if entry.duration_s is not None and not short:
        parts.append((f" · {entry.duration_s:.1f}s", "$text-muted"))
    if entry.exit_code is not None:
        parts.append((f" · exit {entry.exit_code}", "$text-muted" if entry.exit_code == 0 else "$error"))
    elif status in STOPPED:
        parts.append((f" · {status}", "$warning"))
    elif status == "failed":
        parts.append((" · failed", "$error"))
    return parts


def line_content(entry: TraceEntry, width: int) -> Content:
    """The whole line for ``width`` cells: the arguments give way so the outcome stays visible;
    when even that does not fit, the outcome's short form (no duration, rule or reason)."""
    status = entry.status
    bullet = "$warning" if entry.undone else BULLET_STYLES.get(status, "$error")
    if status == "done" and entry.exit_code not in (None, 0):
        bullet = "$error"
    head = f"● {entry.call.name}  "
    budget = width - cell_len(head) - MIN_ARGS_WIDTH - 2  # what the outcome may take
    outcome = outcome_parts(entry)
    if _cells(outcome) > budget:  # narrower: a quoted reason is cut, else the short outcome
        outcome = _cut_quote(outcome, budget) or outcome_parts(entry, short=True)
    room = max(ARGS_FLOOR, width - cell_len(head) - 2 - _cells(outcome))
    from frogtui.tools import short_arguments  # the tools come with the first call, after the first paint

    args = short_arguments(entry.call, room)
    pieces: list[str | Part] = [("●", bullet), " ", (entry.call.name, "bold"), "  ", args, "  ", *outcome]
    return Content.assemble(*pieces)


def _cells(parts: list[Part]) -> int:
    return sum(cell_len(text) for text, _ in parts)


def _cut_quote(outcome: list[Part], budget: int) -> list[Part] | None:
    """``outcome`` with its quoted reason cut to fit ``budget`` cells; None when there is no quote
    or too little room for one (``QUOTE_MIN``)."""
    if not outcome or not outcome[-1][0].startswith(': "'):
        return None
    room = budget - _cells(outcome[:-1]) - 2  # ': ' before the quote
    if room < QUOTE_MIN:
        return None
    reason = outcome[-1][0][3:-1]
    return [*outcome[:-1], (f": {_quote(reason, room - 2)}", outcome[-1][1])]
