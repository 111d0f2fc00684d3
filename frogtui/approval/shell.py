"""Shell analysis: a command string -> the simple commands it will run, with what each one writes.

A real parser (bashlex) splits the command across ``;`` ``&&`` ``||`` ``|`` and newlines, looks
inside ``( )``, ``{ }``, ``$( )``, backticks and ``<( )``, and the wrappers of ``shell_wrappers``
are looked through (``sudo``, ``env``, ``xargs``, ``find -exec``, ``bash -c``, ``eval``...). What
cannot be parsed is reported as an error so that the policy asks. Pure: no file is looked at.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from frogtui.approval.shell_braces import BRACE, TooManyWords, brace_expand
from frogtui.approval.shell_effects import (
    DOWNLOADERS,
    Target,
    git_command_key,
    git_subcommand,
    is_script_runner,
    program_name,
    write_targets,
)
from frogtui.approval.shell_parse import Unparseable, parse_shell
from frogtui.approval.shell_words import (
    HOME_MARK,
    MARKS,
    PWD_MARK,
    TMP_MARK,
    Word,
    odd_characters,
)
from frogtui.approval.shell_wrappers import unwrap

MAX_DEPTH = 6
"""How deep ``bash -c "bash -c '...'"`` may nest before the command is called unparseable."""
ROOT_CWD = Word("")
"""The working folder of a command that did not ``cd``: the repository root."""
INPUT_WORD = Word("\x00input", dynamic=True)
"""Appended to a command that gets more words at run time (``xargs``)."""
COMMAND_VARIABLES = frozenset(
    {"GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_PAGER", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
     "SSH_ASKPASS", "GIT_PROXY_COMMAND", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE"}
)
"""Variables whose value is a command a later program runs: their values are analysed as commands."""


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




def analyze(command: str) -> ShellAnalysis:
    """Parse ``command`` into the simple commands it runs. Never raises for any input text."""
    if "\x00" in command:
        return ShellAnalysis(command, error="the command contains a NUL character")
    if not command.strip():
        return ShellAnalysis(command, error="the command is empty")
    walker = _Walker()
    walker.whole = command
    try:
        walker.script(command, depth=0)
    except Unparseable as err:
        return ShellAnalysis(command, error=str(err))
    except RecursionError:
        return ShellAnalysis(command, error="the command nests too deeply to analyse")
    if not walker.commands and not _only_comments(command):
        return ShellAnalysis(command, error="no command could be found in it (bash would likely reject it)")
    return ShellAnalysis(command, tuple(walker.commands), download_to_shell=walker.download, dotglob=walker.dotglob)


def _only_comments(command: str) -> bool:
    """True when every non-blank line is a ``#`` comment (a command that runs nothing)."""
    return all(line.lstrip().startswith("#") for line in command.splitlines() if line.strip())


