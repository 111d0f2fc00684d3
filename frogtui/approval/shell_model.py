"""What the shell analysis produces: the simple commands a Bash command runs (``SimpleCommand``),
the whole parse (``ShellAnalysis``), and the immutable ``Scope`` the walk passes down."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from frogtui.approval.shell_effects import Target
from frogtui.approval.shell_words import INPUT_MARK, Word

INPUT_WORD = Word(INPUT_MARK, dynamic=True)
"""Appended to a command that gets more words at run time (``xargs``)."""


ROOT_CWD = Word("")
"""The working folder of a command that did not ``cd``: the repository root."""


@dataclass(frozen=True)
class SimpleCommand:
    """One command the shell will run.

    Attributes:
        words: Program first, wrappers removed (``sudo env X=1 pytest -q`` -> ``pytest -q``).
        via: The wrappers it ran through, outermost first.
        writes: Files it writes: redirections, ``tee`` and the known file-changing programs.
        reads: Files redirected into it (``< file``).
        assigns: Variables set for it (``X=1 cmd``, ``env X=1 cmd``) or set on their own.
        cwd: Its working folder relative to the repository root (``Word("")`` is the root), as far
            as ``cd`` can be followed; None when unknown.
        opaque: Why what it runs cannot be known before it runs (a rule may then never allow it).
        text: The source text of the command.
    """

    words: tuple[Word, ...]
    via: tuple[str, ...] = ()
    writes: tuple[Target, ...] = ()
    reads: tuple[Word, ...] = ()
    assigns: tuple[str, ...] = ()
    cwd: Word | None = ROOT_CWD
    opaque: str | None = None
    text: str = ""

    @property
    def program(self) -> str:
        return self.words[0].text if self.words else ""


@dataclass(frozen=True)
class ShellAnalysis:
    """The parse of one Bash command.

    Attributes:
        command: The command as given.
        commands: Every simple command, in the order they appear.
        error: Why it could not be parsed (the policy asks), else None.
        download_to_shell: Set when a download is piped or handed to a shell (the floor denies).
        dotglob: The command may make ``*`` match names starting with a dot (``shopt -s dotglob``,
            ``GLOBIGNORE=``), so that ``rm -rf *`` reaches ``.git``.
    """

    command: str
    commands: tuple[SimpleCommand, ...] = ()
    error: str | None = None
    download_to_shell: str | None = None
    dotglob: bool = False


@dataclass(frozen=True)
class Scope:
    """Where the walk is: passed down, never changed in place.

    Attributes:
        source: The text the parse tree's positions refer to.
        via: The wrappers the commands here run through, outermost first.
        depth: How many shells deep (``bash -c`` inside ``bash -c``...).
        cwd: The working folder (see ``SimpleCommand.cwd``).
    """

    source: str
    via: tuple[str, ...] = ()
    depth: int = 0
    cwd: Word | None = ROOT_CWD

    def text(self, node: Any) -> str:
        start, end = node.pos
        return self.source[start:end]
