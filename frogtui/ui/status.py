"""The status bar: the run state (``run_state.RunState.label``), model and quantisation, the context meter (context used as a bar of the
conversation's budget, coloured as it nears the hand-off margin, and the session's total tokens
once a hand-off started a new conversation), tokens/s of the last turn, step n/max, sandbox state,
git branch and changed files."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from frogtui.ui.run_state import RunState

if TYPE_CHECKING:
    from frogtui.vcs.repository import GitState

BAR_CELLS = 8
NAME_WIDTH = 24
SHORT_NAME_WIDTH = 16
"""The model name's room in the compact bar (120 columns keep the model and tok/s)."""
_QUANT = re.compile(r"\b(I?Q\d[A-Z0-9_]*|F16|BF16|F32)\b", re.IGNORECASE)


def quantisation(model_name: str) -> str:
    """The quantisation named in a model name or file name (``Q4_K_M``...), or ''."""
    found = _QUANT.search(model_name.replace("-", " ").replace(".", " "))
    return found.group(1).upper() if found else ""


CHARS_PER_TOKEN = 4
"""About how many characters a token holds (the live meter's estimate during a turn)."""


def context_bar(used: int, size: int, cells: int = BAR_CELLS) -> str:
    """``█████░░░░░░░``: ``used`` of ``size`` tokens in ``cells`` characters."""
    filled = 0 if size <= 0 else min(cells, round(cells * used / size))
    return "█" * filled + "░" * (cells - filled)


def short_count(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


NEAR_FULL = 0.75
"""From this share of the budget the meter is coloured as a warning."""


def context_level(used: int, budget: int, margin: int) -> str:
    """``ok``, ``near`` (three quarters of the budget used) or ``full`` (less than the hand-off
    margin left, capped at half the budget as the loop caps it: the next step hands off)."""
    if budget <= 0:
        return "ok"
    if budget - used < min(margin, budget // 2) or used >= budget:
        return "full"
    return "near" if used >= NEAR_FULL * budget else "ok"


class StatusBar(Widget):
    """One line at the bottom of the main screen."""

    COMPONENT_CLASSES = {"status-bar--label", "status-bar--bar", "status-bar--warn", "status-bar--full", "status-bar--state"}

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    StatusBar > .status-bar--label { color: $text-muted; }
    StatusBar > .status-bar--bar { color: $primary; }
    StatusBar > .status-bar--warn { color: $warning; text-style: bold; }
    StatusBar > .status-bar--full { color: $error; text-style: bold; }
    StatusBar > .status-bar--state { color: $accent; text-style: bold; }
    """

    run_state: reactive[RunState] = reactive(RunState())
    """The app's run state (``SessionApp.run_state``): its ``label`` is the bar's first word."""
    model_name: reactive[str] = reactive("")
    context_used: reactive[int] = reactive(0)
    written_chars: reactive[int] = reactive(0)
    """Characters the model wrote since the last step's usage: the meter counts them in during a
    turn (``CHARS_PER_TOKEN`` a token) until the step's exact usage comes."""
    context_size: reactive[int] = reactive(0)
    """The conversation's context budget (the smaller of ``max_context_tokens`` and the model's)."""
    handoff_margin: reactive[int] = reactive(0)
    session_tokens: reactive[int] = reactive(0)
    """Every conversation's context added up; shown once it differs from the context used."""
    tok_s: reactive[float | None] = reactive(None)
    step: reactive[int] = reactive(0)
    max_steps: reactive[int] = reactive(100)
    sandbox: reactive[bool] = reactive(False)
    sandbox_weak: reactive[bool] = reactive(False)
    """Bash is sandboxed but a piece is missing (no user namespace): shown as ``sandbox weak``."""
    approval_mode: reactive[str] = reactive("policy")
    git: reactive[GitState | None] = reactive(None)

    @property
    def state(self) -> str:
        """The run state's word, as drawn."""
        return self.run_state.label

    def render(self) -> Text:
        """The parts that fit, in a fixed order. Wide (about 150 columns): everything in full; at
        120 the compact forms (a shorter model name, the context without its bar, ``master (2)``);
        narrower, the least useful go first (tokens/s, model, sandbox when on, git, context), the
        state last."""
        width = self.size.width or 10_000

        def too_wide(parts: list[tuple[int, Text]]) -> bool:
            return sum(p.cell_len for _, p in parts) + 3 * (len(parts) - 1) > width

        parts = self._parts()
        if too_wide(parts):
            parts = self._parts(compact=True)
        while len(parts) > 1 and too_wide(parts):
            parts.remove(min(parts, key=lambda item: item[0]))
        text = Text(no_wrap=True, overflow="ellipsis")
        label = self.get_component_rich_style("status-bar--label")
        for index, (_, part) in enumerate(parts):
            if index:
                text.append(" │ ", label)
            text.append_text(part)
        return text

    def _parts(self, compact: bool = False) -> list[tuple[int, Text]]:
        """(priority, text) of each part in display order; higher priority stays longer."""
        label = self.get_component_rich_style("status-bar--label")
        warn = self.get_component_rich_style("status-bar--warn")
        parts = [(9, Text(self.run_state.label, self.get_component_rich_style("status-bar--state")))]
        quant = quantisation(self.model_name)
        name = self.model_name or "no model"
        if name.lower().endswith(".gguf"):
            name = name[: -len(".gguf")]
        room = SHORT_NAME_WIDTH if compact else NAME_WIDTH
        name = name if len(name) <= room else name[: room - 1] + "…"
        parts.append((2, Text.assemble(name, (f" {quant}" if quant and quant not in name.upper() else "", label))))
        size, used = self.context_size, self.context_used + self.written_chars // CHARS_PER_TOKEN
        level = context_level(used, size, self.handoff_margin)
        bar_style = self.get_component_rich_style({"ok": "status-bar--bar", "near": "status-bar--warn"}.get(level, "status-bar--full"))
        total = f" Σ{short_count(self.session_tokens)}" if self.session_tokens > used else ""
        counts = f"{short_count(used)}/{short_count(size)}"
        figures = (counts, bar_style if level == "full" or (compact and level != "ok") else "")
        bar = ("", "") if compact else (context_bar(used, size) + " ", bar_style)
        meter = Text.assemble(("ctx ", label), bar, figures, (total, label))
        parts.append((5 if level == "ok" else 6, meter))
        parts.append((1, Text.assemble("–" if not self.tok_s else f"{self.tok_s:.1f}", (" tok/s", label))))
        parts.append((8, Text.assemble(("step ", label), f"{self.step}/{self.max_steps}")))
        shown = ("weak", warn) if self.sandbox and self.sandbox_weak else ("on" if self.sandbox else ("off", warn))
        parts.append((3 if self.sandbox and not self.sandbox_weak else 6, Text.assemble(("sandbox ", label), shown)))
        if self.git is not None:
            changed = (f" ({self.git.changed})", label) if compact else (f" {self.git.changed} changed", label)
            parts.append((4, Text.assemble(("" if compact else "git ", label), self.git.branch, changed)))
        parts.append((7, Text.assemble(("mode ", label), self.approval_mode)))
        return parts
