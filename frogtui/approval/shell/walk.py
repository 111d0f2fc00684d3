"""Shell analysis: a command string -> the simple commands it will run, with what each one writes.

A real parser (bashlex) splits the command across ``;`` ``&&`` ``||`` ``|`` and newlines, looks
inside ``( )``, ``{ }``, ``$( )``, backticks and ``<( )``, and the wrappers of ``wrappers``
are looked through (``sudo``, ``env``, ``xargs``, ``find -exec``, ``bash -c``, ``eval``...). What
cannot be parsed is reported as an error so that the policy asks. Pure: no file is looked at.

The walk passes an immutable ``Scope`` down (the text being parsed, the wrappers it runs through,
the nesting depth and the working folder) and gets the scope after each node back, so that a
``cd`` is followed to the commands after it and never leaks out of a subshell. What it finds is
collected in one ``Findings``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from frogtui.approval.shell.braces import BRACE, TooManyWords, brace_expand
from frogtui.approval.shell.command_effects import program_effects
from frogtui.approval.shell.effects import (
    DOWNLOADERS,
    Target,
    git_command_key,
    git_subcommand,
    is_script_runner,
    program_name,
)
from frogtui.approval.shell.model import (
    INPUT_WORD,
    Effects,
    Findings,
    Scope,
    ShellAnalysis,
    SimpleCommand,
)
from frogtui.approval.shell.parse import Unparseable, parse_shell
from frogtui.approval.shell.rebinds import mentions, raw_rebinding, rebinding
from frogtui.approval.shell.text import (
    ansi_c_word,
    dequote,
    hidden_pieces,
    parameter_trouble,
    substitutions,
)
from frogtui.approval.shell.words import (
    HOME_MARK,
    MARKS,
    PWD_MARK,
    TMP_MARK,
    USER_HOME,
    Word,
    changed_dir,
    empty_backticks,
    home_marks,
    odd_target,
    opaque_reason,
    without_spans,
)
from frogtui.approval.shell.wrappers import unwrap

MAX_HIDDEN = 32
"""How many pieces of an unparseable command are analysed for what they could hide."""
MAX_DEPTH = 6
"""How deep ``bash -c "bash -c '...'"`` may nest before the command is called unparseable."""
COMMAND_VARIABLES = frozenset(
    "GIT_SSH_COMMAND GIT_SSH GIT_EDITOR GIT_PAGER GIT_SEQUENCE_EDITOR GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS GIT_PROXY_COMMAND PAGER "
    "MANPAGER SYSTEMD_PAGER EDITOR VISUAL PROMPT_COMMAND LESSOPEN LESSCLOSE".split()
)
"""Variables whose value is a command a later program runs: their values are analysed as commands."""


def analyze(command: str, *, salvage: bool = True) -> ShellAnalysis:
    """Parse ``command`` into the simple commands it runs. Never raises for any input text.

    When it cannot be parsed, the pieces it could hide are analysed on their own (``hidden``,
    unless ``salvage`` is off), so that the floor can still deny what they do."""
    if "\x00" in command:
        return ShellAnalysis(command=command, error="the command contains a NUL character")
    if not command.strip():
        return ShellAnalysis(command=command, error="the command is empty")
    walk = _Walk(Findings(whole=command))
    try:
        walk.script(command, Scope(source=command))
    except Unparseable as err:
        hidden = _hidden(command, salvage)
        rebinds = raw_rebinding(command) or next((p.rebinds for p in hidden if p.rebinds), None)
        return ShellAnalysis(command=command, error=str(err), hidden=hidden, rebinds=rebinds)
    except RecursionError:
        return ShellAnalysis(command=command, error="the command nests too deeply to analyse", rebinds=raw_rebinding(command))
    found = walk.found
    if not found.commands and not _only_comments(command):
        return ShellAnalysis(command=command, error="no command could be found in it (bash would likely reject it)")
    rebinds = found.rebinds or mentions(command)
    commands = tuple(_unknown(c, rebinds) for c in found.commands) if rebinds else tuple(found.commands)
    return ShellAnalysis(
        command=command, commands=commands, download_to_shell=found.download, dotglob=found.dotglob, rebinds=rebinds
    )


def _unknown(command: SimpleCommand, rebinds: str) -> SimpleCommand:
    """``command`` in a command that rebinds what a name runs: its program is only known when it
    runs, and nothing about it is proven (an allow rule or the read-only default no longer applies)."""
    if not command.words:
        return command
    why = f"which program a name runs is only known when it runs: {rebinds}"
    return replace(command, unknown_program=True, effects=replace(command.effects, opaque=command.effects.opaque or why, read_only=False),
                   as_written=command)


def _hidden(command: str, salvage: bool) -> tuple[ShellAnalysis, ...]:
    if not salvage:
        return ()
    pieces = (analyze(piece, salvage=False) for piece in hidden_pieces(command)[:MAX_HIDDEN])
    return tuple(p for p in pieces if not p.error)


def _only_comments(command: str) -> bool:
    """True when every non-blank line is a ``#`` comment (a command that runs nothing)."""
    return all(line.lstrip().startswith("#") for line in command.splitlines() if line.strip())


