"""Shell analysis: a command string -> the simple commands it will run, with what each one writes.

A real parser (bashlex) splits the command across ``;`` ``&&`` ``||`` ``|`` and newlines, looks
inside ``( )``, ``{ }``, ``$( )``, backticks and ``<( )``, and the wrappers of ``shell_wrappers``
are looked through (``sudo``, ``env``, ``xargs``, ``find -exec``, ``bash -c``, ``eval``...). What
cannot be parsed is reported as an error so that the policy asks. Pure: no file is looked at.

The walk passes an immutable ``Scope`` down (the text being parsed, the wrappers it runs through,
the nesting depth and the working folder) and gets the scope after each node back, so that a
``cd`` is followed to the commands after it and never leaks out of a subshell. What it finds is
collected in one ``_Findings``.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field, replace
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
from frogtui.approval.shell_model import INPUT_WORD, ROOT_CWD, Scope, ShellAnalysis, SimpleCommand
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
COMMAND_VARIABLES = frozenset(
    {"GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_PAGER", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
     "SSH_ASKPASS", "GIT_PROXY_COMMAND", "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE"}
)
"""Variables whose value is a command a later program runs: their values are analysed as commands."""


@dataclass
class _Findings:
    """What the walk found so far (only the walk adds to it)."""

    whole: str
    commands: list[SimpleCommand] = field(default_factory=list)
    download: str | None = None
    fetched: set[str] = field(default_factory=set)
    dotglob: bool = False
    consts: dict[str, str] = field(default_factory=dict)


def analyze(command: str) -> ShellAnalysis:
    """Parse ``command`` into the simple commands it runs. Never raises for any input text."""
    if "\x00" in command:
        return ShellAnalysis(command, error="the command contains a NUL character")
    if not command.strip():
        return ShellAnalysis(command, error="the command is empty")
    walk = _Walk(_Findings(command))
    try:
        walk.script(command, Scope(command))
    except Unparseable as err:
        return ShellAnalysis(command, error=str(err))
    except RecursionError:
        return ShellAnalysis(command, error="the command nests too deeply to analyse")
    found = walk.found
    if not found.commands and not _only_comments(command):
        return ShellAnalysis(command, error="no command could be found in it (bash would likely reject it)")
    return ShellAnalysis(command, tuple(found.commands), download_to_shell=found.download, dotglob=found.dotglob)


def _only_comments(command: str) -> bool:
    """True when every non-blank line is a ``#`` comment (a command that runs nothing)."""
    return all(line.lstrip().startswith("#") for line in command.splitlines() if line.strip())


