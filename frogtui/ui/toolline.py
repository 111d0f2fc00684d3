"""One compact line per tool call in the chat, in order with its step's reasoning and answer:

    ● Bash  pytest -q  ✓ person · 1.7s · exit 0
    ● Edit  calc.py  ✗ denied by person: "use pytest -x"

The line reads the call's ``TraceEntry`` (the trace pane keeps it up to date) and is redrawn in
place as the call goes proposed → asking → running → finished: one widget of fixed height 1, so an
update repaints that line only. The text is assembled from plain strings (a command holding
``[brackets]`` is shown as typed); colours are theme variables.
"""
from __future__ import annotations

import re

from rich.cells import cell_len
from textual.content import Content
from textual.widget import Widget

from frogtui.tools import short_arguments
from frogtui.ui.trace import MARKS, STOPPED, TraceEntry

MIN_ARGS_WIDTH = 8
"""The arguments keep at least this many cells; the outcome is cut after that."""
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

DURATION = re.compile(r" · \d+\.\ds")
"""The duration part of an outcome (dropped first when the chat is narrow)."""
Part = tuple[str, str]
"""A piece of the line and its style (a theme variable, or "")."""


def _quote(text: str, limit: int = REASON_CHARS) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= limit else f'"{flat[: limit - 1]}…"'


def outcome_parts(entry: TraceEntry) -> list[Part]:
    """What became of the call so far: ``running…``, ``✓ person · 1.7s · exit 0``, ``✗ denied by rule``…"""
    parts = status_parts(entry)
    return [("↻ repeat ", "$warning"), *parts] if entry.repeat else parts


def status_parts(entry: TraceEntry) -> list[Part]:
    status = entry.status
    if status == "proposed":
        return [("…", "$text-muted")]
    if status == "asking":
        return [("? waiting for you", "$warning")]
    if entry.decision == "deny":
        who = f"✗ denied by {entry.by or 'rule'}"
        if entry.by == "person" and entry.reason:
            return [(who, "$error"), (f": {_quote(entry.reason)}", "$text-muted")]
        return [(who, "$error")] + ([(f" ({entry.rule})", "$text-muted")] if entry.rule and entry.by != "person" else [])
    if status == "skipped":  # invalid: nothing ran and nobody was asked
        first = entry.observation.strip().splitlines()[0] if entry.observation.strip() else ""
        return [("✗ not run", "$error")] + ([(f": {_quote(first)}", "$text-muted")] if first else [])
    parts: list[Part] = []
    if entry.decision in MARKS:
        parts.append((f"{MARKS[entry.decision]} {entry.by}" + (" (edited)" if entry.edited else ""), "$success"))
    if status in ("running", "allowed"):
        parts.append((" · running…" if parts else "running…", "$accent"))
        return parts
    if entry.duration_s is not None:
        parts.append((f" · {entry.duration_s:.1f}s", "$text-muted"))
    if entry.exit_code is not None:
        parts.append((f" · exit {entry.exit_code}", "$text-muted" if entry.exit_code == 0 else "$error"))
    elif status in STOPPED:
        parts.append((f" · {status}", "$warning"))
    elif status == "failed":
        parts.append((" · failed", "$error"))
    return parts


def line_content(entry: TraceEntry, width: int) -> Content:
    """The whole line for ``width`` cells: the arguments give way so the outcome stays visible."""
    status = entry.status
    bullet = BULLET_STYLES.get(status, "$error")
    if status == "done" and entry.exit_code not in (None, 0):
        bullet = "$error"
    outcome = outcome_parts(entry)
    head = f"● {entry.call.name}  "
    tail_len = 2 + sum(cell_len(text) for text, _ in outcome)
    if cell_len(head) + MIN_ARGS_WIDTH + tail_len > width:  # narrow: the duration gives way first
        outcome = [part for part in outcome if not DURATION.fullmatch(part[0])]
        tail_len = 2 + sum(cell_len(text) for text, _ in outcome)
    room = max(MIN_ARGS_WIDTH, width - cell_len(head) - tail_len)
    args = short_arguments(entry.call, room)
    pieces: list[str | Part] = [("●", bullet), " ", (entry.call.name, "bold"), "  ", args, "  ", *outcome]
    return Content.assemble(*pieces)


class ToolCallLine(Widget):
    """The chat's line for one tool call; ``show(entry)`` redraws it in place."""

    DEFAULT_CSS = """
    ToolCallLine { height: 1; width: 1fr; text-wrap: nowrap; text-overflow: ellipsis; color: $text; }
    """

    def __init__(self, entry: TraceEntry) -> None:
        super().__init__()
        self.entry = entry

    @property
    def plain(self) -> str:
        """The line as text at the current width (for tests and screen readers)."""
        return line_content(self.entry, self.size.width or 200).plain

    def show(self, entry: TraceEntry) -> None:
        """Redraw with the call's latest state (no layout change: the height stays 1)."""
        self.entry = entry
        self.refresh()

    def render(self) -> Content:
        return line_content(self.entry, self.size.width)
