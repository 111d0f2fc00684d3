"""What the shell analysis produces: what one command does (``Effects``), the simple commands a
Bash command runs (``SimpleCommand``, each holding its ``Effects``), the whole parse
(``ShellAnalysis``), and the immutable ``Scope`` the walk passes down."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frogtui.approval.shell.effects import (
    DOWNLOADERS,
    Target,
    is_script_runner,
    program_name,
)
from frogtui.approval.shell.words import INPUT_MARK, Word
from frogtui.approval.shell.wrappers import AS_ANOTHER_USER

INPUT_WORD = Word(INPUT_MARK, dynamic=True)
"""Appended to a command that gets more words at run time (``xargs``)."""


ROOT_CWD = Word("")
"""The working folder of a command that did not ``cd``: the repository root."""


@dataclass(frozen=True, kw_only=True)
class Effects:
    """What one simple command does, as far as the gate cares.

    Attributes:
        writes: Files it writes or deletes (its own and beyond: see ``Target.beyond``).
        reads: Files it reads (``under``: a folder read recursively).
        places: Folders a program is pointed at that must stay inside the repository (``git -C``).
        runs: Commands it runs, as ``(shell text, label)``; they are analysed as commands.
        opaque: Why what it runs is only known when it runs (never allowed by a rule).
        assigns: Variables it sets (``printf -v PATH``, ``export``, ``read``).
        floor: Why the floor denies it whatever the rules say (``crontab FILE``).
        read_only: Its every effect is reading files and printing.
    """

    writes: tuple[Target, ...] = ()
    reads: tuple[Target, ...] = ()
    places: tuple[Target, ...] = ()
    runs: tuple[tuple[str, str], ...] = ()
    opaque: str | None = None
    assigns: tuple[str, ...] = ()
    floor: str | None = None
    read_only: bool = False

    def around(self, own: Effects) -> Effects:
        """These effects (the program's, from the effect model) with ``own`` before them: what the
        command's words already say (its redirections, ``X=1 cmd``, a wrapper's ``tee``). Its own
        opaqueness wins, and a command that is opaque on its own is never read-only."""
        return Effects(
            writes=(*own.writes, *self.writes),
            reads=(*own.reads, *self.reads),
            places=self.places,
            runs=self.runs,
            opaque=own.opaque or self.opaque,
            assigns=(*own.assigns, *self.assigns),
            floor=self.floor,
            read_only=self.read_only and not own.opaque,
        )


@dataclass(frozen=True, kw_only=True)
class SimpleCommand:
    """One command the shell will run.

    Attributes:
        words: Program first, wrappers removed (``sudo env X=1 pytest -q`` -> ``pytest -q``).
        via: The wrappers it ran through, outermost first.
        effects: What it reads, writes, runs and sets: its redirections (``> f``, ``< f``), its
            assignments (``X=1 cmd``), the writes of the wrappers it ran through (``tee``) and
            what the effect model gives its words (``sort -o``, ``cat F``, ``grep -r X DIR``);
            ``Effects.read_only``: its every effect is reading files and printing.
        cwd: Its working folder relative to the repository root (``Word("")`` is the root), as far
            as ``cd`` can be followed; None when unknown.
        text: The source text of the command.
        stages: The words as written and after each wrapper was looked through (``sudo -n true``,
            ``true``): deny and ask rules match any of them (deny ``sudo *`` denies ``sudo -n true``).
        unknown_program: Which program runs is only known when it runs (``$CMD``, ``eval "$X"``,
            ``timeout $(...) ls``): it may be one a deny rule denies.
        as_written: For a command made unknown because another part of the same command rebinds
            what a name runs (``hash -p``…): the command as it was read before, for the narrow
            session rule an "always allow" stores (a later command is judged afresh).
    """

    words: tuple[Word, ...]
    via: tuple[str, ...] = ()
    effects: Effects = Effects()
    cwd: Word | None = ROOT_CWD
    text: str = ""
    stages: tuple[tuple[Word, ...], ...] = ()
    unknown_program: bool = False
    as_written: SimpleCommand | None = None

    @property
    def program(self) -> str:
        return self.words[0].text if self.words else ""

    @property
    def via_other_user(self) -> str:
        """The wrapper that runs it as another user (``sudo``), or ''."""
        return next((w.split(" ")[0] for w in self.via if w.split(" ")[0] in AS_ANOTHER_USER), "")


@dataclass(frozen=True, kw_only=True)
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
        rebinds: Why a part of it rebinds what a name runs (``hash -p``, ``BASH_CMDS``, an
            alias: ``shell.rebinds``), else None; every program of it is then only known when it
            runs (``SimpleCommand.unknown_program``).
    """

    command: str
    commands: tuple[SimpleCommand, ...] = ()
    error: str | None = None
    download_to_shell: str | None = None
    dotglob: bool = False
    hidden: tuple[ShellAnalysis, ...] = ()
    rebinds: str | None = None


@dataclass(frozen=True, kw_only=True)
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


@dataclass(kw_only=True)
class Findings:
    """What the walk found so far (only the walk adds to it, through ``record``)."""

    whole: str
    commands: list[SimpleCommand] = field(default_factory=list)
    download: str | None = None
    fetched: set[str] = field(default_factory=set)
    dotglob: bool = False
    consts: dict[str, str] = field(default_factory=dict)
    rebinds: str | None = None

    def record(self, command: SimpleCommand) -> None:
        found = self
        if (
            command.words
            and command.program == "shopt"
            and any(w.dynamic or "dotglob" in w.text or w.text == "-o" for w in command.words[1:])
        ):
            found.dotglob = True
        if "GLOBIGNORE" in command.effects.assigns:
            found.dotglob = True
        if command.words and is_script_runner(command.program):
            operands = [w for w in command.words[1:] if not w.text.startswith("-")]
            if operands and _norm(operands[0].text) in found.fetched:
                found.download = found.download or f"{command.program} runs the downloaded {operands[0].text}"
        if command.words and _norm(command.program) in found.fetched:
            found.download = found.download or f"runs the downloaded {command.program}"
        if command.words and program_name(command.program) in DOWNLOADERS:
            found.fetched.update(_norm(t.word.text) for t in command.effects.writes)
        found.commands.append(command)


def _norm(text: str) -> str:
    while text.startswith("./"):
        text = text[2:]
    return text
