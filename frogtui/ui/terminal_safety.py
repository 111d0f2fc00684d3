"""Nothing the model, a tool or the repository wrote reaches the terminal as a control sequence.

Textual removes a few control characters from text (BEL, BS, VT, FF, CR) but passes ESC and the
rest on: reasoning, an answer, a command, a file's content, an observation or a file name holding
``ESC ] 52 ; c ; …`` would write the person's clipboard, ``ESC [ 2 J`` clear the screen, and so
on. ``ControlFilter`` is a Textual line filter, applied to every line every widget draws (the app
returns it from ``get_line_filters``): one place, whatever the widget. Control characters have no
width, so dropping them keeps every line's width. Which characters go is ``frogtui.terminal_text``'s
``without_controls``, the same for ``frogtui run``.
"""
from __future__ import annotations

from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from frogtui.terminal_text import CONTROL, without_controls


class ControlFilter(LineFilter):
    """Drops control characters from the text of every segment drawn (styles are not text: the
    terminal's own escape codes are written from them later)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(CONTROL.search(segment.text) for segment in segments if not segment.control):
            return segments
        return [
            segment if segment.control else Segment(without_controls(segment.text), segment.style, segment.control)
            for segment in segments
        ]
