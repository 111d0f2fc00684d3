""""Always allow for this session": the narrowest useful rule for a call (program and subcommand,
``pytest *``, ``git status``; never ``*``), computed from the parsed command."""
from __future__ import annotations

import os
import re

from frogtui.approval.decision import Decision
from frogtui.approval.facts import Action, PathFact
from frogtui.approval.rules import Rule
from frogtui.approval.shell import (
    AFTER_FIRST_OPERAND,
    ALL_OPERANDS,
    LAST_OPERAND,
    SimpleCommand,
    is_script_runner,
    program_name,
)
from frogtui.tools.specs import READ, WRITE, runs_commands

SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "pip", "pip3", "uv", "poetry", "docker", "podman", "kubectl",
     "make", "just", "gh", "hatch", "pdm", "conda", "mamba", "brew", "apt", "apt-get", "dotnet", "mvn", "gradle",
     "bundle", "rake", "rustup", "nox", "tox", "deno", "bun", "terraform", "systemctl", "helm", "ruff", "mypy"}
)
PACKAGE_RUNNERS = frozenset({"npx", "pnpx", "bunx", "uvx", "pipx"})
"""Run a package by name (and may download it): the package is part of the rule (``npx prettier *``)."""
EXACT_PROGRAMS = (
    ALL_OPERANDS | LAST_OPERAND | AFTER_FIRST_OPERAND | frozenset({"dd", "find", "tar", "unzip", "ln", "sed", "chmod", "git-clean"})
)
"""Programs that change files: "always allow" is for exactly the command approved (``rm -rf build``)."""
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9:_-]*$")
_PACKAGE = re.compile(r"^@?[A-Za-z0-9][A-Za-z0-9._/@-]*$")
_SAFE_WORD = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")
_PLAIN_PROGRAM = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._+-]*$")


def narrow_command_rule(command: SimpleCommand) -> str | None:
    """The narrowest useful ``match`` for one simple command, or None when none is safe.

    ``pytest tests -q`` -> ``pytest *``; ``git status`` -> ``git status``; ``git push origin main``
    -> ``git push *``; ``python -m pytest -x`` -> ``python -m pytest *``. A program given by a path
    (``./run.sh``) keeps its path; commands that are opaque or only redirect get none.
    """
    command = command.as_written or command  # rebound in this command only: the stored rule judges later ones afresh
    if command.effects.opaque or not command.words or any(w.dynamic for w in command.words[:1]):
        return None
    words = [w.text for w in command.words]
    program = words[0]
    if not _PLAIN_PROGRAM.match(os.path.basename(program)) or ("/" in program and not program.startswith(("./", "/"))):
        return None
    fixed = [program]
    rest = words[1:]
    name = program_name(program)
    if name in EXACT_PROGRAMS:
        return _exact(command)
    if is_script_runner(name):
        return _script_rule(command)
    if name in PACKAGE_RUNNERS:
        operands = [w for w in rest if not w.startswith("-")]
        if not rest or rest[0].startswith("-") or not _PACKAGE.match(rest[0]) or command.words[1].dynamic:
            return None  # ``npx --yes x``: options first; no rule narrower than "anything npx runs"
        if name == "pipx" and operands[:1] == ["run"] and len(rest) > 1 and _PACKAGE.match(rest[1]):
            return f"pipx run {rest[1]}" + (" *" if rest[2:] else "")
        fixed.append(rest[0])
        rest = rest[1:]
    elif name in SUBCOMMAND_PROGRAMS and rest:
        if not _SUBCOMMAND.match(rest[0]) or command.words[1].dynamic:
            return None  # ``git -c core.pager=... log``: options before the subcommand change what it does
        fixed.append(rest[0])
        rest = rest[1:]
    return " ".join(fixed + (["*"] if rest else []))


def _exact(command: SimpleCommand) -> str | None:
    """The command itself as a rule, when every word is plain (no glob characters, no marks)."""
    if any(w.dynamic or not _SAFE_WORD.match(w.text) for w in command.words):
        return None
    return " ".join(w.text for w in command.words)


def _script_rule(command: SimpleCommand) -> str | None:
    """``python tool.py -x`` -> ``python tool.py *``; ``python -m pytest`` -> ``python -m pytest *``;
    none for code given inline (``python -c``, ``node -e``) or read from standard input (``sh``)."""
    words = [w.text for w in command.words]
    rest = words[1:]
    if program_name(words[0]).startswith("python") and len(rest) >= 2 and rest[0] == "-m" and _SUBCOMMAND.match(rest[1]):
        return " ".join(words[:3]) + (" *" if rest[2:] else "")
    if not rest or rest[0].startswith("-") or command.words[1].dynamic or not _SAFE_WORD.match(rest[0]):
        return None
    return " ".join(words[:2]) + (" *" if rest[1:] else "")


def narrow_rules(action: Action, decide_each: list[tuple[SimpleCommand, Decision]]) -> list[Rule]:
    """Session rules that would allow the commands of ``action`` that are now asked about.

    Commands the floor denies, or that a rule denies, get no rule: a session rule never lifts a
    denial. Path tools get a rule for exactly the file they touch; so do the files a command
    writes beyond its own behaviour (``> out.txt``: ``Write: ./out.txt``) or reads outside the
    repository (``Read: /abs/path``).
    """
    if not runs_commands(action.tool):
        rule = _exact_path_rule(action.tool, action.target)
        return [rule] if rule else []
    rules: list[Rule] = []
    for command, decision in decide_each:
        if decision.kind != "ask":
            continue
        match = narrow_command_rule(command)
        if not match:
            continue
        found = [Rule(action.tool, match, "allow", "session")]
        written = [action.fact(t.word, command.cwd) for t in command.effects.writes if t.beyond]
        read = [fact for t in command.effects.reads if not (fact := action.fact(t.word, command.cwd)).inside]
        touched = ((WRITE.name, written), (READ.name, read))
        found += [_exact_path_rule(tool, fact) for tool, facts in touched for fact in facts if _one_file(fact)]
        rules += [r for r in found if r is not None and all(r != other for other in rules)]
    return rules


def _one_file(fact: PathFact) -> bool:
    """Whether a file a command touches is one plain file a rule can name (not a folder read
    recursively, not ``/dev/null``)."""
    return not (fact.special or fact.under or fact.holds_secret)


def _exact_path_rule(tool: str, target: PathFact | None) -> Rule | None:
    """A rule for exactly the file ``target`` (glob characters escaped), or None when none is safe."""
    if target is None or not target.known or target.secret:
        return None
    match = target.rel if target.rel is not None else target.real
    if not match or match == ".":
        return None
    escaped = re.sub(r"([*?\[])", r"[\1]", match)
    if target.rel is not None:
        escaped = escaped if "/" in escaped else "./" + escaped
    return Rule(tool, escaped, "allow", "session")
