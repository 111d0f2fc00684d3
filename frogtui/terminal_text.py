"""Text the model, a command or the repository wrote, made safe to write to a terminal.

Any control character in it could act on the person's terminal: ``ESC ] 52 ; c ; …`` (OSC 52)
writes the clipboard, ``ESC [ 2 J`` clears the screen, ``ESC P …`` (DCS) talks to the terminal, and
the 8-bit C1 forms (``\\x9b`` CSI, ``\\x9d`` OSC, ``\\x90`` DCS) do the same on terminals that read
them; a carriage return or a backspace overwrites what was printed before. Dropping every control
character (C0, DEL and C1) leaves each sequence inert text. One function for every front end: the
app's line filter (``ui/terminal_safety.py``) and ``frogtui run``'s streams (``ControlFreeStream``).
"""
from __future__ import annotations

import re
from typing import Any, TextIO

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""C0 (tab and newline included), DEL and C1 (8-bit CSI, OSC, DCS, ST…)."""

CONTROL_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""The same, less tab and newline: for text written as lines (carriage return is still dropped)."""


HIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""Characters a terminal would not draw as themselves: controls (tab aside), zero-width characters,
and the bidirectional marks, embeddings, overrides and isolates that reorder what is drawn around
them (a right-to-left override can make ``rm -rf ~ #…`` read as something else)."""
HIDDEN_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
"""The same, less newline: for text shown as lines (a command)."""


def visible(char: str) -> str:
    """A mark for a character that a terminal would not draw as itself."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␟ (␍ for CR, ␛ for ESC)
    if code == 0x7F:
        return "␡"
    return f"⟨U+{code:04X}⟩"


def marked(text: str, *, keep_lines: bool = True) -> str:
    """``text`` with every character of ``HIDDEN`` drawn as a visible mark (newlines kept with
    ``keep_lines``): what a person approves is drawn as what runs (the approval modal, an ACP
    permission request, the review)."""
    return (HIDDEN_BUT_LINES if keep_lines else HIDDEN).sub(lambda m: visible(m.group()), text)


NOT_UTF8 = re.compile("[\udc80-\udcff]")
"""A byte that is not UTF-8, as ``surrogateescape`` reads it (a file name, a link's target)."""


def name_drawn(text: str) -> str:
    """A file name or a link's target on one line, as drawn: every character of ``HIDDEN`` (a
    newline too) marked, each byte that is not UTF-8 as ``⟨xFF⟩`` (a name cannot draw a second,
    made-up line, nor act on the terminal)."""
    return NOT_UTF8.sub(lambda m: f"⟨x{ord(m.group()) - 0xDC00:02X}⟩", marked(text, keep_lines=False))


def without_controls(text: str, *, keep_lines: bool = False) -> str:
    """``text`` with its control characters dropped; with ``keep_lines``, tabs and newlines stay."""
    return (CONTROL_BUT_LINES if keep_lines else CONTROL).sub("", text)


class ControlFreeStream:
    """A text stream that writes everything through ``without_controls(keep_lines=True)``: what
    ``frogtui run`` prints (the trace, warnings, the final answer) holds what the model and its
    commands wrote, and goes straight to the person's terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(without_controls(text, keep_lines=True))

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding…
        return getattr(self.stream, name)
