"""Rules as data: the TOML format people share, parsing it, and matching a rule against an action.

The format::

    [tools]              # default decision per tool
    Read = "allow"
    Bash = "ask"

    [[rules]]
    tool = "Bash"
    match = "pytest *"   # glob over the parsed command's words
    decision = "allow"

    [[rules]]
    tool = "Write"        # Read, Write, Edit, Glob: path globs, gitignore style
    match = "docs/**"
    decision = "allow"

    [sandbox]
    bash = "bwrap"       # or "none"
    network = false
    hide = ["~/.config/work-vpn"]   # masked inside the sandbox, besides the built-in secret stores
    expose = ["~/.config/pip"]      # shown read-only in the hidden home folder (a secret store named here: left visible)
    env = ["DATABASE_URL"]          # environment variables passed to Bash besides the allowlist

    [bash]
    read_only = true     # run commands that only read and print without asking (the default)
    proposals = true     # run a command the rules would ask about on a copy-on-write view first,
                         # and judge what it did (the default: the kernel's overlay, else
                         # fuse-overlayfs, else run on the tree and undo what is not accepted);
                         # or "overlay", "fuse", "undo" for that way only; false: off

Nothing here touches the disk: ``parse_rules`` takes text, ``combine`` merges parsed files.
"""
from __future__ import annotations

import fnmatch
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from frogtui.approval.decision import KINDS, STRICTNESS, Kind, stricter_kind
from frogtui.errors import ConfigError
from frogtui.tools.specs import TOOL_SPECS, runs_commands

TOOLS = tuple(spec.name for spec in TOOL_SPECS)
"""The tool names a rules file may use: the tools' own (``tools.specs``)."""
PATH_TOOLS = frozenset(spec.name for spec in TOOL_SPECS if not runs_commands(spec))
"""The tools whose rules are path globs (every tool but the one that runs commands)."""
DEFAULT_TOOL_DECISIONS: Mapping[str, Kind] = {spec.name: "ask" if spec.mutates else "allow" for spec in TOOL_SPECS}
"""Decisions inside the repository when no rule matches: a tool that changes nothing is allowed,
the others are asked about. Outside it Read and Glob are at least ``ask`` and Write and Edit are
denied by the floor."""


@dataclass(frozen=True)
class Rule:
    """One ``[[rules]]`` entry.

    Attributes:
        tool: ``Read``, ``Write``, ``Edit``, ``Glob`` or ``Bash``.
        match: For Bash, a glob over the command's words (``git push *``); for the others a
            gitignore-style path glob (``docs/**``, ``*.lock``, ``/usr/include/**``).
        decision: ``allow``, ``ask`` or ``deny``.
        source: Where the rule came from (a file path, ``session``, ``project``...).
        read_only: A Bash allow rule the person marked read-only (``read_only = true``): what it
            allows runs in the read-only sandbox (nothing written, no network) without a checkpoint.
        justification: Why the rule is there, in the person's words (``justification = "..."``),
            '' when not given: the approval modal shows it when the rule asks, and the model is
            told it when the rule denies.
    """

    tool: str
    match: str
    decision: Kind
    source: str = ""
    read_only: bool = False
    justification: str = ""

    @property
    def text(self) -> str:
        return f"{self.tool}: {self.match}"


SANDBOX_LISTS = ("hide", "expose", "env")
"""The ``[sandbox]`` keys that hold lists of strings."""


@dataclass(frozen=True)
class SandboxSettings:
    bash: str = "bwrap"
    """``bwrap`` (run Bash under bubblewrap when it works) or ``none``."""
    network: bool = False
    """Whether sandboxed Bash may reach the network."""
    hide: tuple[str, ...] = ()
    """More paths masked inside the sandbox (``~`` allowed), besides ``approval.secrets``."""
    expose: tuple[str, ...] = ()
    """Paths (``~`` allowed) shown read-only inside the sandbox's hidden home folder or project
    parent (``approval.sandbox.home``); a built-in secret store named exactly is left visible
    (``~/.npmrc``), the stores inside a named folder stay masked."""
    env: tuple[str, ...] = ()
    """Environment variables passed to Bash besides the allowlist (even credential-like names)."""


@dataclass(frozen=True)
class RuleFile:
    """One parsed rules file (or text)."""

    source: str
    tools: Mapping[str, Kind] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    sandbox: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool | None = None
    proposals: bool | str | None = None


PROPOSAL_WAYS = ("auto", "overlay", "fuse", "undo")
"""What ``[bash] proposals`` may name besides ``true`` (``auto``) and ``false``
(``approval.sandbox.views``)."""


