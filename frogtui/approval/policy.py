"""``decide(action, rules) -> Decision``: the pure policy. No I/O: the paths in ``action`` were
resolved before (``facts.gather``). The floor is checked first, then the rules (the strictest
matching rule wins: deny beats ask beats allow), then the tool's default."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import replace

from frogtui.approval.decision import Decision, Kind, strictest
from frogtui.approval.facts import Action, PathFact
from frogtui.approval.floor import (
    download_floor,
    place_floor,
    schedule_floor,
    secret_read,
    write_floor,
)
from frogtui.approval.rules import (
    PATH_TOOLS,
    Rule,
    RuleSet,
    command_matches,
    path_matches,
    stricter_default,
)
from frogtui.approval.shell import (
    ROOT_CWD,
    SimpleCommand,
    Target,
    Word,
    display,
    embedded_paths,
    git_subcommand,
    program_name,
)
from frogtui.tools.specs import BASH, READ, WRITE, runs_commands, tool_spec

RISKY_VARIABLES = (
    "PATH", "LD_*", "DYLD_*", "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "BASHOPTS", "GIT_*",
    "PYTHON*", "PERL5*", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS", "NODE_PATH", "PAGER", "*_PAGER", "EDITOR", "VISUAL", "CDPATH",
    "HOME", "XDG_CONFIG_HOME", "RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "GCONV_PATH", "LOCPATH", "LESS", "LESSKEY*", "PYTEST_*",
    "MAKEFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "NPM_CONFIG_*", "npm_config_*", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "ZIPOPT",
)  # fmt: skip
"""Setting these changes what a later program runs, so a command that sets them is asked: besides
the search paths and hooks, the variables that name a configuration a program reads its options
or commands from (``HOME=. git status`` reads ``./.gitconfig``; ``RIPGREP_CONFIG_PATH`` can give
``--pre``; ``PYTEST_ADDOPTS`` can give ``--basetemp=.git``; ``npm_config_script_shell`` the shell)."""
MAX_RULES_NAMED = 4


def decide(action: Action, rules: RuleSet) -> Decision:
    """The decision for one action: ``allow``, ``ask`` or ``deny``, the rule that decided and why."""
    if action.tool in PATH_TOOLS:
        if action.target is None:
            return Decision("ask", f"{action.tool}: no path", f"{action.tool} has no usable path")
        return _decide_path(action.tool, action.target, rules, action.home)
    if runs_commands(action.tool):
        if action.shell is None:
            return Decision("ask", "Bash: no command", "Bash has no usable command")
        return _decide_shell(action, rules)
    return Decision("ask", f"{action.tool}: unknown tool", f"{action.tool} is not a tool the policy knows")


# files ---------------------------------------------------------------------------------------
def _decide_path(tool: str, fact: PathFact, rules: RuleSet, home: str) -> Decision:
    floor = secret_read(fact)
    spec = tool_spec(tool)
    if floor is None and spec is not None and spec.mutates:
        floor = write_floor(fact) if fact.known else None
    if floor is not None:
        return floor
    if fact.odd and not fact.known:
        return Decision("deny", f"{tool}: unusable path", f"the path {fact.written!r} {fact.odd}; no file has that name")
    if fact.odd:
        return Decision("ask", f"{tool}: odd path", f"the path {fact.written!r} {fact.odd}, so it may not be what it looks like")
    if not fact.known:
        return Decision("ask", f"{tool}: unknown path", f"where {fact.written} leads is only known at run time")
    matched = [r for r in rules.rules if r.tool == tool and path_matches(r.match, fact.rel, fact.real, home)]
    if matched:
        return _from_rules(matched, fact.written)
    if fact.inside or fact.special:
        kind = rules.tools.get(tool, "ask")
        edit = kind == "ask" and fact.inside and spec is not None and spec.mutates
        reason = f"{tool} inside the repository is {_word(kind)} by default"
        return Decision(kind, f"{tool}: {kind} (default)", reason, in_repository_edit=edit)
    kind = stricter_default(tool, rules.tools, "ask")
    return Decision(kind, f"{tool}: outside the repository", f"{fact.written} is outside the repository ({fact.real})")


def _from_rules(matched: list[Rule], subject: str) -> Decision:
    order = {"allow": 0, "ask": 1, "deny": 2}
    rule = max(matched, key=lambda r: (order[r.decision], not r.read_only))  # among allows, one that does not confine wins
    source = f" in {rule.source}" if rule.source else ""
    confined = " (read-only: it runs with nothing writable and no network)" if rule.read_only else ""
    reason = f"{subject} is {_word(rule.decision)} by rule {rule.text!r}{source}{confined}"
    return Decision(rule.decision, rule.text, reason, read_only=rule.read_only, justification=rule.justification)


def _word(kind: Kind) -> str:
    return {"allow": "allowed", "ask": "asked about", "deny": "denied"}[kind]


# shell ---------------------------------------------------------------------------------------
READ_ONLY_RULE = "read-only"
"""The rule named when the read-only default allows a command."""
SYSTEM_FILES = (
    "/usr/",
    "/etc/",
    "/opt/",
    "/lib/",
    "/lib64/",
    "/bin/",
    "/sbin/",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/version",
    "/proc/loadavg",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
)
"""Outside the repository, reading here (what holds no secret) is part of a read-only command."""
_SYSTEM_KEYS = re.compile(r"shadow|sudoers|/private/|ssh_host_|\.key$|\.pem$|/etc/ssl/private|keytab")
"""System files that may hold keys or hashes even where the floor's list has no entry (``/etc/shadow-``)."""