class _Walk:
    """The bashlex walk. Every method takes the ``Scope`` it runs in; those that can change the
    working folder return the scope after them."""

    def __init__(self, found: Findings) -> None:
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
                runner = next((c for c in produced if is_script_runner(c.program) or c.words[0].dynamic), None)
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
            self.found.record(
                SimpleCommand(
                    words=(),
                    via=after.via,
                    effects=Effects(writes=tuple(writes), reads=tuple(reads), opaque=opaque),
                    cwd=after.cwd,
                    text=scope.text(node),
                )
            )
        return after

    def command(self, node: Any, scope: Scope) -> Scope:
        assigns: list[str] = []
        words: list[Word] = []
        fetches = False
        opaque: str | None = None
        redirects: list[Any] = []
        for part in node.parts:
            if part.kind == "assignment":
                assigns.append(part.word.split("=", 1)[0])
                self.found.rebinds = self.found.rebinds or mentions(assigns[-1])
                word, _, trouble = self.word(part, scope)
                self.command_value(word, scope)
                opaque = opaque or trouble
            elif part.kind == "word":
                word, fetched, trouble = self.word(part, scope)
                words += _braces(scope.text(part), word)
                fetches = fetches or fetched
                opaque = opaque or trouble
            elif part.kind == "redirect":
                redirects.append(part)
            else:
                raise Unparseable(f"uses a shell construct the analyser does not support ({part.kind})")
        writes, reads, redirect_opaque = self.redirects(redirects, scope)
        opaque = opaque or redirect_opaque
        if not words:
            self.remember(node, scope)
        before = len(self.found.commands)
        scope = self.emit(
            tuple(words), scope, writes=tuple(writes), reads=tuple(reads), assigns=tuple(assigns), opaque=opaque, text=scope.text(node)
        )
        if fetches and any(is_script_runner(c.program) for c in self.found.commands[before:]):
            self.found.download = self.found.download or f"{self.found.commands[before].program} runs a download"
        return scope

    # one command ----------------------------------------------------------------------------
    def emit(
        self,
        words: tuple[Word, ...],
        scope: Scope,
        *,
        writes: tuple[Target, ...],
        reads: tuple[Target, ...],
        assigns: tuple[str, ...],
        opaque: str | None,
        text: str,
    ) -> Scope:
        """Record one simple command, looking through its wrappers; the scope after it."""
        via, cwd = scope.via, scope.cwd
        appends = False
        unknown = False
        stages = [*scope.stages, words]
        while words and opaque is None:
            self.found.rebinds = self.found.rebinds or rebinding(words)
            step = unwrap(words)
            if step is None:
                break
            if any(w.dynamic for w in words[1 : len(words) - len(step.inner)]):
                # ``timeout $(printf '9 sh -c x') ls``: an unquoted expansion splits into several
                # words, so the program the wrapper runs is only known when it runs
                opaque = f"{words[0].text}: a word before the program it runs is only known when it runs (it may be the program)"
                unknown = True
                break
            if step.outer:
                self.simple(SimpleCommand(words=step.outer, via=via, effects=Effects(assigns=assigns), cwd=cwd, text=text), scope)
            if step.opaque:
                # a wrapper whose words the analyser cannot read (an unknown option: ``env -uX rm``)
                # runs a program only known when it runs (red team, issue 30)
                opaque, unknown = step.opaque, True
                break
            for setting in words[1 : len(words) - len(step.inner)] if step.label == "env" else ():
                self.command_value(setting, scope)
            if step.script is not None:
                writes = (*writes, *step.writes)
                if writes or reads or assigns:
                    own = Effects(writes=writes, reads=reads, assigns=assigns)
                    self.found.record(SimpleCommand(words=(), via=via, effects=own, cwd=cwd, text=text))
                self.nested(step.script.text, step.label, replace(scope, via=via, stages=tuple(stages)))
                return scope
            via, assigns, writes = (*via, step.label), (*assigns, *step.assigns), (*writes, *step.writes)
            appends = appends or step.appends_input
            cwd = None if step.cwd_unknown else cwd
            words = step.inner
            stages.append(words)
        if appends:
            words = (*words, INPUT_WORD)
        self.found.rebinds = self.found.rebinds or rebinding(words)
        if words and not opaque:
            opaque = opaque_reason(words) or odd_target(t.word for t in (*writes, *reads))
        if words and words[0].has_glob and not words[0].dynamic:
            # ``/bin/r? -rf /``: the program is whatever the pattern finds; its operands may be written
            writes = (*writes, *(Target(w, f"{words[0].text} (a pattern)") for w in words[1:] if not w.text.startswith("-")))
        if words and program_name(words[0].text) == "git":
            for key, value in git_subcommand(words[1:])[1]:
                if git_command_key(key) and value:
                    self.nested(value.removeprefix("!"), f"git -c {key}", scope)
        unknown = unknown or bool(words) and words[0].dynamic
        if unknown:  # ``x=hash; $x -p /usr/bin/rm ls``: a program only known when it runs may be one that rebinds
            self.found.rebinds = self.found.rebinds or "a program only known when it runs may rebind what a name runs"
        own = Effects(writes=writes, reads=reads, assigns=assigns, opaque=opaque)
        command = SimpleCommand(words=words, via=via, effects=own, cwd=cwd, text=text, stages=tuple(stages), unknown_program=unknown)
        self.simple(command, scope)
        if words and words[0].text in ("cd", "pushd", "popd"):
            return replace(scope, cwd=changed_dir(words, scope.cwd))
        return scope

    def remember(self, node: Any, scope: Scope) -> None:
        """Remember ``X=value`` (a fixed value, set once in the whole command) so that a later
        ``$X`` is known: ``X=.git; rm -rf $X`` deletes ``.git``."""
        whole = self.found.whole
        for part in node.parts:
            if part.kind != "assignment" or "+=" in part.word.split("=", 1)[0] + "=":
                continue
            name = part.word.split("=", 1)[0]
            word, _, _ = self.word(part, scope)
            value = word.text.split("=", 1)[1]
            once = len(re.findall(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"\+?=", whole)) == 1
            rebinds = re.search(
                r"\b(read|for|export|declare|typeset|local|readonly|let|getopts|mapfile|readarray|printf|unset|set)\b", whole
            )
            if (
                once
                and not rebinds
                and not word.dynamic
                and "\x00" not in value.replace(HOME_MARK, "").replace(PWD_MARK, "").replace(TMP_MARK, "")
            ):
                self.found.consts[name] = value

    def command_value(self, word: Word, scope: Scope) -> None:
        """Parse the value of ``GIT_SSH_COMMAND=...``, ``PAGER=...`` and the like: a command that a
        later program will run."""
        name, sep, value = word.text.partition("=")
        if sep and name in COMMAND_VARIABLES and value.strip():
            if word.dynamic:
                raise Unparseable(f"{name} is set to a command only known when it runs")
            self.nested(value, f"{name}=", scope)

    def simple(self, command: SimpleCommand, scope: Scope) -> None:
        """Record ``command`` with the effects the effect model gives its words; the commands it
        runs (``rg --pre PROG``, ``sed '1e CMD'``, ``zip -TT CMD``) are walked as commands."""
        effects = program_effects(command.words)
        for text, label in effects.runs:
            self.nested(text, label, replace(scope, via=command.via, cwd=command.cwd))
        self.found.record(replace(command, effects=effects.around(command.effects)))

    # words and redirections -----------------------------------------------------------------
    def word(self, node: Any, scope: Scope) -> tuple[Word, bool, str | None]:
        """The word ``node`` stands for, whether a substitution in it downloads something, and why
        its value is only known when it runs beyond a plain variable (``${v@P}``), if so.
        Substitutions are walked as commands (in a subshell: their ``cd`` stays inside)."""
        raw = scope.text(node)
        if "$'" in raw:
            decoded = ansi_c_word(raw)
            if decoded is not None:
                return Word(decoded), False, None
        dynamic = fetches = False
        trouble: str | None = None
        consts = self.found.consts
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                dynamic = True
                before = len(self.found.commands)
                self.visit(part.command, scope)
                fetches = fetches or any(program_name(c.program) in DOWNLOADERS for c in self.found.commands[before:] if c.words)
            elif part.kind == "parameter":
                name = getattr(part, "value", None)
                checked = re.sub(r":?\?.*", "", name or "", flags=re.S)  # ``${HOME:?}`` is $HOME or nothing runs
                dynamic = dynamic or (name not in MARKS and name not in consts and checked not in MARKS)
                for inner in substitutions(name or ""):
                    self.nested(inner, "${...}", scope)
                trouble = trouble or parameter_trouble(name or "")
                if (name or "").startswith("!") and "=" in (name or ""):  # ``${!n:=...}`` assigns to a variable named at run time
                    self.found.rebinds = self.found.rebinds or f"${{{name}}} sets a variable only known when it runs"
            elif part.kind == "tilde":
                dynamic = dynamic or not USER_HOME.fullmatch(part.value)
            else:
                dynamic = True
        text = node.word
        blanks = empty_backticks(raw)  # ``r``m``: the parser keeps them, bash drops them
        if not getattr(node, "parts", None):
            text = dequote(without_spans(raw, blanks), node.word.replace("``", "")) if blanks else dequote(raw, node.word)
        elif blanks:
            dynamic = True  # with other expansions around: only known when it runs
        else:
            for name, value in consts.items():
                text = re.sub(r"\$\{" + name + r"\}|\$" + name + r"(?![A-Za-z0-9_])", lambda _m, v=value: v, text)
            for name, mark in MARKS.items():
                text = re.sub(r"\$\{" + name + r"(:?\?[^}]*)?\}|\$" + name, lambda _m, v=mark: v, text)
            text = home_marks(text)
        return Word(text, dynamic), fetches, trouble

    def redirects(self, nodes: list[Any], scope: Scope) -> tuple[list[Target], list[Target], str | None]:
        writes: list[Target] = []
        reads: list[Target] = []
        opaque: str | None = None
        for node in nodes:
            kind = node.type
            heredoc = getattr(node, "heredoc", None)
            if heredoc is not None and ("$(" in heredoc.value or "`" in heredoc.value):
                opaque = "a here-document runs commands when it is expanded"
            target = node.output
            if kind in ("<<", "<<-") or not hasattr(target, "kind"):
                continue
            word, _, trouble = self.word(target, scope)
            opaque = opaque or trouble
            if kind == "<<<":
                continue
            if ">" in kind:
                writes.append(Target(word, kind, beyond=True))
            if "<" in kind:
                reads.append(Target(word, kind))
        return writes, reads, opaque


def _braces(raw: str, word: Word) -> list[Word]:
    """The words bash's brace expansion makes of ``word`` (written ``raw``): ``{rm,-rf,/}`` -> ``rm -rf /``."""
    if "{" not in raw or "}" not in raw or word.dynamic:
        return [word]
    if len(raw) > 1 and raw[0] == raw[-1] == "'" and raw.count("'") == 2:
        return [word]  # one single-quoted string: no expansion at all (``awk '{print $1, $2}'``)
    if any(ch in raw for ch in "'\"\\$`"):
        return [Word(word.text, dynamic=True)] if BRACE.search(raw) else [word]
    try:
        expanded = brace_expand(word.text)
    except TooManyWords as err:
        raise Unparseable(str(err)) from None
    return [Word(text) for text in expanded]
