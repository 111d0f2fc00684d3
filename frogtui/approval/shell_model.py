"""What the shell analysis produces: the simple commands a Bash command runs (``SimpleCommand``),
the whole parse (``ShellAnalysis``), and the immutable ``Scope`` the walk passes down."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frogtui.approval.shell_effects import (
    DOWNLOADERS,
    Target,
    is_script_runner,
    program_name,
)
from frogtui.approval.shell_words import INPUT_MARK, Word
from frogtui.approval.shell_wrappers import AS_ANOTHER_USER

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
        writes: Files it writes or deletes: redirections, ``tee``, the known file-changing programs
            and the options of the effect model (``sort -o``); ``Target.beyond`` marks those that
            are not the program's own behaviour.
        reads: Files it reads: redirected into it (``< file``) and the operands the effect model
            names (``cat F``; ``grep -r X DIR`` reads under ``DIR``).
        assigns: Variables set for it (``X=1 cmd``, ``env X=1 cmd``) or set on their own.
        cwd: Its working folder relative to the repository root (``Word("")`` is the root), as far
            as ``cd`` can be followed; None when unknown.
        opaque: Why what it runs cannot be known before it runs (a rule may then never allow it).
        text: The source text of the command.
        places: Folders it is pointed at that must stay inside the repository (``git -C``).
        floor: Why the floor denies it whatever the rules say (``crontab FILE``).
        read_only: Its every effect is reading files and printing (``shell_programs``).
        stages: The words as written and after each wrapper was looked through (``sudo -n true``,
            ``true``): deny and ask rules match any of them (deny ``sudo *`` denies ``sudo -n true``).
        unknown_program: Which program runs is only known when it runs (``$CMD``, ``eval "$X"``,
            ``timeout $(...) ls``): it may be one a deny rule denies.
    """

    words: tuple[Word, ...]
    via: tuple[str, ...] = ()
    writes: tuple[Target, ...] = ()
    reads: tuple[Target, ...] = ()
    assigns: tuple[str, ...] = ()
    cwd: Word | None = ROOT_CWD
    opaque: str | None = None
    text: str = ""
    places: tuple[Target, ...] = ()
    floor: str | None = None
    read_only: bool = False
    stages: tuple[tuple[Word, ...], ...] = ()
    unknown_program: bool = False

    @property
    def program(self) -> str:
        return self.words[0].text if self.words else ""

    @property
    def via_other_user(self) -> str:
        """The wrapper that runs it as another user (``sudo``), or ''."""
        return next((w.split(" ")[0] for w in self.via if w.split(" ")[0] in AS_ANOTHER_USER), "")


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
        hidden: For a command that cannot be parsed, the analyses of the pieces it could hide
            (its substitutions, the parts between separators): the floor still applies to them.
    """

    command: str
    commands: tuple[SimpleCommand, ...] = ()
    error: str | None = None
    download_to_shell: str | None = None
    dotglob: bool = False
    hidden: tuple[ShellAnalysis, ...] = ()


@dataclass(frozen=True)
class Scope:
    """Where the walk is: passed down, never changed in place.

    Attributes:
        source: The text the parse tree's positions refer to.
        via: The wrappers the commands here run through, outermost first.
        depth: How many shells deep (``bash -c`` inside ``bash -c``...).
        cwd: The working folder (see ``SimpleCommand.cwd``).
        stages: See below.
    """

    source: str
    via: tuple[str, ...] = ()
    depth: int = 0
    cwd: Word | None = ROOT_CWD
    stages: tuple[tuple[Word, ...], ...] = ()
    """The words of the commands that run the commands here (``bash -c '...'``, ``sudo bash -c``),
    for deny and ask rules (``SimpleCommand.stages``)."""

    def text(self, node: Any) -> str:
        start, end = node.pos
        return self.source[start:end]


@dataclass
class Findings:
    """What the walk found so far (only the walk adds to it, through ``record``)."""

    whole: str
    commands: list[SimpleCommand] = field(default_factory=list)
    download: str | None = None
    fetched: set[str] = field(default_factory=set)
    dotglob: bool = False
    consts: dict[str, str] = field(default_factory=dict)

    def record(self, command: SimpleCommand) -> None:
        found = self
        if (
            command.words
            and command.program == "shopt"
            and any(w.dynamic or "dotglob" in w.text or w.text == "-o" for w in command.words[1:])
        ):
            found.dotglob = True
        if "GLOBIGNORE" in command.assigns:
            found.dotglob = True
        if command.words and is_script_runner(command.program):
            operands = [w for w in command.words[1:] if not w.text.startswith("-")]
            if operands and _norm(operands[0].text) in found.fetched:
                found.download = found.download or f"{command.program} runs the downloaded {operands[0].text}"
        if command.words and _norm(command.program) in found.fetched:
            found.download = found.download or f"runs the downloaded {command.program}"
        if command.words and program_name(command.program) in DOWNLOADERS:
            found.fetched.update(_norm(t.word.text) for t in command.writes)
        found.commands.append(command)


def _norm(text: str) -> str:
    while text.startswith("./"):
        text = text[2:]
    return text