def _decide_shell(action: Action, rules: RuleSet) -> Decision:
    shell = action.shell
    assert shell is not None
    if shell.error:
        hidden = _hidden_floor(action, rules)
        if hidden is not None:
            return hidden
        return _denied_by_default(Decision("ask", "Bash: unparseable", f"{shell.error}; a person has to read it"), rules)
    if shell.download_to_shell:
        return download_floor(shell.download_to_shell)
    decided = decide_commands(action, rules)
    decisions = [decision for _command, decision in decided]
    if not decisions:
        return _denied_by_default(Decision("ask", "Bash: nothing to run", "the command runs nothing the analyser could find"), rules)
    read_only = all(decision.read_only or proven_read_only(action, command) for command, decision in decided)
    worst = strictest(decisions)
    assert worst is not None
    if action.stopped and worst.kind != "deny":
        return _denied_by_default(Decision("ask", "Bash: analysis stopped", f"{action.stopped}; a person has to decide"), rules)
    if worst.kind != "allow" or len(decisions) == 1:
        return replace(_denied_by_default(worst, rules), read_only=read_only)
    named = list(dict.fromkeys(d.rule for d in decisions))
    rule = "; ".join(named[:MAX_RULES_NAMED]) + ("; …" if len(named) > MAX_RULES_NAMED else "")
    return Decision("allow", rule, f"each of its {len(decisions)} commands is allowed ({rule})", read_only=read_only)


def _hidden_floor(action: Action, rules: RuleSet) -> Decision | None:
    """For a command that cannot be parsed: the floor's (or a deny rule's) denial of a piece it
    could hide, if any; a catch-all deny rule (``*``) denies it whole."""
    assert action.shell is not None
    denied: Decision | None = None
    for piece in action.shell.hidden:
        if piece.download_to_shell:
            return download_floor(piece.download_to_shell)
        for command in piece.commands:
            decision = _decide_command(action, command, rules)
            if decision.floor:
                return replace(decision, reason=f"the command cannot be parsed, and a piece of it is below the floor: {decision.reason}")
            if decision.kind == "deny" and denied is None:
                denied = replace(decision, reason=f"the command cannot be parsed, and a piece of it is denied: {decision.reason}")
    catch_all = [r for r in rules.rules if r.tool == BASH.name and r.decision == "deny" and r.match.strip() == "*"]
    if denied is None and catch_all:
        return _from_rules(catch_all, "a command that cannot be parsed")
    denies = [r for r in rules.rules if r.tool == BASH.name and r.decision == "deny"]
    if denied is None and action.shell.rebinds and denies:
        named = ", ".join(repr(r.text) for r in denies[:MAX_RULES_NAMED])
        return Decision("deny", denies[0].text, f"the command cannot be parsed and {action.shell.rebinds}: which program a name runs "
                        f"is only known when it runs, and it may be one a deny rule denies ({named}); deny is deny")
    return denied