class _Walk:
    """The bashlex walk. Every method takes the ``Scope`` it runs in; those that can change the
    working folder return the scope after them."""

    def __init__(self, found: _Findings) -> None:
        self.found = found

    # entry points ---------------------------------------------------------------------------
    def script(self, text: str, scope: Scope) -> Scope:
        """Walk ``text`` (a whole command, or one a wrapper runs) in ``scope``; the scope after it."""
        if scope.depth > MAX_DEPTH:
            raise Unparseable("the command nests shells too deeply to analyse")
        if scope.depth > 0:
            text = text.replace(HOME_MARK, "$HOME").replace(PWD_MARK, "$PWD").replace(TMP_MARK, "$TMPDIR")
        if "\x00" in text and scope.depth > 0:
            raise Unparseable("a nested command contains a NUL character")
        nodes, source = parse_shell(text)
        inner = replace(scope, source=source)
        for node in nodes:
            inner = self.visit(node, inner)
        return replace(scope, cwd=inner.cwd)

    def nested(self, text: str, label: str, scope: Scope) -> None:
        """Walk a command another program runs (``bash -c``, ``git -c core.pager=``...): one level
        deeper, through ``label``; its ``cd`` stays inside it."""
        self.script(text, replace(scope, via=(*scope.via, label), depth=scope.depth + 1))

    def visit(self, node: Any, scope: Scope) -> Scope:
        kind = node.kind
        if kind in ("list", "pipeline"):
            return self.sequence(node, scope)
        if kind == "command":
            return self.command(node, scope)
        if kind == "compound":
            return self.compound(node, scope)
        if kind in ("if", "for", "while", "until", "function"):
            for part in node.parts:
                if part.kind == "word":
                    self.word(part, scope)
                elif part.kind != "reservedword":
                    scope = self.visit(part, scope)
            return scope
        if kind in ("operator", "pipe", "reservedword"):
            return scope
        raise Unparseable(f"uses a shell construct the analyser does not support ({kind})")

    # structure ------------------------------------------------------------------------------
    def sequence(self, node: Any, scope: Scope) -> Scope:
        """A list (``a; b && c``) or a pipeline (``a | b``): each part in the scope the one before
        left; in a pipeline, a download handed to a script runner is noted."""
        downloader = ""
        for part in node.parts:
            if part.kind in ("operator", "pipe", "reservedword"):
                continue
            before = len(self.found.commands)
            scope = self.visit(part, scope)
            if node.kind != "pipeline":
                continue
            produced = [c for c in self.found.commands[before:] if c.words]
            if downloader:
                runner = next((c for c in produced if is_script_runner(c.program)), None)
                if runner is not None:
                    self.found.download = self.found.download or f"{downloader} | {runner.program}"
            found = next((c for c in produced if program_name(c.program) in DOWNLOADERS), None)
            if found is not None:
                downloader = found.program
        return scope

    def compound(self, node: Any, scope: Scope) -> Scope:
        subshell = bool(node.list) and node.list[0].kind == "reservedword" and node.list[0].word == "("
        after = scope
        for part in node.list:
            if part.kind != "reservedword":
                after = self.visit(part, after)
        if subshell:
            after = scope
        redirects = getattr(node, "redirects", None) or []
        if redirects:
            writes, reads, opaque = self.redirects(redirects, after)
            self.record(SimpleCommand((), after.via, tuple(writes), tuple(reads), cwd=after.cwd, opaque=opaque, text=scope.text(node)))
        return after

    def command(self, node: Any, scope: Scope) -> Scope:
        assigns: list[str] = []
        words: list[Word] = []
        fetches = False
        redirects: list[Any] = []
        for part in node.parts:
            if part.kind == "assignment":
                assigns.append(part.word.split("=", 1)[0])
                word, _ = self.word(part, scope)
                self.command_value(word, scope)
            elif part.kind == "word":
                word, fetched = self.word(part, scope)
                words += self.braces(part, word, scope)
                fetches = fetches or fetched
            elif part.kind == "redirect":
                redirects.append(part)
            else:
                raise Unparseable(f"uses a shell construct the analyser does not support ({part.kind})")
        writes, reads, opaque = self.redirects(redirects, scope)
        if not words:
            self.remember(node, scope)
        before = len(self.found.commands)
        scope = self.emit(tuple(words), scope, writes=tuple(writes), reads=tuple(reads), assigns=tuple(assigns), opaque=opaque, text=scope.text(node))
        if fetches and any(is_script_runner(c.program) for c in self.found.commands[before:]):
            self.found.download = self.found.download or f"{self.found.commands[before].program} runs a download"
        return scope

    # one command ----------------------------------------------------------------------------
    def emit(
        self, words: tuple[Word, ...], scope: Scope, *, writes: tuple[Target, ...], reads: tuple[Word, ...], assigns: tuple[str, ...], opaque: str | None, text: str
    ) -> Scope:
        """Record one simple command, looking through its wrappers; the scope after it."""
        via, cwd = scope.via, scope.cwd
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
                self.command_value(setting, scope)
            if step.script is not None:
                writes = (*writes, *step.writes)
                if writes or reads:
                    self.record(SimpleCommand((), via, writes, reads, assigns, cwd, None, text))
                self.nested(step.script.text, step.label, replace(scope, via=via))
                return scope
            via, assigns, writes = (*via, step.label), (*assigns, *step.assigns), (*writes, *step.writes)
            appends = appends or step.appends_input
            cwd = None if step.cwd_unknown else cwd
            words = step.inner
        if appends:
            words = (*words, INPUT_WORD)
        if words and not opaque:
            opaque = _opaque_reason(words) or _odd_target(writes, reads)
        if words and words[0].has_glob and not words[0].dynamic:
            # ``/bin/r? -rf /``: the program is whatever the pattern finds; its operands may be written
            writes = (*writes, *(Target(w, f"{words[0].text} (a pattern)") for w in words[1:] if not w.text.startswith("-")))
        if words and program_name(words[0].text) == "git":
            for key, value in git_subcommand(words[1:])[1]:
                if git_command_key(key) and value:
                    self.nested(value.removeprefix("!"), f"git -c {key}", scope)
        self.record(SimpleCommand(words, via, (*writes, *write_targets(words)), reads, assigns, cwd, opaque, text))
        if words and words[0].text in ("cd", "pushd", "popd"):
            return replace(scope, cwd=_changed_dir(words, scope.cwd))
        return scope

    def remember(self, node: Any, scope: Scope) -> None:
        """Remember ``X=value`` (a fixed value, set once in the whole command) so that a later
        ``$X`` is known: ``X=.git; rm -rf $X`` deletes ``.git``."""
        whole = self.found.whole
        for part in node.parts:
            if part.kind != "assignment" or "+=" in part.word.split("=", 1)[0] + "=":
                continue
            name = part.word.split("=", 1)[0]
            word, _ = self.word(part, scope)
            value = word.text.split("=", 1)[1]
            once = len(re.findall(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"\+?=", whole)) == 1
            rebinds = re.search(r"\b(read|for|export|declare|typeset|local|readonly|let|getopts|mapfile|readarray|printf|unset|set)\b", whole)
            if once and not rebinds and not word.dynamic and "\x00" not in value.replace(HOME_MARK, "").replace(PWD_MARK, "").replace(TMP_MARK, ""):
                self.found.consts[name] = value

    def command_value(self, word: Word, scope: Scope) -> None:
        """Parse the value of ``GIT_SSH_COMMAND=...``, ``PAGER=...`` and the like: a command that a
        later program will run."""
        name, sep, value = word.text.partition("=")
        if sep and name in COMMAND_VARIABLES and value.strip():
            if word.dynamic:
                raise Unparseable(f"{name} is set to a command only known when it runs")
            self.nested(value, f"{name}=", scope)

    def record(self, command: SimpleCommand) -> None:
        found = self.found
        if command.words and command.program == "shopt" and any(w.dynamic or "dotglob" in w.text or w.text == "-o" for w in command.words[1:]):
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

    # words and redirections -----------------------------------------------------------------
    def word(self, node: Any, scope: Scope) -> tuple[Word, bool]:
        """The word ``node`` stands for, and whether a substitution in it downloads something.
        Substitutions are walked as commands (in a subshell: their ``cd`` stays inside)."""
        dynamic = fetches = False
        consts = self.found.consts
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                dynamic = True
                before = len(self.found.commands)
                self.visit(part.command, scope)
                fetches = fetches or any(program_name(c.program) in DOWNLOADERS for c in self.found.commands[before:] if c.words)
            elif part.kind == "parameter":
                name = getattr(part, "value", None)
                dynamic = dynamic or (name not in MARKS and name not in consts)
            elif part.kind == "tilde":
                dynamic = dynamic or part.value != "~"
            else:
                dynamic = True
        text = node.word
        if not getattr(node, "parts", None):
            text = _dequote(scope.text(node), node.word)
        else:
            for name, value in consts.items():
                text = re.sub(r"\$\{" + name + r"\}|\$" + name + r"(?![A-Za-z0-9_])", lambda _m, v=value: v, text)
            for name, mark in MARKS.items():
                text = text.replace("${" + name + "}", mark).replace("$" + name, mark)
            if text.startswith("~") and (len(text) == 1 or text[1] == "/"):
                text = HOME_MARK + text[1:]
        return Word(text, dynamic), fetches

    def braces(self, node: Any, word: Word, scope: Scope) -> list[Word]:
        """The words bash's brace expansion makes of ``word`` (``{rm,-rf,/}`` -> ``rm -rf /``)."""
        raw = scope.text(node)
        if "{" not in raw or "}" not in raw or word.dynamic:
            return [word]
        if any(ch in raw for ch in "'\"\\$`"):
            return [Word(word.text, dynamic=True)] if BRACE.search(raw) else [word]
        try:
            expanded = brace_expand(word.text)
        except TooManyWords as err:
            raise Unparseable(str(err)) from None
        return [Word(text) for text in expanded]

    def redirects(self, nodes: list[Any], scope: Scope) -> tuple[list[Target], list[Word], str | None]:
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
            word, _ = self.word(target, scope)
            if kind == "<<<":
                continue
            if ">" in kind:
                writes.append(Target(word, kind))
            if "<" in kind:
                reads.append(word)
        return writes, reads, opaque


def _changed_dir(words: tuple[Word, ...], cwd: Word | None) -> Word | None:
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
    return Word(f"{cwd.text}/{operands[0].text}".lstrip("/") if cwd.text else operands[0].text)


def _opaque_reason(words: tuple[Word, ...]) -> str | None:
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


def _dequote(raw: str, fallback: str) -> str:
    try:
        tokens = shlex.split(raw)
    except ValueError:
        return str(fallback)
    return tokens[0] if len(tokens) == 1 else str(fallback)


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
