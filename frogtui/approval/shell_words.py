"""A word of a parsed shell command: its text after quote removal, and whether its value is only
known when the shell runs (an expansion other than the home or working folder)."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

HOME_MARK = "\x00HOME\x00"
"""Stands for the home folder (``~``, ``$HOME``) in a word's text; the glue layer expands it."""
PWD_MARK = "\x00PWD\x00"
"""Stands for the shell's working folder (``$PWD``)."""
TMP_MARK = "\x00TMPDIR\x00"
"""Stands for the session's private temp folder (``$TMPDIR``, set for Bash)."""
MARKS = {"HOME": HOME_MARK, "PWD": PWD_MARK, "TMPDIR": TMP_MARK}
FOUND_MARK = "\x00found"
"""Last component standing for "each file found under the folder before it" (``find -exec ... {}``)."""
INPUT_MARK = "\x00input"
"""A word that the command gets at run time (``xargs``)."""

_INVISIBLE = {"Cf", "Cc", "Co", "Cs", "Zl", "Zp"}


@dataclass(frozen=True)
class Word:
    text: str
    """The word after quote removal (``~``, ``$HOME``, ``$PWD``, ``$TMPDIR`` as marks)."""
    dynamic: bool = False
    """True when the value depends on an expansion not known before the command runs."""

    @property
    def has_glob(self) -> bool:
        return any(ch in self.text for ch in "*?[")


def display(text: str) -> str:
    """A word's text for people: marks shown as what they stand for (``~``, ``$PWD``, ``{}``...)."""
    text = text.replace(HOME_MARK, "~").replace(PWD_MARK, "$PWD").replace(TMP_MARK, "$TMPDIR")
    return text.replace("/" + FOUND_MARK, "/{}").replace(INPUT_MARK, "<input>")


def odd_characters(text: str) -> str | None:
    """Why ``text`` may not be what it looks like: invisible, direction-changing or look-alike
    characters. None when it is plain."""
    for ch in text:
        if ch in "\t\n":
            continue
        category = unicodedata.category(ch)
        if category in _INVISIBLE and ch not in "\x00":
            return f"contains an invisible or control character (U+{ord(ch):04X})"
    for ch in text:
        if ord(ch) > 127 and ch != "\x00":
            return f"contains a non-ASCII character {ch!r} (U+{ord(ch):04X}) that may look like another"
    return None
