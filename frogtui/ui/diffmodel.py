"""The rows of a proposed change (before/after text), for the diff viewer.

Pure data and pygments: no Textual here, so the diff and the highlighting are testable alone.
Highlighting is lazy and chunked: only the chunks of lines on screen are lexed, so a
10,000-line change opens at once (a chunk boundary may cut a multi-line string; the colours
recover at the next chunk).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import _TokenType
from pygments.util import ClassNotFound

CONTEXT_LINES = 3
CHUNK_LINES = 200

RowKind = Literal["context", "added", "removed", "hunk", "changed"]


@dataclass(frozen=True)
class UnifiedRow:
    """One row of a unified diff: a context, added or removed line, or a hunk header."""

    kind: RowKind
    old_no: int | None
    new_no: int | None
    text: str
    """The hunk header for ``hunk`` rows, else the line (without its newline)."""


@dataclass(frozen=True)
class SplitRow:
    """One row of a side-by-side diff: the old line on the left, the new one on the right."""

    kind: RowKind
    old_no: int | None
    new_no: int | None
    header: str = ""
    """The hunk header for ``hunk`` rows."""


TokenLine = list[tuple[_TokenType, str]]


@lru_cache(maxsize=64)
def lexer_for(path: str) -> Lexer:
    """The pygments lexer for a file name (plain text when pygments knows none)."""
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


class HighlightedLines:
    """The lines of one text, tokenised lazily in chunks of ``CHUNK_LINES``."""

    def __init__(self, lines: list[str], lexer: Lexer) -> None:
        self.lines = lines
        self.lexer = lexer
        self._chunks: dict[int, list[TokenLine]] = {}

    def tokens(self, index: int) -> TokenLine:
        """The (token type, text) pairs of line ``index`` (0-based)."""
        chunk = index // CHUNK_LINES
        if chunk not in self._chunks:
            self._chunks[chunk] = self._lex(chunk)
        return self._chunks[chunk][index - chunk * CHUNK_LINES]

    def _lex(self, chunk: int) -> list[TokenLine]:
        start = chunk * CHUNK_LINES
        block = self.lines[start : start + CHUNK_LINES]
        out: list[TokenLine] = [[]]
        # pygments reads a carriage return as a line end: lexed as a space, so that the lines after
        # it keep their tokens (the viewer draws a line whose tokens differ from it uncoloured)
        for token_type, value in self.lexer.get_tokens("\n".join(block).replace("\r", " ") + "\n"):
            parts = value.split("\n")
            for number, part in enumerate(parts):
                if number:
                    out.append([])
                if part:
                    out[-1].append((token_type, part))
        return (out + [[] for _ in block])[: len(block)]


def lines_of(text: str) -> list[str]:
    """The lines of ``text`` as a file has them: cut at ``\\n`` only. ``str.splitlines`` also cuts at
    ``\\r``, form feeds, ``\\x1c``-``\\x1e``, ``\\x85`` and U+2028/2029, which bash and most
    languages read inside a line: the viewer draws those as marks in the line instead."""
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


class FileDiff:
    """A proposed change to one file, as rows for a unified or side-by-side view.

    Args:
        path: display path (picks the lexer and titles the header).
        before: current text, None for a new file.
        after: proposed text.
    """

    def __init__(self, path: str, before: str | None, after: str) -> None:
        self.path = path
        self.is_new = before is None
        self.old_lines = lines_of(before or "")
        self.new_lines = lines_of(after)
        lexer = lexer_for(path)
        self.old = HighlightedLines(self.old_lines, lexer)
        self.new = HighlightedLines(self.new_lines, lexer)
        self.unified: list[UnifiedRow] = []
        self.split: list[SplitRow] = []
        self.added = 0
        self.removed = 0
        self._build()

    @property
    def header(self) -> str:
        """``path  +A -R`` (``(new file)`` when it does not exist yet)."""
        note = "  (new file)" if self.is_new else ""
        return f"{self.path}  +{self.added} -{self.removed}{note}"

    def _groups(self) -> list[list[tuple[str, int, int, int, int]]]:
        if self.is_new:
            return [[("insert", 0, 0, 0, len(self.new_lines))]] if self.new_lines else []
        matcher = difflib.SequenceMatcher(None, self.old_lines, self.new_lines, autojunk=True)
        return list(matcher.get_grouped_opcodes(CONTEXT_LINES))

    def _build(self) -> None:
        for group in self._groups():
            first, last = group[0], group[-1]
            header = f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"
            self.unified.append(UnifiedRow("hunk", None, None, header))
            self.split.append(SplitRow("hunk", None, None, header))
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    for offset in range(i2 - i1):
                        self.unified.append(UnifiedRow("context", i1 + offset, j1 + offset, self.old_lines[i1 + offset]))
                        self.split.append(SplitRow("context", i1 + offset, j1 + offset))
                    continue
                self.removed += i2 - i1
                self.added += j2 - j1
                for i in range(i1, i2):
                    self.unified.append(UnifiedRow("removed", i, None, self.old_lines[i]))
                for j in range(j1, j2):
                    self.unified.append(UnifiedRow("added", None, j, self.new_lines[j]))
                for k in range(max(i2 - i1, j2 - j1)):
                    old = i1 + k if i1 + k < i2 else None
                    new = j1 + k if j1 + k < j2 else None
                    kind: RowKind = "changed" if old is not None and new is not None else ("removed" if old is not None else "added")
                    self.split.append(SplitRow(kind, old, new))