def _denied_by_default(decision: Decision, rules: RuleSet) -> Decision:
    """Under ``[tools] Bash = "deny"`` what would be asked about is denied: only what a rule
    allows runs (no mode, ``--approve all`` included, runs the rest)."""
    if decision.kind != "ask" or rules.tools.get(BASH.name) != "deny":
        return decision
    return Decision("deny", "Bash: deny (default)", f"{decision.reason}; [tools] Bash = \"deny\" denies every command no rule allows")


def decide_commands(action: Action, rules: RuleSet) -> list[tuple[SimpleCommand, Decision]]:
    """Each simple command of a Bash action with its own decision (empty for other tools)."""
    if action.shell is None or action.shell.error:
        return []
    return [(command, _decide_command(action, command, rules)) for command in action.shell.commands]


def proven_read_only(action: Action, command: SimpleCommand) -> bool:
    """Whether every effect of ``command`` is reading files and printing (writes only to ``/dev/null``)."""
    return (
        command.effects.read_only
        and not _risky(command)
        and not command.via_other_user
        and not any(label.split(" ")[0] in CODE_EVALUATORS for label in command.via)
        and not (program_name(command.program) == "git" and command.cwd != ROOT_CWD)
        and all(action.fact(t.word, command.cwd).special for t in command.effects.writes)
    )


CODE_EVALUATORS = frozenset({"eval", "trap", "source", "."})
"""Builtins that evaluate code: what runs through them is never read-only by default."""


def _decide_command(action: Action, command: SimpleCommand, rules: RuleSet) -> Decision:
    shown = display(command.text or " ".join(w.text for w in command.words))
    if command.effects.floor:
        return schedule_floor(shown, command.effects.floor)
    floor, checks = _effects(action, command, rules)
    if floor is not None:
        return floor
    if command.effects.opaque:
        checks.append(Decision("ask", "Bash: opaque command", f"{shown}: {command.effects.opaque}"))
    risky = _risky(command)
    if risky:
        checks.append(Decision("ask", "Bash: sets a risky variable", f"{shown} sets {', '.join(risky)}, which changes what programs run"))
    if command.via_other_user:
        checks.append(Decision("ask", "Bash: runs as another user", f"{shown} runs through {command.via_other_user}"))
    own = _decide_program(action, command, rules)
    worst = strictest([*checks, own])
    assert worst is not None
    return own if worst.kind == "allow" else worst  # allowed: named by the rule that allowed the program


def _decide_program(action: Action, command: SimpleCommand, rules: RuleSet) -> Decision:
    """The program's own behaviour against the Bash rules, the read-only default, then the default."""
    if not command.words:
        return Decision("allow", "Bash: redirection only", "only redirects or sets variables inside the repository")
    words = tuple(w.text for w in command.words)
    dynamic = tuple(w.dynamic for w in command.words)
    matched = [r for r in rules.rules if r.tool == BASH.name and r.decision != "allow" and _matches_any_stage(r, command)]
    denies = [r for r in rules.rules if r.tool == BASH.name and r.decision == "deny"]
    if command.unknown_program and denies and not matched:
        named = ", ".join(repr(r.text) for r in denies[:MAX_RULES_NAMED])
        why = f" ({command.effects.opaque})" if command.effects.opaque else ""
        return Decision("deny", denies[0].text, f"{display(' '.join(words))}: which program runs is only known when it runs{why}, "
                        f"and it may be one a deny rule denies ({named}); deny is deny")
    if not command.effects.opaque:
        matched += [r for r in rules.rules if r.tool == BASH.name and r.decision == "allow" and command_matches(r.match, words, dynamic)]
    if matched:
        return _from_rules(matched, display(" ".join(words)))
    if rules.read_only and rules.tools.get(BASH.name) != "deny" and proven_read_only(action, command):
        return Decision("allow", READ_ONLY_RULE, f"{display(' '.join(words))} only reads files and prints (the read-only default)")
    kind = rules.tools.get(BASH.name, "ask")
    return Decision(
        kind, f"Bash: {kind} (default)", f"{display(words[0])} is {_word(kind)} by default (no rule matches {display(' '.join(words))!r})"
    )


