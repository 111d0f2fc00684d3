"""A run in one line: steps, tool calls, what was allowed and denied (and by whom), files changed.

``RunTally`` is fed the events of a run (the session log, ``log.SessionLog``, passes them on) and
``line()`` gives the summary the session log keeps at the end of each run and headless ``frogtui
run`` prints on stderr, so a run whose every action was denied cannot end quietly with exit 0.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from frogtui.agent import events as ev
from frogtui.tools.specs import tool_spec
from frogtui.vcs.ignored import describe

_DIFF_FILE = re.compile(r"^diff --git ", re.MULTILINE)
DENIERS = ("rule", "floor", "mode", "person")
"""Who can deny, in the order the summary names them."""


class RunTally:
    """Counts what happened in a run, from its events."""

    def __init__(self) -> None:
        self.steps = 0
        self.calls = 0
        self.invalid = 0
        self.allowed = 0
        self.denied: Counter[str] = Counter()
        self.written: set[str] = set()
        """Paths a Write or Edit changed (the file count outside a git repository)."""
        self.exit_reason = ""
        self.patch = ""
        self.evaluated = 0
        """Prompt tokens the model evaluated (the rest came from its cache)."""
        self.generated = 0
        """Tokens the model generated."""
        self._answered: set[str] = set()

    def add(self, event: Any) -> None:
        """Count ``event`` (any event of ``frogtui.agent.events``; others are ignored)."""
        if isinstance(event, ev.ToolCallProposed):
            self.calls += 1
        elif isinstance(event, ev.ApprovalAnswered):
            self._answered.add(event.call.id)
            if event.approval.allowed:
                self.allowed += 1
            else:
                self.denied[event.approval.by] += 1
        elif isinstance(event, ev.ToolFinished):
            if not event.ran and event.call.id not in self._answered:  # unparsable, unknown tool, bad argument
                self.invalid += 1
            elif event.ran and event.ok and (spec := tool_spec(event.call.name)) is not None and spec.kind == "edit":
                self.written.add(str(event.call.arguments.get(spec.path_argument or "", "")))
        elif isinstance(event, ev.StepUsage):
            self.evaluated += event.usage.evaluated_tokens
            self.generated += event.usage.generated_tokens
        elif isinstance(event, ev.RunEnded):
            self.steps = event.n_steps
            self.exit_reason = event.exit_reason
            self.patch = event.patch

    @property
    def files_changed(self) -> int:
        """Files the run changed: from its git diff (Bash effects included) when there is one, else
        the paths Write and Edit changed (outside a git repository)."""
        return len(_DIFF_FILE.findall(self.patch)) if self.patch else len(self.written)

    def line(self, ignored: list[str] | None = None) -> str:
        """E.g. ``agent · 4 steps · 5 calls: 1 allowed, 4 denied (3 by rule, 1 by floor) · 0 files changed ·
        tokens 1,234 evaluated, 56 generated``; with ``ignored`` (the ignored paths the run changed),
        ``· 1 ignored path changed (.venv/bin/git)`` before the tokens."""
        denied = sum(self.denied.values())
        who = ", ".join(f"{self.denied[by]} by {by}" for by in (*DENIERS, *sorted(set(self.denied) - set(DENIERS))) if self.denied[by])
        calls = f"{_count(self.calls, 'call')}: {self.allowed} allowed, {denied} denied{f' ({who})' if who else ''}"
        if self.invalid:
            calls += f", {self.invalid} invalid"
        line = f"{self.exit_reason or 'ended'} · {_count(self.steps, 'step')} · {calls} · {_count(self.files_changed, 'file')} changed"
        if ignored:
            line += f" · {_count(len(ignored), 'ignored path')} changed, in no patch or review, not restored by undo ({describe(ignored)})"
        return line + f" · tokens {self.evaluated:,} evaluated, {self.generated:,} generated"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
