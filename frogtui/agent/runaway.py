"""Runaway text: a turn that writes the same thing over and over is ended, not left to run to its
token cap (a small model repeating one sentence for thousands of tokens on a CPU).

``RepeatedText`` reads a turn's text as it streams. The text repeats when its end is one piece
(a line, a sentence, a run of words) written ``times`` times in a row, covering at least
``MIN_COVERED`` characters: a long piece needs ``times`` copies, a short one more (``0, `` needs
hundreds, so a table of zeros in a file is no runaway). Whitespace counts as one space, so a line
repeated with other indentation is the same line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MIN_COVERED = 512
"""Characters the repetition must cover at least (whitespace runs counted as one)."""
MAX_PIECE = 400
"""The longest piece looked for, in characters."""
CHECK_EVERY = 32
"""Characters of new text between two looks (a look costs a few string comparisons per length)."""
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Repetition:
    """The piece written again and again, and how often in a row."""

    piece: str
    times: int
    threshold: int

    def describe(self) -> str:
        """For the model and the person: what was repeated and the setting that stopped it."""
        piece, cut = self.piece, self.piece.find(" ")
        if not piece.endswith(" ") and 0 <= cut < len(piece) - 1:  # found mid-word (the copy before ends inside a word)
            piece = piece[cut + 1:] + piece[:cut + 1]  # shown from a word's start
        shown = piece.strip()
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        return (f"frogtui stopped your turn: it wrote the same text {self.times} times in a row ({shown!r}); "
                f"[limits] repeat_text = {self.threshold}. Do not repeat it: make one tool call or give your final answer.")


class RepeatedText:
    """Watches one turn's text (``feed`` each piece; ``found`` once it repeats).

    Args:
        times: copies in a row that make a repetition (``[limits] repeat_text``); 0 turns it off.
    """

    def __init__(self, times: int) -> None:
        self.times = times
        self.found: Repetition | None = None
        self._text = ""
        """The turn's text so far, whitespace runs as one space, its last ``_keep`` characters."""
        self._unchecked = 0
        self._keep = max(MIN_COVERED, MAX_PIECE * max(times, 1)) + MAX_PIECE

    def feed(self, text: str) -> Repetition | None:
        """Take the next piece of the turn's text; the repetition once there is one."""
        if self.times <= 0 or self.found is not None or not text:
            return self.found
        piece = _SPACE.sub(" ", text)
        if piece.startswith(" ") and self._text.endswith(" "):
            piece = piece[1:]
        self._unchecked += len(piece)
        self._text = (self._text + piece)[-self._keep:]
        if self._unchecked >= CHECK_EVERY:
            self._unchecked = 0
            self.found = self._look()
        return self.found

    def _look(self) -> Repetition | None:
        text = self._text
        for length in range(1, min(MAX_PIECE, len(text) // max(self.times, 2)) + 1):
            piece = text[-length:]
            need = max(self.times, -(-MIN_COVERED // length))
            if length * need > len(text) or text[-2 * length:-length] != piece:
                continue
            if text.endswith(piece * need):
                times = need
                while text.endswith(piece * (times + 1)):
                    times += 1
                return Repetition(piece, times, self.times)
        return None
