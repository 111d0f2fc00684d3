"""``decide(action, rules) -> Decision``: the pure policy. No I/O: the paths in ``action`` were
resolved before (``facts.gather``). The floor is checked first, then the rules (the strictest
matching rule wins: deny beats ask beats allow), then the tool's default."""
from __future__ import annotations

import fnmatch
from dataclasses import replace

from frogtui.approval.decision import Decision, Kind, strictest
from frogtui.approval.facts import Action, PathFact
from frogtui.approval.floor import download_floor, secret_read, write_floor
from frogtui.approval.rules import (
    PATH_TOOLS,
    Rule,
    RuleSet,
    command_matches,
    path_matches,
    stricter_default,
)
from frogtui.approval.shell_model import SimpleCommand
from frogtui.approval.shell_words import Word, display
from frogtui.approval.shell_wrappers import AS_ANOTHER_USER

RISKY_VARIABLES = (
    "PATH", "LD_*", "DYLD_*", "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "BASHOPTS", "GIT_*",
    "PYTHON*", "PERL5*", "RUBYOPT", "NODE_OPTIONS", "PAGER", "*_PAGER", "EDITOR", "VISUAL", "CDPATH",
)  # fmt: skip
"""Setting these changes what a later program runs, so a command that sets them is asked."""
MAX_RULES_NAMED = 4


def decide(action: Action, rules: RuleSet) -> Decision:
    """The decision for one action: ``allow``, ``ask`` or ``deny``, the rule that decided and why."""
    if action.tool in PATH_TOOLS:
        if action.target is None:
            return Decision("ask", f"{action.tool}: no path", f"{action.tool} has no usable path")
        return _decide_path(action.tool, action.target, rules, action.home)
    if action.tool == "Bash":
        if action.shell is None:
            return Decision("ask", "Bash: no command", "Bash has no usable command")
        return _decide_shell(action, rules)
    return Decision("ask", f"{action.tool}: unknown tool", f"{action.tool} is not a tool the policy knows")


# files ---------------------------------------------------------------------------------------
def _decide_path(tool: str, fact: PathFact, rules: RuleSet, home: str) -> Decision:
    floor = secret_read(fact)
    if floor is None and tool in ("Write", "Edit"):
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
        return Decision(kind, f"{tool}: {kind} (default)", f"{tool} inside the repository is {_word(kind)} by default")
    kind = stricter_default(tool, rules.tools, "ask")
    return Decision(kind, f"{tool}: outside the repository", f"{fact.written} is outside the repository ({fact.real})")


def _from_rules(matched: list[Rule], subject: str) -> Decision:
    order = {"allow": 0, "ask": 1, "deny": 2}
    rule = max(matched, key=lambda r: order[r.decision])
    source = f" in {rule.source}" if rule.source else ""
    return Decision(rule.decision, rule.text, f"{subject} is {_word(rule.decision)} by rule {rule.text!r}{source}")


def _word(kind: Kind) -> str:
    return {"allow": "allowed", "ask": "asked about", "deny": "denied"}[kind]


# shell ---------------------------------------------------------------------------------------
def _decide_shell(action: Action, rules: RuleSet) -> Decision:
    shell = action.shell
    assert shell is not None
    if shell.error:
        return Decision("ask", "Bash: unparseable", f"{shell.error}; a person has to read it")
    if shell.download_to_shell:
        return download_floor(shell.download_to_shell)
    decisions = [decision for _command, decision in decide_commands(action, rules)]
    if not decisions:
        return Decision("ask", "Bash: nothing to run", "the command runs nothing the analyser could find")
    worst = strictest(decisions)
    assert worst is not None
    if worst.kind != "allow":
        return worst
    named = list(dict.fromkeys(d.rule for d in decisions))
    rule = "; ".join(named[:MAX_RULES_NAMED]) + ("; …" if len(named) > MAX_RULES_NAMED else "")
    if len(decisions) == 1:
        return worst
    return Decision("allow", rule, f"each of its {len(decisions)} commands is allowed ({rule})")


def decide_commands(action: Action, rules: RuleSet) -> list[tuple[SimpleCommand, Decision]]:
    """Each simple command of a Bash action with its own decision (empty for other tools)."""
    if action.shell is None or action.shell.error:
        return []
    return [(command, _decide_command(action, command, rules)) for command in action.shell.commands]


def _decide_command(action: Action, command: SimpleCommand, rules: RuleSet) -> Decision:
    shown = display(command.text or " ".join(w.text for w in command.words))
    checks: list[Decision] = []
    for word in (*command.words, *command.reads):
        floor = secret_read(action.fact(word, command.cwd))
        if floor is not None:
            return floor
    for word in command.words[1:]:
        if "=" in word.text:
            floor = secret_read(action.fact(Word(word.text.split("=", 1)[1], word.dynamic), command.cwd))
            if floor is not None:
                return floor
    for target in command.writes:
        fact = action.fact(target.word, command.cwd)
        if target.under and not fact.under:
            fact = replace(fact, under=True, protected=None if fact.protected == "the repository root" else fact.protected)
        floor = write_floor(fact, target.how)
        if floor is not None:
            return floor
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
    if command.opaque:
        checks.append(Decision("ask", "Bash: opaque command", f"{shown}: {command.opaque}"))
    risky = [name for name in command.assigns if any(fnmatch.fnmatchcase(name, pattern) for pattern in RISKY_VARIABLES)]
    if risky:
        checks.append(Decision("ask", "Bash: sets a risky variable", f"{shown} sets {', '.join(risky)}, which changes what programs run"))
    other_user = [w for w in command.via if w.split(" ")[0] in AS_ANOTHER_USER]
    if other_user:
        checks.append(Decision("ask", "Bash: runs as another user", f"{shown} runs through {other_user[0].split(' ')[0]}"))
    if not command.words:
        checks.append(Decision("allow", "Bash: redirection only", "only redirects or sets variables inside the repository"))
        return strictest(checks) or checks[0]
    words = tuple(w.text for w in command.words)
    dynamic = tuple(w.dynamic for w in command.words)
    matched = [r for r in rules.rules if r.tool == "Bash" and not command.opaque and command_matches(r.match, words, dynamic)]
    if matched:
        checks.append(_from_rules(matched, display(" ".join(words))))
    else:
        kind = rules.tools.get("Bash", "ask")
        checks.append(
            Decision(
                kind,
                f"Bash: {kind} (default)",
                f"{display(words[0])} is {_word(kind)} by default (no rule matches {display(' '.join(words))!r})",
            )
        )
    worst = strictest(checks)
    assert worst is not None
    return worst


def _root_of(fact: PathFact) -> str:
    """The repository root when ``fact`` is the root itself (relative path ``.``), else ''."""
    return fact.real if fact.rel == "." else ""
