"""Commands that rebind what a name runs, for the rest of the shell: ``hash -p /usr/bin/rm ls``
makes ``ls`` run ``rm``; so do an alias (``alias``, ``BASH_ALIASES``, with ``shopt -s
expand_aliases``), a write to bash's command hash (``BASH_CMDS``, also through ``read``, ``printf
-v``, ``declare``, ``mapfile``...) and ``enable`` (``-f`` loads a builtin from a file, ``-n`` hands a
builtin's name to whatever ``PATH`` finds). After one, the name a later command is written with no
longer says which program runs, so a deny rule on ``rm`` could be sidestepped by spelling it
``ls``.

One table, ``REBINDS``: program name -> ``Rebind`` (why it rebinds, given its arguments, with the
commands that show it, swept by tests/approval/test_rebinding.py). ``rebinding`` says whether one
simple command rebinds; the walk marks every program of a command that contains one as only known
when it runs (``SimpleCommand.unknown_program``): denied while any deny rule exists, asked otherwise.
Every program of the command, not only those after it: a loop or a function runs text written
before the rebinding after it. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from frogtui.approval.shell.effects import _operands, program_name
from frogtui.approval.shell.programs import has_flag, option_values
from frogtui.approval.shell.words import Word

REBINDING_VARIABLES = ("BASH_CMDS", "BASH_ALIASES")
"""Bash's command hash and its aliases: writing an element (``BASH_CMDS[ls]=/usr/bin/rm``) rebinds a name."""
_MENTION = re.compile("|".join(REBINDING_VARIABLES))
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?")


@dataclass(frozen=True, kw_only=True)
class Rebind:
    """A program that can rebind what a name runs.

    Attributes:
        why: The reason ``NAME ARGS`` rebinds (None when these arguments do not), given the name as
            called and the arguments.
        doc: What rebinds, for the table in docs/APPROVALS.md.
        examples: ``(command, shows)``: commands in which a later name runs another program, and
            what shows it when bash runs the command in a folder holding ``calc.py``: ``rm`` (the
            file is deleted) or a text the other program prints (tests/approval/test_rebinding.py
            runs each in real bash).
    """

    why: Callable[[str, Sequence[Word]], str | None]
    doc: str
    examples: tuple[tuple[str, str], ...] = ()


def mentions(text: str) -> str | None:
    """Why ``text`` (a word, an assignment, a command's whole text) may write a rebinding variable."""
    found = _MENTION.search(text)
    return f"it writes {found.group(0)}, which rebinds what a name runs" if found else None


def _hash(name: str, args: Sequence[Word]) -> str | None:
    if any(w.dynamic for w in args):
        return "hash: a word only known when it runs may be -p, which rebinds what a name runs"
    if has_flag(args, "-p"):
        return "hash -p rebinds what a name runs"
    return None


def _enable(name: str, args: Sequence[Word]) -> str | None:
    if any(w.dynamic for w in args):
        return "enable: a word only known when it runs may load or disable a builtin"
    if any(has_flag(args, flag) for flag in ("-f", "-n", "-d")) or _operands(args, frozenset({"-f"})):
        return "enable loads, disables or turns on a builtin, which changes what its name runs"
    return None


def _alias(name: str, args: Sequence[Word]) -> str | None:
    if any(w.dynamic or "=" in w.text for w in args):
        return "alias defines a name that runs something else (bash runs it with expand_aliases, sh always)"
    return None


def _shopt(name: str, args: Sequence[Word]) -> str | None:
    if any(w.dynamic or "expand_aliases" in w.text for w in args):
        return "shopt expand_aliases makes aliases rebind what a name runs"
    return None


def _names(name: str, args: Sequence[Word]) -> list[Word]:
    """The variables a setting builtin writes, as words (their names, maybe with a value after ``=``)."""
    if name == "printf":
        return option_values(args, "-v")
    if name == "read":
        return [*option_values(args, "-a"), *_operands(args, frozenset("-a -d -i -n -N -p -t -u".split()))]
    if name in ("mapfile", "readarray"):
        return _operands(args, frozenset("-C -c -d -n -O -s -u".split()))
    if name == "getopts":
        return _operands(args)[1:2]
    if name == "let":
        return list(args)
    return _operands(args)  # declare, typeset, local, export, readonly


