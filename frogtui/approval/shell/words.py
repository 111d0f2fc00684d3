"""A word of a parsed shell command: its text after quote removal, and whether its value is only
known when the shell runs (an expansion other than the home or working folder)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

HOME_MARK = "\x00HOME\x00"
"""Stands for the home folder (``~``, ``$HOME``) in a word's text; the glue layer expands it."""
PWD_MARK = "\x00PWD\x00"
"""Stands for the shell's working folder (``$PWD``)."""
TMP_MARK = "\x00TMPDIR\x00"
"""Stands for the session's private temp folder (``$TMPDIR``, set for Bash)."""
MARKS = {"HOME": HOME_MARK, "PWD": PWD_MARK, "TMPDIR": TMP_MARK}
USER_HOME = re.compile(r"~([a-z_][a-z0-9_.-]*)?")
"""``~`` or ``~user`` at the start of a word (a user's home folder)."""
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
        """Whether the shell would expand it as a pattern: ``*``, ``?``, or a ``[`` closed later
        (``[`` alone, the test command, is no pattern)."""
        at = self.text.find("[")
        return "*" in self.text or "?" in self.text or (at >= 0 and "]" in self.text[at + 2 :])


def user_home_mark(user: str) -> str:
    """Stands for ``~user``, the home folder of ``user`` (the facts layer looks it up)."""
    return f"\x00~{user}\x00"


USER_MARK = re.compile("\x00~([a-z_][a-z0-9_.-]*)\x00")


def display(text: str) -> str:
    """A word's text for people: marks shown as what they stand for (``~``, ``$PWD``, ``{}``...)."""
    text = USER_MARK.sub(r"~\1", text).replace(HOME_MARK, "~").replace(PWD_MARK, "$PWD").replace(TMP_MARK, "$TMPDIR")
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


def changed_dir(words: tuple[Word, ...], cwd: Word | None) -> Word | None:
    """The working folder after ``cd``/``pushd``/``popd`` (``words``) run in ``cwd``; None when unknown."""
    operands = [w for w in words[1:] if not w.text.startswith("-") or w.text == "-"]
    if words[0].text == "popd" or (operands and (operands[0].dynamic or operands[0].text == "-")):
        return None
    if not operands:
        return Word(HOME_MARK)
    if operands[0].text.startswith(("/", *MARKS.values())):
        return operands[0]
    if cwd is None:
        return None
    return Word(f"{cwd.text.rstrip('/')}/{operands[0].text}" if cwd.text else operands[0].text)  # after ``cd /`` too


def opaque_reason(words: tuple[Word, ...]) -> str | None:
    program = words[0]
    if program.dynamic:
        return "the program is only known when the command runs"
    if program.has_glob:
        return "the program name is a pattern, so which program runs is only known when it runs"
    odd = odd_characters(program.text)
    if odd:
        return f"the program name {odd}"
    for word in words[1:]:
        odd = odd_characters(word.text)
        if odd and "non-ASCII" not in odd:
            return f"an argument {odd}"
    return None


def home_marks(text: str) -> str:
    """``~`` and ``~user`` at the start of ``text`` as the marks the facts layer expands."""
    match = USER_HOME.match(text)
    if match is None or (len(text) > match.end() and text[match.end()] != "/"):
        return text
    user = match.group(1)
    return (user_home_mark(user) if user else HOME_MARK) + text[match.end() :]


def odd_target(words: Iterable[Word]) -> str | None:
    """Why a redirection target or another path a command touches may not be what it looks like."""
    for word in words:
        odd = odd_characters(word.text)
        if odd and "non-ASCII" not in odd:
            return f"a redirection target {odd}"
    return None


def embedded_paths(word: Word) -> list[Word]:
    """Paths written inside a word that is not itself one: after ``=`` (``--file=~/.netrc``), after
    ``@`` (``curl -d @$HOME/.ssh/id``) and after ``file://``."""
    found: list[Word] = []
    text = word.text
    if "=" in text:
        text = text.split("=", 1)[1]
        found.append(Word(text, word.dynamic))
    if text.startswith("@"):
        text = text[1:]
        found.append(Word(text, word.dynamic))
    if text.startswith("file://"):
        found.append(Word(text[len("file://") :], word.dynamic))
    return found


def empty_backticks(raw: str) -> list[tuple[int, int]]:
    """The spans of the empty command substitutions (two backticks, or blanks between) in a word's
    source, outside single quotes and not escaped. The parser keeps them as literal text, but bash
    replaces each with nothing: ``r``m`` runs ``rm``, ``~/.co``dex`` is ``~/.codex``."""
    spans: list[tuple[int, int]] = []
    single = double = False
    n = 0
    while n < len(raw):
        char = raw[n]
        if char == "\\" and not single:
            n += 2
            continue
        if char == "'" and not double:
            single = not single
        elif char == '"' and not single:
            double = not double
        elif char == "`" and not single:
            end = raw.find("`", n + 1)
            while end > 0 and raw[end - 1] == "\\":
                end = raw.find("`", end + 1)
            if end < 0:
                break
            if not raw[n + 1 : end].strip():
                spans.append((n, end + 1))
            n = end
        n += 1
    return spans


def without_spans(raw: str, spans: list[tuple[int, int]]) -> str:
    """``raw`` with the ``spans`` cut out."""
    for start, end in reversed(spans):
        raw = raw[:start] + raw[end:]
    return raw
