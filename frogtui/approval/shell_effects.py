"""What simple commands do to files, as tables: which programs write which of their arguments,
which programs download, and which run a script they are handed. Pure data and small functions."""
from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from frogtui.approval.shell_words import Word

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "GET", "lynx"})
SCRIPT_RUNNERS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox", "perl", "ruby", "node",
     "nodejs", "php", "lua", "pwsh", "osascript", "source", ".", "eval", "deno", "bun", "python", "python2", "python3", "pypy3"}
)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
SPECIAL_WRITE_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
"""Writing here changes no file."""


@dataclass(frozen=True)
class Target:
    """A path a command writes, deletes or overwrites.

    Attributes:
        word: The path as written.
        how: What writes it (``>``, ``tee``, ``rm``, ``find -delete``...).
        under: The command touches things *under* this path, not the path itself (``find``).
    """

    word: Word
    how: str
    under: bool = False


def program_name(text: str) -> str:
    """``/usr/bin/env`` -> ``env``; look-alike characters folded (NFKC) for the strict checks."""
    return unicodedata.normalize("NFKC", text).rsplit("/", 1)[-1]


def is_script_runner(text: str) -> bool:
    name = program_name(text)
    return name in SCRIPT_RUNNERS or (name.startswith("python") and name[6:].replace(".", "").isdigit())


def _operands(args: Sequence[Word], with_value: frozenset[str] = frozenset()) -> list[Word]:
    """Non-option arguments (after ``--`` everything is an operand)."""
    out: list[Word] = []
    skip = False
    ended = False
    for word in args:
        if skip:
            skip = False
            continue
        if not ended and word.text == "--":
            ended = True
            continue
        if not ended and word.text.startswith("-") and word.text != "-":
            if word.text in with_value:
                skip = True
            continue
        out.append(word)
    return out


def _option_value(args: Sequence[Word], short: str, long: str) -> list[Word]:
    """Values of ``-o V``, ``-oV``, ``--long V`` and ``--long=V``."""
    values: list[Word] = []
    for n, word in enumerate(args):
        text = word.text
        if text in (short, long) and n + 1 < len(args):
            values.append(args[n + 1])
        elif long and text.startswith(long + "="):
            values.append(Word(text[len(long) + 1 :], word.dynamic))
        elif short and text.startswith(short) and len(text) > len(short) and not text.startswith("--"):
            values.append(Word(text[len(short) :], word.dynamic))
    return values


ALL_OPERANDS = frozenset({"rm", "rmdir", "unlink", "touch", "mkdir", "shred", "mv", "tee", "mkfifo", "truncate"})
LAST_OPERAND = frozenset({"cp", "ln", "install", "rsync", "scp"})
AFTER_FIRST_OPERAND = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})


def write_targets(words: Sequence[Word]) -> list[Target]:
    """The paths a simple command (program first, wrappers removed) writes, as far as known."""
    if not words:
        return []
    name = program_name(words[0].text)
    args = list(words[1:])
    targets: list[Target] = []
    if name in ALL_OPERANDS:
        with_value = frozenset({"-s", "--size", "-r", "--reference", "-m", "--mode", "-t", "-S"}) if name in ("truncate", "mkdir", "mv", "touch") else frozenset()
        targets += [Target(w, name) for w in _operands(args, with_value)]
    elif name in LAST_OPERAND:
        operands = _operands(args, frozenset({"-t", "-S", "--suffix", "-m", "-o", "-g", "-e"}))
        if operands:
            targets.append(Target(operands[-1], name))
    elif name in AFTER_FIRST_OPERAND:
        targets += [Target(w, name) for w in _operands(args)[1:]]
    elif name == "dd":
        targets += [Target(Word(w.text[3:], w.dynamic), "dd") for w in args if w.text.startswith("of=")]
    elif name in ("sed", "perl") and any(w.text.startswith(("-i", "--in-place")) or (w.text.startswith("-") and "i" in w.text[1:] and not w.text.startswith("--")) for w in args):
        operands = _operands(args, frozenset({"-e", "-f"}))
        has_script_option = any(w.text in ("-e", "-f") for w in args)
        targets += [Target(w, f"{name} -i") for w in (operands if has_script_option else operands[1:])]
    elif name == "find" and any(w.text == "-delete" for w in args):
        starts = []
        for word in args:
            if word.text.startswith(("-", "(", "!")):
                break
            starts.append(word)
        targets += [Target(w, "find -delete", under=True) for w in (starts or [Word(".")])]
    elif name == "tar" and args and ("x" in args[0].text.lstrip("-") or any(w.text in ("--extract", "--get") for w in args)):
        targets += [Target(w, "tar -x", under=True) for w in _option_value(args, "-C", "--directory")] or [Target(Word("."), "tar -x", under=True)]
    elif name == "curl":
        targets += [Target(w, "curl -o") for w in _option_value(args, "-o", "--output")]
    elif name == "wget":
        targets += [Target(w, "wget -O") for w in _option_value(args, "-O", "--output-document") if w.text != "-"]
    for flag, long in (("-t", "--target-directory"),):
        if name in ("cp", "mv", "ln", "install"):
            targets += [Target(w, name) for w in _option_value(args, flag, long)]
    return targets