@dataclass(frozen=True)
class RuleSet:
    """Everything ``decide`` needs to know about the rules in force.

    Attributes:
        tools: Default decision per tool (inside the repository).
        rules: All rules, from every source; the strictest matching one wins.
        sandbox: How Bash is sandboxed.
        notes: What was ignored and why (e.g. an untrusted project file trying to loosen a rule).
        read_only: The read-only default: a Bash command whose every effect is reading files
            (inside the repository, or system files that hold no secret) and printing runs
            without asking when no rule decides it (``[bash] read_only``).
        proposals: A command the rules would ask about runs first as a proposal on a
            copy-on-write view, and what it did is judged (``[bash] proposals``; where the kernel
            allows it, ``tools.proposals``).
        proposals_way: Which way a proposal runs (``PROPOSAL_WAYS``; ``auto``: the first that
            works here, ``approval.sandbox.views``).
    """

    tools: Mapping[str, Kind] = field(default_factory=lambda: dict(DEFAULT_TOOL_DECISIONS))
    rules: tuple[Rule, ...] = ()
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    notes: tuple[str, ...] = ()
    read_only: bool = True
    proposals: bool = True
    proposals_way: str = "auto"

    def with_rule(self, rule: Rule) -> RuleSet:
        """A copy with ``rule`` added (session rules)."""
        return replace(self, rules=(*self.rules, rule))