def _matches_any_stage(rule: Rule, command: SimpleCommand) -> bool:
    """Whether a deny or ask rule matches the command as written or after any wrapper it runs
    through (deny ``sudo *`` matches ``sudo -n true``), opaque words included: deny is deny."""
    stages = command.stages or (command.words,)
    named = [(Word(program_name(s[0].text), s[0].dynamic), *s[1:]) for s in stages if s and "/" in s[0].text]  # /bin/rm is rm
    stages = (*stages, *named)
    stages = (*stages, *(g for s in stages for g in _git_as_run(s)))
    return any(command_matches(rule.match, tuple(w.text for w in s), tuple(w.dynamic for w in s), may_be=True) for s in stages if s)


def _git_as_run(words: tuple[Word, ...]) -> list[tuple[Word, ...]]:
    """``git`` words as the subcommand runs them, for the deny and ask rules: without git's global
    options (a deny ``git push *`` denies ``git -c x=y push`` and ``git -C . push``), and with a
    ``-c alias.NAME=VALUE`` given there expanded (``git -c alias.p=push p``)."""
    if not words or program_name(words[0].text) != "git":
        return []
    start, settings = git_subcommand(words[1:])
    if start >= len(words) - 1:
        return []
    sub, rest = words[1 + start], words[2 + start :]
    found: list[tuple[Word, ...]] = [(words[0], sub, *rest)] if start else []
    for key, value in settings:
        if key.lower() == f"alias.{sub.text}".lower() and value and not value.startswith("!"):
            found.append((words[0], *(Word(v) for v in value.split()), *rest))
    return found


def _risky(command: SimpleCommand) -> list[str]:
    return [name for name in command.effects.assigns if any(fnmatch.fnmatchcase(name, pattern) for pattern in RISKY_VARIABLES)]


def _effects(action: Action, command: SimpleCommand, rules: RuleSet) -> tuple[Decision | None, list[Decision]]:
    """The floor's denial of one of the command's effects (or None), and the decisions of the
    effects beyond the program's own behaviour (a written file against the Write rules, a read
    file against the Read rules)."""
    checks: list[Decision] = []
    for word in command.words:
        floor = secret_read(action.fact(word, command.cwd))
        if floor is not None:
            return floor, checks
    for path in (path for word in command.words[1:] for path in embedded_paths(word)):
        floor = secret_read(action.fact(path, command.cwd))
        if floor is not None:
            return floor, checks
    for target in command.effects.reads:
        fact = action.fact(target.word, command.cwd)
        floor = secret_read(fact, recursive=target.under or fact.under)  # also each file find found under it
        if floor is not None:
            return floor, checks
        checks.append(_decide_read(target, fact, rules, action.home))
    for target in command.effects.places:
        fact = action.fact(target.word, command.cwd)
        floor = place_floor(fact, target.how)
        if floor is not None:
            return floor, checks
        if not fact.known:
            checks.append(Decision("ask", "Bash: unknown git folder", f"{target.how} {fact.written} is only known at run time"))
    for target in command.effects.writes:
        fact = action.fact(target.word, command.cwd)
        if target.under and not fact.under:
            fact = replace(fact, under=True, protected=None if fact.protected == "the repository root" else fact.protected)
        floor = write_floor(fact, target.how)
        if floor is not None:
            return floor, checks
        if not fact.known:
            checks.append(
                Decision("ask", "Bash: unknown write target", f"{target.how} writes {fact.written}, which is only known at run time")
            )
        elif fact.under and fact.real == _root_of(fact):
            checks.append(
                Decision(
                    "ask", "Bash: may touch .git", f"{target.how} changes files under {fact.written}, which may include .git internals"
                )
            )
        elif target.beyond:
            checks.append(_decide_write(target, fact, rules, action.home))
    return None, checks