class _Walker:
    def __init__(self) -> None:
        self.commands: list[SimpleCommand] = []
        self.download: str | None = None
        self.fetched: set[str] = set()
        self.cwd: Word | None = Word("")
        self.via: tuple[str, ...] = ()
        self.source = ""
        self.depth = 0
        self.dotglob = False
        self.consts: dict[str, str] = {}
        self.whole = ""

    # entry points ---------------------------------------------------------------------------
    def script(self, text: str, depth: int, via: tuple[str, ...] = ()) -> None:
        if depth > MAX_DEPTH:
            raise Unparseable("the command nests shells too deeply to analyse")
        if depth > 0:
            text = text.replace(HOME_MARK, "$HOME").replace(PWD_MARK, "$PWD").replace(TMP_MARK, "$TMPDIR")
        if "\x00" in text and depth > 0:
            raise Unparseable("a nested command contains a NUL character")
        saved = (self.source, self.via, self.depth)
        nodes, self.source = parse_shell(text)
        self.via, self.depth = via, depth
        try:
            for node in nodes:
                self.visit(node)
        finally:
            self.source, self.via, self.depth = saved

    def visit(self, node: Any) -> None:
        kind = node.kind
        if kind == "list":
            for part in node.parts:
                if part.kind != "operator":
                    self.visit(part)
        elif kind == "pipeline":
            self.pipeline(node)
        elif kind == "command":
            self.command(node)
        elif kind == "compound":
            self.compound(node)
        elif kind in ("if", "for", "while", "until", "function"):
            for part in node.parts:
                if part.kind == "word":
                    self.word(part)
                elif part.kind != "reservedword":
                    self.visit(part)
        elif kind in ("operator", "pipe", "reservedword"):
            pass
        else:
            raise Unparseable(f"uses a shell construct the analyser does not support ({kind})")

    # structure ------------------------------------------------------------------------------
    def pipeline(self, node: Any) -> None:
        downloader = ""
        for part in node.parts:
            if part.kind in ("pipe", "reservedword"):
                continue
            before = len(self.commands)
            self.visit(part)
            produced = [c for c in self.commands[before:] if c.words]
            if downloader:
                runner = next((c for c in produced if is_script_runner(c.program)), None)
                if runner is not None:
                    self.download = self.download or f"{downloader} | {runner.program}"
            found = next((c for c in produced if program_name(c.program) in DOWNLOADERS), None)
            if found is not None:
                downloader = found.program

    def compound(self, node: Any) -> None:
        subshell = bool(node.list) and node.list[0].kind == "reservedword" and node.list[0].word == "("
        saved_cwd = self.cwd
        for part in node.list:
            if part.kind != "reservedword":
                self.visit(part)
        if subshell:
            self.cwd = saved_cwd
        redirects = getattr(node, "redirects", None) or []
        if redirects:
            writes, reads, opaque = self.redirects(redirects)
            self.record(SimpleCommand((), self.via, tuple(writes), tuple(reads), cwd=self.cwd, opaque=opaque, text=self._text(node)))

    def command(self, node: Any) -> None:
        assigns: list[str] = []
        words: list[Word] = []
        fetches = False
        redirects: list[Any] = []
        for part in node.parts:
            if part.kind == "assignment":
                assigns.append(part.word.split("=", 1)[0])
                word, _ = self.word(part)
                self.command_value(word)
            elif part.kind == "word":
                word, fetched = self.word(part)
                words += self.braces(part, word)
                fetches = fetches or fetched
            elif part.kind == "redirect":
                redirects.append(part)
            else:
                raise Unparseable(f"uses a shell construct the analyser does not support ({part.kind})")
        writes, reads, opaque = self.redirects(redirects)
        if not words:
            self.remember(node)
        before = len(self.commands)
        self.emit(tuple(words), writes=tuple(writes), reads=tuple(reads), assigns=tuple(assigns), opaque=opaque, text=self._text(node))
        if fetches and any(is_script_runner(c.program) for c in self.commands[before:]):
            self.download = self.download or f"{self.commands[before].program} runs a download"

    # one command ----------------------------------------------------------------------------
    def emit(self, words: tuple[Word, ...], *, writes: tuple[Target, ...], reads: tuple[Word, ...], assigns: tuple[str, ...], opaque: str | None, text: str) -> None:
        via, cwd = self.via, self.cwd
        appends = False
        while words and opaque is None:
            step = unwrap(words)
            if step is None:
                break
            if step.outer:
                self.record(SimpleCommand(step.outer, via, tuple(write_targets(step.outer)), (), assigns, cwd, None, text))
            if step.opaque:
                opaque = step.opaque
                break
            for setting in words[1 : len(words) - len(step.inner)] if step.label == "env" else ():
                self.command_value(setting)
            if step.script is not None:
                writes = (*writes, *step.writes)
                if writes or reads:
                    self.record(SimpleCommand((), via, writes, reads, assigns, cwd, None, text))
                saved_cwd = self.cwd
                self.script(step.script.text, self.depth + 1, (*via, step.label))
                self.cwd = saved_cwd
                return
            via, assigns, writes = (*via, step.label), (*assigns, *step.assigns), (*writes, *step.writes)
            appends = appends or step.appends_input
            cwd = None if step.cwd_unknown else cwd
            words = step.inner
        if appends:
            words = (*words, INPUT_WORD)
        if words and not opaque:
            opaque = self.opaque_reason(words) or _odd_target(writes, reads)
        if words and words[0].has_glob and not words[0].dynamic:
            # ``/bin/r? -rf /``: the program is whatever the pattern finds; its operands may be written
            writes = (*writes, *(Target(w, f"{words[0].text} (a pattern)") for w in words[1:] if not w.text.startswith("-")))
        if words and program_name(words[0].text) == "git":
            for key, value in git_subcommand(words[1:])[1]:
                if git_command_key(key) and value:
                    self.nested(value.removeprefix("!"), f"git -c {key}")
        command = SimpleCommand(words, via, (*writes, *write_targets(words)), reads, assigns, cwd, opaque, text)
        self.record(command)
        if words and words[0].text in ("cd", "pushd", "popd"):
            self.change_dir(words)

    def remember(self, node: Any) -> None:
        """Remember ``X=value`` (a fixed value, set once in the whole command) so that a later
        ``$X`` is known: ``X=.git; rm -rf $X`` deletes ``.git``."""
        for part in node.parts:
            if part.kind != "assignment" or "+=" in part.word.split("=", 1)[0] + "=":
                continue
            name = part.word.split("=", 1)[0]
            word, _ = self.word(part)
            value = word.text.split("=", 1)[1]
            once = len(re.findall(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"\+?=", self.whole)) == 1
            rebinds = re.search(r"\b(read|for|export|declare|typeset|local|readonly|let|getopts|mapfile|readarray|printf|unset|set)\b", self.whole)
            if once and not rebinds and not word.dynamic and "\x00" not in value.replace(HOME_MARK, "").replace(PWD_MARK, "").replace(TMP_MARK, ""):
                self.consts[name] = value

    def command_value(self, word: Word) -> None:
        """Parse the value of ``GIT_SSH_COMMAND=...``, ``PAGER=...`` and the like: a command that a
        later program will run."""
        name, sep, value = word.text.partition("=")
        if sep and name in COMMAND_VARIABLES and value.strip():
            if word.dynamic:
                raise Unparseable(f"{name} is set to a command only known when it runs")
            self.nested(value, f"{name}=")

    def nested(self, text: str, label: str) -> None:
        saved_cwd = self.cwd
        self.script(text, self.depth + 1, (*self.via, label))
        self.cwd = saved_cwd

    def record(self, command: SimpleCommand) -> None:
        if command.words and command.program == "shopt" and any(w.dynamic or "dotglob" in w.text or w.text == "-o" for w in command.words[1:]):
            self.dotglob = True
        if "GLOBIGNORE" in command.assigns:
            self.dotglob = True
        if command.words and is_script_runner(command.program):
            operands = [w for w in command.words[1:] if not w.text.startswith("-")]
            if operands and _norm(operands[0].text) in self.fetched:
                self.download = self.download or f"{command.program} runs the downloaded {operands[0].text}"
        if command.words and _norm(command.program) in self.fetched:
            self.download = self.download or f"runs the downloaded {command.program}"
        if command.words and program_name(command.program) in DOWNLOADERS:
            self.fetched.update(_norm(t.word.text) for t in command.writes)
        self.commands.append(command)

    @staticmethod
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

    def change_dir(self, words: tuple[Word, ...]) -> None:
        operands = [w for w in words[1:] if not w.text.startswith("-") or w.text == "-"]
        if words[0].text == "popd" or (operands and (operands[0].dynamic or operands[0].text == "-")):
            self.cwd = None
        elif not operands:
            self.cwd = Word(HOME_MARK)
        elif operands[0].text.startswith(("/", *MARKS.values())) or self.cwd is None:
            self.cwd = operands[0] if operands[0].text.startswith(("/", *MARKS.values())) else None
        else:
            self.cwd = Word(f"{self.cwd.text}/{operands[0].text}".lstrip("/") if self.cwd.text else operands[0].text)

    # words and redirections -----------------------------------------------------------------
    def word(self, node: Any) -> tuple[Word, bool]:
        dynamic = fetches = False
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                dynamic = True
                before = len(self.commands)
                saved_cwd = self.cwd
                self.visit(part.command)
                self.cwd = saved_cwd
                fetches = fetches or any(program_name(c.program) in DOWNLOADERS for c in self.commands[before:] if c.words)
            elif part.kind == "parameter":
                name = getattr(part, "value", None)
                dynamic = dynamic or (name not in MARKS and name not in self.consts)
            elif part.kind == "tilde":
                dynamic = dynamic or part.value != "~"
            else:
                dynamic = True
        text = node.word
        if not getattr(node, "parts", None):
            text = self._dequote(node)
        else:
            for name, value in self.consts.items():
                text = re.sub(r"\$\{" + name + r"\}|\$" + name + r"(?![A-Za-z0-9_])", lambda _m, v=value: v, text)
            for name, mark in MARKS.items():
                text = text.replace("${" + name + "}", mark).replace("$" + name, mark)
            if text.startswith("~") and (len(text) == 1 or text[1] == "/"):
                text = HOME_MARK + text[1:]
        return Word(text, dynamic), fetches

    def braces(self, node: Any, word: Word) -> list[Word]:
        """The words bash's brace expansion makes of ``word`` (``{rm,-rf,/}`` -> ``rm -rf /``)."""
        raw = self._text(node)
        if "{" not in raw or "}" not in raw or word.dynamic:
            return [word]
        if any(ch in raw for ch in "'\"\\$`"):
            return [Word(word.text, dynamic=True)] if BRACE.search(raw) else [word]
        try:
            expanded = brace_expand(word.text)
        except TooManyWords as err:
            raise Unparseable(str(err)) from None
        return [Word(text) for text in expanded]

    def redirects(self, nodes: list[Any]) -> tuple[list[Target], list[Word], str | None]:
        writes: list[Target] = []
        reads: list[Word] = []
        opaque: str | None = None
        for node in nodes:
            kind = node.type
            heredoc = getattr(node, "heredoc", None)
            if heredoc is not None and ("$(" in heredoc.value or "`" in heredoc.value):
                opaque = "a here-document runs commands when it is expanded"
            target = node.output
            if kind in ("<<", "<<-") or not hasattr(target, "kind"):
                continue
            word, _ = self.word(target)
            if kind == "<<<":
                continue
            if ">" in kind:
                writes.append(Target(word, kind))
            if "<" in kind:
                reads.append(word)
        return writes, reads, opaque

    def _text(self, node: Any) -> str:
        start, end = node.pos
        return self.source[start:end]

    def _dequote(self, node: Any) -> str:
        raw = self._text(node)
        try:
            tokens = shlex.split(raw)
        except ValueError:
            return str(node.word)
        return tokens[0] if len(tokens) == 1 else str(node.word)


def _odd_target(writes: tuple[Target, ...], reads: tuple[Word, ...]) -> str | None:
    for word in (*(t.word for t in writes), *reads):
        odd = odd_characters(word.text)
        if odd and "non-ASCII" not in odd:
            return f"a redirection target {odd}"
    return None


def _norm(text: str) -> str:
    while text.startswith("./"):
        text = text[2:]
    return text