def _setter(name: str, args: Sequence[Word]) -> str | None:
    """``read``, ``printf -v``, ``declare``...: rebinds when a variable it writes is a rebinding
    one, or is named by a word only known when it runs (``printf -v "$n"``), or is a name reference
    (``declare -n r=BASH_CMDS``, checked by name) to a name only known when it runs."""
    for word in _names(name, args):
        target = word.text.split("=", 1)[0]
        why = mentions(target)
        if why:
            return f"{name}: {why}"
        if word.dynamic and not _NAME.fullmatch(target):
            return f"{name}: the name of a variable it sets is only known when it runs (it may be {' or '.join(REBINDING_VARIABLES)})"
        if word.dynamic and name in ("declare", "typeset", "local") and has_flag(args, "-n"):
            return f"{name} -n: a name reference to a variable only known when it runs"
    return None


_SETTER_DOC = "a variable it sets is `BASH_CMDS` or `BASH_ALIASES`, or only known when it runs"
REBINDS: dict[str, Rebind] = {
    "hash": Rebind(why=_hash, doc="`-p PATH NAME`", examples=(("hash -p /usr/bin/rm ls; ls calc.py", "rm"),)),
    "enable": Rebind(why=_enable, doc="`-f FILE NAME` (loads a builtin), `-n NAME`, `-d NAME`, `NAME`",
                     examples=(("enable -n echo; echo --version", "GNU coreutils"),)),
    "alias": Rebind(why=_alias, doc="`NAME=VALUE`", examples=(("shopt -s expand_aliases\nalias ls=rm\nls calc.py", "rm"),)),
    "shopt": Rebind(why=_shopt, doc="`expand_aliases`",
                    examples=(("shopt -s expand_aliases\nBASH_ALIASES[ls]=rm\nls calc.py", "rm"),)),
    "read": Rebind(why=_setter, doc=_SETTER_DOC, examples=(("read 'BASH_CMDS[ls]' <<< /usr/bin/rm; ls calc.py", "rm"),)),
    "printf": Rebind(why=_setter, doc=_SETTER_DOC, examples=(
        ("printf -v 'BASH_CMDS[ls]' /usr/bin/rm; ls calc.py", "rm"),
        ("n=BASH_CMDS; printf -v \"$n[ls]\" /usr/bin/rm; ls calc.py", "rm"),
    )),
    **dict.fromkeys(("declare", "typeset", "local", "export", "readonly"), Rebind(why=_setter, doc=_SETTER_DOC, examples=(
        ("declare -A BASH_CMDS='([ls]=/usr/bin/rm)'; ls calc.py", "rm"),
        ("declare 'BASH_CMDS[ls]=/usr/bin/rm'; ls calc.py", "rm"),
        ("n=BASH_CMDS; declare -n r=$n; r[ls]=/usr/bin/rm; ls calc.py", "rm"),
    ))),
    **dict.fromkeys(("mapfile", "readarray"), Rebind(why=_setter, doc=_SETTER_DOC)),  # bash refuses it today (not an indexed array)
    "getopts": Rebind(why=_setter, doc=_SETTER_DOC),
    "let": Rebind(why=_setter, doc=_SETTER_DOC),
}  # fmt: skip
"""Every builtin that can rebind what a name runs, by name; a prefix assignment
(``BASH_CMDS[ls]=/usr/bin/rm ls``) and ``${BASH_CMDS[ls]:=...}`` are found by ``mentions``."""


def rebinding(words: Sequence[Word]) -> str | None:
    """Why the simple command ``words`` (program first) rebinds what a name runs, or None."""
    for word in words:  # ``: ${BASH_CMDS[ls]:=/usr/bin/rm}``, ``printf -v BASH_CMDS[ls]``
        why = mentions(word.text)
        if why:
            return why
    if not words or words[0].dynamic:
        return None
    name = program_name(words[0].text)
    entry = REBINDS.get(name)
    if entry is not None:
        why = entry.why(name, words[1:])
        if why:
            return why
    return None


_RAW = re.compile(r"(?<![\w-])(hash|enable|alias|expand_aliases)(?![\w-])|" + _MENTION.pattern)


def raw_rebinding(text: str) -> str | None:
    """For a command that cannot be parsed: why its text, quotes and backslashes removed, may rebind."""
    found = _RAW.search(re.sub(r"['\"\\]", "", text))
    return f"it may rebind what a name runs ({found.group(0)})" if found else None