def _decide_read(target: Target, fact: PathFact, rules: RuleSet, home: str) -> Decision:
    """A file a command reads, decided like a Read of it (the floor was checked before)."""
    if not fact.known:
        return Decision("ask", "Bash: unknown read", f"{target.how} reads {fact.written}, which is only known at run time")
    if fact.reaches:
        return Decision("ask", "Read: outside the repository", f"{target.how} reads {fact.reaches} through a symlink in {fact.written}")
    matched = [r for r in rules.rules if r.tool == READ.name and path_matches(r.match, fact.rel, fact.real, home)]
    if target.under:  # everything under the folder is read: a stricter rule for any of it counts
        matched += [r for r in rules.rules if r.tool == READ.name and r.decision != "allow" and _may_match_under(r.match, fact, home)]
    if matched:
        return _from_rules(matched, f"{target.how} reading {fact.written}")
    if fact.inside or fact.special:
        kind = rules.tools.get(READ.name, "allow")
        return Decision(kind, f"Read: {kind} (default)", f"{target.how} reads {fact.written} inside the repository")
    system = any(fact.real.startswith(p) or fact.real == p.rstrip("/") for p in SYSTEM_FILES)
    if system and not fact.holds_secret and not _SYSTEM_KEYS.search(fact.real):
        return Decision("allow", "Read: system file", f"{target.how} reads the system file {fact.real}")
    kind = stricter_default(READ.name, rules.tools, "ask")
    return Decision(kind, "Read: outside the repository", f"{target.how} reads {fact.written}, outside the repository ({fact.real})")


def _decide_write(target: Target, fact: PathFact, rules: RuleSet, home: str) -> Decision:
    """A file a command writes beyond its own behaviour (``> f``, ``sort -o f``), decided like a
    Write of it (the floor was checked before)."""
    if fact.special:
        return Decision("allow", "Bash: writes no file", f"{target.how} {fact.written} changes no file")
    if fact.inside and fact.rel is None:
        return Decision("allow", "Bash: private temp folder", f"{target.how} writes {fact.written} in the session's private temp folder")
    matched = [r for r in rules.rules if r.tool == WRITE.name and path_matches(r.match, fact.rel, fact.real, home)]
    if matched:
        return _from_rules(matched, f"{target.how} writing {fact.written}")
    kind = rules.tools.get(WRITE.name, "ask")
    return Decision(
        kind, f"Write: {kind} (default)", f"{target.how} writes {fact.written}; a Write inside the repository is {_word(kind)} by default"
    )


def _may_match_under(pattern: str, folder: PathFact, home: str) -> bool:
    """Whether a path pattern may match something under ``folder`` (a recursive read of it)."""
    if pattern.startswith("~/") and home:
        pattern = home.rstrip("/") + pattern[1:]
    absolute = pattern.startswith("/")
    if not absolute and "/" not in pattern.rstrip("/"):
        return folder.rel is not None  # a name at any depth: anywhere under a folder of the repository
    base = folder.real if absolute else folder.rel
    if base is None:
        return False
    fixed = re.split(r"[*?\[]", pattern.removeprefix("./"), maxsplit=1)[0].rstrip("/")
    base = "" if base == "." else base.rstrip("/")
    return (
        not base or fixed.startswith(base + "/") or fixed == base or base.startswith(fixed + "/") or (fixed.startswith("/") and base == "/")
    )


def _root_of(fact: PathFact) -> str:
    """The repository root when ``fact`` is the root itself (relative path ``.``), else ''."""
    return fact.real if fact.rel == "." else ""
