"""A sign that frogtui waits (issue 34, item 6): the terminal bell and a desktop notification by
the terminal's own escapes, when a question opens, a run ends or a run fails, and the person may
not be looking (``[ui] notify``).

The escapes: BEL; OSC 9 (``ESC ] 9 ; text BEL``: iTerm2, WezTerm, ConEmu, Windows Terminal,
kitty, foot, Ghostty); OSC 777 (``ESC ] 777 ; notify ; title ; text BEL``: VTE terminals such as
GNOME Terminal, urxvt, WezTerm, foot). A terminal that knows neither ignores them. Whether the
window has the focus is what the terminal reports (focus events, ``App.app_focus``); a terminal
that reports nothing counts as focused, so ``unfocused`` rings only where the terminal says so,
and ``always`` is there for the rest.
"""
from __future__ import annotations

from collections.abc import Callable

from frogtui.terminal_text import without_controls

MAX_TEXT = 120
"""A notification's text is cut here (the terminal shows a line, not a page)."""


def sequence(title: str, text: str) -> str:
    """BEL, then OSC 9 and OSC 777 carrying ``title`` and ``text`` (control characters dropped,
    and ``;`` in OSC 777's fields, which separate them)."""
    title, text = _clean(title), _clean(text)
    return f"\a\x1b]9;{title}: {text}\a\x1b]777;notify;{title.replace(';', ',')};{text.replace(';', ',')}\a"


def _clean(text: str) -> str:
    flat = " ".join(without_controls(text).split())
    return flat if len(flat) <= MAX_TEXT else flat[: MAX_TEXT - 1] + "…"


class Attention:
    """Decides whether to ring, and rings through ``write`` (the terminal).

    Args:
        when: ``unfocused``, ``always`` or ``never`` (``[ui] notify``).
        write: writes an escape to the terminal, in order with the app's frames.
    """

    def __init__(self, when: str, write: Callable[[str], None]) -> None:
        self.when = when
        self.write = write
        self.sent: int = 0
        """How many times it rang (the session's count)."""

    def wanted(self, focused: bool) -> bool:
        return self.when == "always" or (self.when == "unfocused" and not focused)

    def ring(self, focused: bool, title: str, text: str) -> bool:
        """Ring (bell and notification) when ``[ui] notify`` wants it; True when it rang."""
        if not self.wanted(focused):
            return False
        self.write(sequence(title, text))
        self.sent += 1
        return True