# parsing -------------------------------------------------------------------------------------
def parse_rules(text: str, source: str) -> RuleFile:
    """Parse the TOML text of a rules file.

    Raises:
        ConfigError: one line naming ``source`` and what is wrong.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{source}: not valid TOML: {err}") from None
    unknown = set(data) - {"tools", "rules", "sandbox", "bash"}
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {', '.join(sorted(unknown))} (expected [tools], [[rules]], [sandbox], [bash])")
    bash = _table(data.get("bash", {}), source, "[bash]")
    if set(bash) - {"read_only", "proposals"}:
        raise ConfigError(f"{source}: unknown key(s) in [bash]: {', '.join(sorted(set(bash) - {'read_only', 'proposals'}))}")
    if "read_only" in bash and not isinstance(bash["read_only"], bool):
        raise ConfigError(f"{source}: [bash] read_only must be true or false")
    if "proposals" in bash and not isinstance(bash["proposals"], bool) and bash["proposals"] not in PROPOSAL_WAYS:
        raise ConfigError(f"{source}: [bash] proposals must be true, false, {', '.join(repr(w) for w in PROPOSAL_WAYS)}, "
                          f"not {bash['proposals']!r}")
    tools_table = _table(data.get("tools", {}), source, "[tools]")
    tools = {_tool_name(name, source): _kind(value, source, f"[tools] {name}") for name, value in tools_table.items()}
    entries = data.get("rules", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{source}: rules must be an array of tables ([[rules]])")
    rules = tuple(_rule(entry, n, source) for n, entry in enumerate(entries, start=1))
    sandbox = _table(data.get("sandbox", {}), source, "[sandbox]")
    extra = set(sandbox) - {"bash", "network", *SANDBOX_LISTS}
    if extra:
        raise ConfigError(f"{source}: unknown key(s) in [sandbox]: {', '.join(sorted(extra))}")
    if "bash" in sandbox and sandbox["bash"] not in ("bwrap", "none"):
        raise ConfigError(f"{source}: [sandbox] bash must be \"bwrap\" or \"none\", not {sandbox['bash']!r}")
    if "network" in sandbox and not isinstance(sandbox["network"], bool):
        raise ConfigError(f"{source}: [sandbox] network must be true or false")
    for key in SANDBOX_LISTS:
        if key in sandbox:
            if not isinstance(sandbox[key], list) or not all(isinstance(v, str) and v for v in sandbox[key]):
                raise ConfigError(f"{source}: [sandbox] {key} must be a list of non-empty strings")
            sandbox[key] = tuple(sandbox[key])
    return RuleFile(source=source, tools=tools, rules=rules, sandbox=dict(sandbox), read_only=bash.get("read_only"),
                    proposals=bash.get("proposals"))


def _table(value: Any, source: str, name: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: {name} must be a table")
    return value


def _tool_name(name: Any, source: str) -> str:
    if name not in TOOLS:
        raise ConfigError(f"{source}: unknown tool {name!r} (expected one of {', '.join(TOOLS)})")
    return str(name)


def _kind(value: Any, source: str, where: str) -> Kind:
    if value not in KINDS:
        raise ConfigError(f"{source}: {where} must be \"allow\", \"ask\" or \"deny\", not {value!r}")
    return value  # type: ignore[no-any-return]


def _rule(entry: Any, n: int, source: str) -> Rule:
    where = f"rule {n}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{source}: {where} must be a table")
    missing = {"tool", "match", "decision"} - set(entry)
    if missing:
        raise ConfigError(f"{source}: {where} lacks {', '.join(sorted(missing))}")
    extra = set(entry) - {"tool", "match", "decision", "read_only", "justification"}
    if extra:
        raise ConfigError(f"{source}: {where} has unknown key(s) {', '.join(sorted(extra))}")
    read_only = entry.get("read_only", False)
    if not isinstance(read_only, bool) or (read_only and (not runs_commands(entry["tool"]) or entry["decision"] != "allow")):
        raise ConfigError(f"{source}: {where}: read_only = true is for a Bash rule that allows (it runs what it allows read-only)")
    justification = entry.get("justification", "")
    if "justification" in entry and (not isinstance(justification, str) or not justification.strip()):
        raise ConfigError(f"{source}: {where}: justification must be a non-empty string (why the rule is there)")
    tool = _tool_name(entry["tool"], source)
    match = entry["match"]
    if not isinstance(match, str) or not match.strip():
        raise ConfigError(f"{source}: {where}: match must be a non-empty string")
    if runs_commands(tool):
        try:
            words = shlex.split(match)
        except ValueError as err:
            raise ConfigError(f"{source}: {where}: cannot split match {match!r}: {err}") from None
        if not words:
            raise ConfigError(f"{source}: {where}: match must name a program")
    elif match.startswith("!"):
        raise ConfigError(f"{source}: {where}: negated patterns (!) are not supported; add a rule with a stricter decision instead")
    kind = _kind(entry["decision"], source, f"{where} decision")
    return Rule(tool=tool, match=match.strip(), decision=kind, source=source, read_only=read_only, justification=justification.strip())


# combining -----------------------------------------------------------------------------------
def combine(user: RuleFile | None, project: RuleFile | None, *, project_trusted: bool = False) -> RuleSet:
    """Merge the user's rules with the project's.

    The user's file sets defaults freely. An untrusted project file may only tighten: its tool
    defaults act as catch-all rules (so they cap the user's allow rules), its ``allow`` rules are
    dropped, and it may turn the sandbox on or the network off, never the reverse. A trusted
    project file counts like the user's.
    """
    tools: dict[str, Kind] = dict(DEFAULT_TOOL_DECISIONS)
    rules: list[Rule] = []
    sandbox = SandboxSettings()
    notes: list[str] = []
    read_only = True
    proposals, way = True, "auto"
    for rule_file, loosen in ((user, True), (project, project_trusted)):
        if rule_file is None:
            continue
        if rule_file.proposals is False or (loosen and rule_file.proposals is not None):
            proposals = rule_file.proposals is not False  # an untrusted project may only turn them off: then a person is asked first
            way = rule_file.proposals if isinstance(rule_file.proposals, str) else "auto"
        elif isinstance(rule_file.proposals, str) or (rule_file.proposals and not proposals):
            shown = f'"{rule_file.proposals}"' if isinstance(rule_file.proposals, str) else "true"
            notes.append(f"ignored [bash] proposals = {shown} in {rule_file.source}: the project is not trusted")
        if rule_file.read_only is False or (loosen and rule_file.read_only is not None):
            read_only = bool(rule_file.read_only)
        elif rule_file.read_only:
            notes.append(f"ignored [bash] read_only = true in {rule_file.source}: the project is not trusted")
        if loosen:
            tools.update(rule_file.tools)
            rules.extend(rule_file.rules)
            lists = {key: (*getattr(sandbox, key), *rule_file.sandbox.get(key, ())) for key in SANDBOX_LISTS}
            sandbox = replace(sandbox, **{**rule_file.sandbox, **lists})
            continue
        sandbox = replace(sandbox, hide=(*sandbox.hide, *rule_file.sandbox.get("hide", ())))
        for key in ("expose", "env"):
            if rule_file.sandbox.get(key):
                notes.append(f"ignored [sandbox] {key} in {rule_file.source}: the project is not trusted")
        for tool, kind in rule_file.tools.items():
            if STRICTNESS[kind] > STRICTNESS["allow"]:
                rules.append(Rule(tool, "*" if runs_commands(tool) else "**", kind, f"{rule_file.source} [tools]"))
            else:
                notes.append(f"ignored {tool} = \"allow\" in {rule_file.source}: the project is not trusted")
        for rule in rule_file.rules:
            if rule.decision == "allow":
                notes.append(f"ignored allow rule {rule.text!r} in {rule_file.source}: the project is not trusted")
            else:
                rules.append(rule)
        if rule_file.sandbox.get("bash") == "bwrap":
            sandbox = replace(sandbox, bash="bwrap")
        elif rule_file.sandbox.get("bash") == "none":
            notes.append(f"ignored [sandbox] bash = \"none\" in {rule_file.source}: the project is not trusted")
        if rule_file.sandbox.get("network") is False:
            sandbox = replace(sandbox, network=False)
        elif rule_file.sandbox.get("network") is True:
            notes.append(f"ignored [sandbox] network = true in {rule_file.source}: the project is not trusted")
    return RuleSet(tools=tools, rules=tuple(rules), sandbox=sandbox, notes=tuple(notes), read_only=read_only, proposals=proposals,
                   proposals_way=way)


# matching ------------------------------------------------------------------------------------
def command_matches(pattern: str, words: Sequence[str], dynamic: Sequence[bool] = (), *, may_be: bool = False) -> bool:
    """True when a Bash rule's pattern matches a simple command's words.

    Each pattern word is a glob (``fnmatch``) for one command word; a last pattern word ``*``
    matches any number of remaining words, including none. Words marked dynamic (an expansion
    whose value is unknown) only match that trailing ``*``; with ``may_be`` (a deny or ask rule:
    deny is deny), they match any pattern word, since they may be it when the command runs.
    """
    pattern_words = tuple(shlex.split(pattern))
    rest = pattern_words[-1] == "*"
    fixed = pattern_words[:-1] if rest else pattern_words
    if len(words) < len(fixed) or (not rest and len(words) != len(fixed)):
        return False
    flags = tuple(dynamic) + (False,) * (len(words) - len(dynamic))
    for want, word, is_dynamic in zip(fixed, words, flags, strict=False):
        if is_dynamic and may_be:
            continue
        if is_dynamic or not fnmatch.fnmatchcase(word, want):
            return False
    return True


def path_matches(pattern: str, rel_path: str | None, abs_path: str, home: str = "") -> bool:
    """True when a gitignore-style ``pattern`` matches a path.

    Patterns starting with ``/`` or ``~/`` are absolute and match ``abs_path``; others match the
    path relative to the repository root (``rel_path``; None when outside); ``./`` anchors a
    pattern at the root. A pattern without a
    slash matches a name at any depth; ``**`` spans folders; a pattern that matches a folder
    matches everything inside it.
    """
    if pattern.startswith("~/") and home:
        pattern = home.rstrip("/") + pattern[1:]
    if pattern.startswith("/"):
        regex = _path_regex(pattern, True)
        return any(regex.match(p) for p in (abs_path, *_parents(abs_path)))
    if rel_path is None:
        return False
    anchored = "/" in pattern.rstrip("/")
    if pattern.startswith("./"):
        pattern, anchored = pattern[2:], True
    regex = _path_regex(pattern, anchored)
    return any(regex.match(p) for p in (rel_path, *_parents(rel_path)))


def _parents(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(len(parts) - 1, 0, -1) if "/".join(parts[:n])]


@lru_cache(maxsize=512)
def _path_regex(pattern: str, anchored: bool) -> re.Pattern[str]:
    body = pattern.rstrip("/")
    absolute = body.startswith("/")
    body = body.lstrip("/")
    out = "/" if absolute else ("" if anchored else "(?:.*/)?")
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif body.startswith("**", i):
            out += ".*"
            i += 2
        elif body[i] == "*":
            out += "[^/]*"
            i += 1
        elif body[i] == "?":
            out += "[^/]"
            i += 1
        elif body[i] == "[" and "]" in body[i + 1 :]:
            end = body.index("]", i + 1)
            inner = body[i + 1 : end].replace("\\", "\\\\")
            out += "[" + ("^" + inner[1:] if inner.startswith("!") else inner) + "]"
            i = end + 1
        else:
            out += re.escape(body[i])
            i += 1
    return re.compile(out + r"\Z")


def stricter_default(tool: str, tools: Mapping[str, Kind], floor_kind: Kind) -> Kind:
    """The tool's default, but never looser than ``floor_kind``."""
    return stricter_kind(tools.get(tool, "ask"), floor_kind)
