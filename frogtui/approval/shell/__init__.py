"""Shell analysis: a Bash command -> the simple commands it runs, each with its ``Effects`` (what
it reads, writes, runs). The entry is ``analyze``; the rest of this module is the vocabulary its
result speaks (``ShellAnalysis``, ``SimpleCommand``, ``Effects``, ``Target``, ``Word``), for the
facts and the policy. Pure: no file is looked at.

Inside: ``parse`` (bashlex, its tables from ``bashlex_tables``), ``walk`` (the walk of the parse
tree), ``wrappers`` (what ``sudo``, ``env``, ``bash -c``... run), ``words`` and ``text`` (words,
quoting, expansions), ``braces``, ``model`` (the result's types), ``effects`` (targets and the
programs' operand conventions), and the effect model: ``programs`` (the table, ``PROGRAMS``),
``special`` (the one table of the programs with an analyser of their own, ``SPECIAL``; the
analysers are in ``git`` and ``scripts``), ``command_effects`` (which of the two applies) and
``known`` (the options the read-only default knows). Each entry keeps its examples beside it.
"""

from __future__ import annotations

# isort: off
# first, before shell.parse imports bashlex: its parser tables come from the cache, not rebuilt
from frogtui.approval.shell.bashlex_tables import bashlex  # noqa: F401
# isort: on
from frogtui.approval.shell.effects import (
    AFTER_FIRST_OPERAND,
    ALL_OPERANDS,
    LAST_OPERAND,
    SPECIAL_WRITE_TARGETS,
    Target,
    git_subcommand,
    is_script_runner,
    program_name,
    symlinks_made,
)
from frogtui.approval.shell.model import ROOT_CWD, ShellAnalysis, SimpleCommand
from frogtui.approval.shell.programs import Effects
from frogtui.approval.shell.walk import analyze
from frogtui.approval.shell.words import (
    FOUND_MARK,
    HOME_MARK,
    PWD_MARK,
    TMP_MARK,
    USER_MARK,
    Word,
    display,
    embedded_paths,
)

__all__ = [
    "AFTER_FIRST_OPERAND",
    "ALL_OPERANDS",
    "FOUND_MARK",
    "HOME_MARK",
    "LAST_OPERAND",
    "PWD_MARK",
    "ROOT_CWD",
    "SPECIAL_WRITE_TARGETS",
    "TMP_MARK",
    "USER_MARK",
    "Effects",
    "ShellAnalysis",
    "SimpleCommand",
    "Target",
    "Word",
    "analyze",
    "display",
    "embedded_paths",
    "git_subcommand",
    "is_script_runner",
    "program_name",
    "symlinks_made",
]
