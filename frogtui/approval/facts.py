"""Facts about paths, gathered before ``decide`` runs: the only part of the policy that looks at the
disk. Paths are resolved the way the tool or the shell will use them (``~`` expanded, ``..`` and
every symlink followed) so that "inside the repository" is decided on the real target."""
from __future__ import annotations

import fnmatch
import os
import pwd
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from frogtui.approval.budget import Budget
from frogtui.approval.facts_links import glob_matches, links_under, through_links
from frogtui.approval.path_fact import PathFact
from frogtui.approval.secrets import PROCESS_SECRETS, SECRET_NAMES, SECRET_STORES, SYSTEM_SECRETS
from frogtui.approval.shell import (
    FOUND_MARK,
    HOME_MARK,
    PWD_MARK,
    SPECIAL_WRITE_TARGETS,
    TMP_MARK,
    USER_MARK,
    ShellAnalysis,
    Word,
    analyze,
    display,
    embedded_paths,
    symlinks_made,
)
from frogtui.protocol import ToolCall
from frogtui.tools.specs import tool_spec


@dataclass(frozen=True)
class Action:
    """One tool call with the facts ``decide`` needs.

    Attributes:
        tool: The tool name.
        target: For Read, Write, Edit and Glob: the path it touches.
        shell: For Bash: the parsed command.
        paths: For Bash: facts for every word that may be a path, by ``path_key``.
        home: The home folder (for ``~/`` rules).
        stopped: Why the analysis stopped before it looked at everything (its budget ran out);
            what it did not look at is unknown, and the policy asks.
    """

    tool: str
    target: PathFact | None = None
    shell: ShellAnalysis | None = None
    paths: Mapping[PathKey, PathFact] = field(default_factory=dict)
    home: str = ""
    stopped: str | None = None

    def fact(self, word: Word, cwd: Word | None) -> PathFact:
        """The fact for ``word`` in folder ``cwd`` (unknown when it was not gathered)."""
        return self.paths.get(path_key(word, cwd)) or PathFact(word.text, known=False)


PathKey = tuple[str | None, str, bool]
"""A shell word where it is used: (working folder, None when unknown; the word; whether dynamic)."""


def path_key(word: Word, cwd: Word | None) -> PathKey:
    return (None if cwd is None else cwd.text, word.text, word.dynamic)


OWN_FILES = "frogtui's own files (its configuration, state or installation)"
"""What a write to a trusted place inside the repository would change (``PathFact.protected``)."""


@dataclass(frozen=True)
class Places:
    """The folders the facts are relative to."""

    root: Path
    tmp_dir: Path
    home: Path
    trusted: tuple[str, ...] = ()
    """frogtui's own files inside the repository (``approval.trusted.protected_inside``): no
    write may change them."""

    @classmethod
    def of(cls, root: Path, tmp_dir: Path, home: str | None = None, trusted: tuple[str, ...] = ()) -> Places:
        home_dir = Path(os.path.realpath(home or os.path.expanduser("~")))
        return cls(Path(os.path.realpath(root)), Path(os.path.realpath(tmp_dir)), home_dir, trusted)


def gather(call: ToolCall, places: Places) -> Action:
    """The action for ``call``, every path resolved (the I/O happens here, not in ``decide``)."""
    args = call.arguments
    home = str(places.home)
    spec = tool_spec(call.name)
    kind = spec.kind if spec is not None else None
    if spec is not None and spec.path_argument and isinstance(args.get(spec.path_argument), str):  # one file
        path = args[spec.path_argument]
        odd = path_oddity(path)
        if odd and "\x00" in path:
            return Action(call.name, target=PathFact(display(path), known=False, odd=odd), home=home)
        return Action(call.name, target=replace(resolve_text(path, places), odd=odd), home=home)
    if kind == "search" and isinstance(args.get("pattern"), str):  # a pattern, from an optional folder
        base = args.get("path") if isinstance(args.get("path"), str) else None
        odd = path_oddity(args["pattern"]) or path_oddity(base or "")
        if odd and "\x00" in args["pattern"] + (base or ""):
            return Action(call.name, target=PathFact(display(args["pattern"]), known=False, odd=odd), home=home)
        return Action(call.name, target=replace(glob_fact(args["pattern"], base, places), odd=odd), home=home)
    if kind == "execute" and isinstance(args.get("command"), str):
        budget = Budget()
        analysis = analyze(args["command"])
        paths = shell_facts(analysis, places, budget)
        for piece in analysis.hidden:
            paths = {**shell_facts(piece, places, budget), **paths}
        return Action(call.name, shell=analysis, paths=paths, home=home, stopped=budget.stopped)
    return Action(call.name, home=home)


def path_oddity(path: str) -> str | None:
    """Why a file path given to a tool may not be what a person reads (NUL, newline, control,
    invisible or direction-changing characters), or None."""
    if "\x00" in path:
        return "contains a NUL character"
    if path.isascii() and path.isprintable():
        return None  # no ASCII character outside the C0 controls and DEL is in the categories below
    for ch in path:
        if ch == "\n" or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs", "Zl", "Zp"):
            return f"contains an invisible or control character (U+{ord(ch):04X})"
    return None


def shell_facts(analysis: ShellAnalysis, places: Places, budget: Budget | None = None) -> dict[PathKey, PathFact]:
    """Facts for every word of every command that could name a file. Symlinks the command itself
    creates (``ln -s ~ x && echo > x/.bashrc``) are followed for the commands after them."""
    facts: dict[PathKey, PathFact] = {}
    links: dict[str, str | None] = {}
    budget = budget or Budget()
    for command in analysis.commands:
        words = [*command.words, *(t.word for t in (*command.effects.reads, *command.effects.writes, *command.effects.places))]
        words += [path for w in command.words[1:] for path in embedded_paths(w)]
        for word in words:
            key = path_key(word, command.cwd)
            if key not in facts or links:
                fact = resolve_word(word, command.cwd, places, links=links, dotglob=analysis.dotglob, budget=budget)
                if key not in facts or _worse(fact, facts[key]):
                    facts[key] = fact
        for target in (t for t in command.effects.reads if t.follows and facts[path_key(t.word, command.cwd)].inside):
            key = path_key(target.word, command.cwd)
            found = links_under(facts[key].real, budget)
            facts[key] = through_links(facts[key], found, lambda p: resolve_text(p, places, kernel=True))
        for link, target in symlinks_made(command.words):
            _add_link(links, link, target, command.cwd, places)
    return facts


def _worse(new: PathFact, old: PathFact) -> bool:
    return bool(new.secret or new.protected or not new.known or (old.inside and not new.inside))


def _add_link(links: dict[str, str | None], link: Word, target: Word, cwd: Word | None, places: Places) -> None:
    """Remember that ``link`` (as written, in ``cwd``) now points at ``target`` (None: unknown)."""
    if link.dynamic or cwd is None or cwd.dynamic:
        return
    base = os.path.join(str(places.root), _expand(cwd.text, places))
    where = os.path.normpath(os.path.join(base, _expand(link.text, places)))
    if link.text.endswith("/") or os.path.isdir(where):
        where = os.path.join(where, os.path.basename(target.text.rstrip("/")))
    if target.dynamic or target.has_glob:
        links[where] = None
        return
    text = _expand(target.text, places)
    if text == "~" or text.startswith("~/"):
        text = str(places.home) + text[1:]
    links[where] = _realpath(os.path.join(os.path.dirname(where), text))


def _through_links(path: str, links: dict[str, str | None]) -> str | None:
    """``path`` with a link made earlier in the command replaced by its target (None: unknown)."""
    path = os.path.normpath(path)
    for link, target in links.items():
        if path == link or path.startswith(link.rstrip("/") + "/"):
            if target is None:
                return None
            return target + path[len(link) :]
    return path


def resolve_word(
    word: Word,
    cwd: Word | None,
    places: Places,
    *,
    links: dict[str, str | None] | None = None,
    dotglob: bool = False,
    budget: Budget | None = None,
) -> PathFact:
    """Resolve a shell word as the shell in ``cwd`` would see it (after the symlinks in ``links``
    that the same command made; with ``dotglob``, ``*`` also matches names starting with a dot)."""
    shown = display(word.text)
    if word.dynamic:
        return PathFact(shown, known=False)
    text, under = word.text, False
    if text.endswith("/" + FOUND_MARK):
        text, under = text[: -len(FOUND_MARK) - 1] or "/", True
    text = _expand(text, places)
    if text == "~" or text.startswith("~/"):  # not expanded by bash here, but read as meant
        text = str(places.home) + text[1:]
    if not os.path.isabs(text):
        if cwd is None or cwd.dynamic:
            return PathFact(shown, known=False)
        base = _expand(cwd.text, places)
        text = os.path.join(places.root, base, text)
    if links:
        through = _through_links(text, links)
        if through is None:
            return PathFact(shown, known=False)
        text = through
    if word.has_glob:
        fact = _glob_prefix_fact(shown, text, places, dotglob=dotglob)
        reached = glob_matches(text, dotglob=dotglob, budget=budget) if fact.inside else []
        return through_links(fact, reached, lambda p: resolve_text(p, places, kernel=True))
    fact = resolve_text(text, places, shown=shown, kernel=True)
    return PathFact(**{**fact.__dict__, "under": under, "protected": None if under and fact.protected == "the repository root" else fact.protected})


def _expand(text: str, places: Places) -> str:
    text = USER_MARK.sub(lambda m: user_home(m.group(1)), text)
    return text.replace(HOME_MARK, str(places.home)).replace(TMP_MARK, str(places.tmp_dir)).replace(PWD_MARK, str(places.root))


def user_home(user: str) -> str:
    """The home folder of ``user`` (``~user``): from the password database, else ``/home/user``."""
    try:
        return pwd.getpwnam(user).pw_dir
    except KeyError:
        return f"/home/{user}"


@lru_cache(maxsize=1)
def _all_homes() -> frozenset[str]:
    """Every user's home folder the password database names (not ``/`` or system folders)."""
    homes = {"/root"}
    for entry in pwd.getpwall():
        if entry.pw_dir.startswith(("/home/", "/root", "/Users/", "/var/home/")):
            homes.add(os.path.normpath(entry.pw_dir))
    return frozenset(homes)


def is_a_home(path: str, places: Places) -> bool:
    """Whether ``path`` is the home folder of any user (``~``, ``~root``, ``/home/x``)."""
    return path in (str(places.home), *_all_homes()) or bool(re.fullmatch(r"/(?:home|Users|var/home)/[^/]+", path))


def resolve_text(path: str, places: Places, *, shown: str | None = None, kernel: bool = False) -> PathFact:
    """Resolve a path as the file tools do: relative to the root, ``~`` expanded, ``..`` folded,
    links followed. With ``kernel`` (shell words), ``..`` is applied after following a link, as
    the kernel does: ``link_out/../x`` is next to the link's target, not in the repository."""
    joined = os.path.join(places.root, _home(path, places))
    lexical = os.path.normpath(joined)
    real = _realpath(joined if kernel else lexical)
    return fact_at(shown or path, lexical, real, places)


def fact_at(shown: str, lexical: str, real: str, places: Places) -> PathFact:
    """The fact for a path written ``shown``, at ``lexical`` (absolute, normalized), whose real
    path (every link followed; absolute, normalized) is ``real``: the part of ``resolve_text``
    that reads no disk."""
    root, tmp = str(places.root), str(places.tmp_dir)
    in_root = _within(real, root)
    inside = (in_root or _within(real, tmp)) and not lexical.startswith("/proc/")
    rel = _relative(real, root) if in_root else None
    secret = None
    for candidate in dict.fromkeys((real, lexical, _PROC_ROOT.sub("", lexical))):  # each once, in this order
        secret = _secret(candidate, places)
        if secret:
            break
    protected = None
    first = _parts(rel or ".")[:1]
    if real == root:
        protected = "the repository root"
    elif in_root and first and first[0].lower() == ".git":
        protected = ".git internals"  # also .GIT: the same folder on case-insensitive file systems
    elif is_a_home(real, places) or is_a_home(lexical, places):
        protected = "the home folder" if str(places.home) in (real, lexical) else "a user's home folder"
    elif in_root and not _within(real, tmp) and any(_within(real, place) for place in places.trusted):
        protected = OWN_FILES
    special = any(lexical == p or (p.endswith("/") and lexical.startswith(p)) for p in SPECIAL_WRITE_TARGETS)
    holds = None if in_root else _holds_secret(real, places) or _holds_secret(lexical, places)
    rel_posix = None if rel is None else rel if _plain_path(rel) else Path(rel).as_posix()
    return PathFact(shown, real, rel_posix, inside, True, secret, protected, special, holds_secret=holds)


def _plain_path(path: str) -> bool:
    """Whether ``path`` has nothing ``pathlib`` would fold: no empty or ``.`` name, no ``/`` at
    its end, at most one at its start (then its names are ``path.split("/")``)."""
    body = path[1:] if path.startswith("/") else path
    return bool(body) and "//" not in body and not body.startswith("/") and not body.endswith("/") and "." not in body.split("/")


def _parts(path: str) -> tuple[str, ...]:
    """``Path(path).parts``, without making a ``Path`` for a plain path (the policy asks this of
    every path it judges)."""
    if not _plain_path(path):
        return Path(path).parts
    if path.startswith("/"):
        return ("/", *path[1:].split("/"))
    return tuple(path.split("/"))


def _relative(real: str, root: str) -> str:
    """``os.path.relpath(real, root)`` for ``real`` at or under ``root`` (both absolute and
    normalized, as ``realpath`` gives them)."""
    if real == root:
        return "."
    prefix = root.rstrip("/") + "/"
    if real.startswith(prefix) and _plain_path(real) and (root == "/" or _plain_path(root)):
        return real[len(prefix):]
    return os.path.relpath(real, root)


def _holds_secret(folder: str, places: Places) -> str | None:
    """The secret store under ``folder``, if any: a home folder (or a folder above one) holds
    ``~/.ssh`` and the others; ``/etc`` holds ``/etc/shadow``."""
    homes = {str(places.home), *_all_homes()}
    if re.fullmatch(r"/(?:home|Users|var/home)/[^/]+(?:/.*)?", folder):
        homes.add("/".join(folder.split("/")[:3 + folder.startswith("/var/home")]))
    for home in sorted(homes):
        for store in SECRET_STORES:
            fixed = store.split("/*")[0]  # a store with a ``*``: the folder it is found under
            if _within(os.path.join(home, fixed), folder) and (os.path.join(home, store) != folder or fixed != store):
                return f"~/{store}"
    return next((p for p in SYSTEM_SECRETS if _within(p.rstrip("_"), folder) and p.rstrip("_") != folder), None)


def _home(path: str, places: Places) -> str:
    """``~`` and ``~/...`` in a tool's path mean the home folder the policy was given."""
    if path == "~" or path.startswith("~/"):
        return str(places.home) + path[1:]
    return os.path.expanduser(path)


def _realpath(path: str) -> str:
    """``os.path.realpath`` that never raises: a link it may not read (``/proc/1/cwd``) is left as
    written, which is outside the repository."""
    try:
        return os.path.realpath(path)
    except OSError:
        return os.path.normpath(path)


def _glob_prefix_fact(shown: str, pattern: str, places: Places, *, dotglob: bool = False, listing: bool = False) -> PathFact:
    parts = Path(os.path.normpath(pattern)).parts
    static: list[str] = []
    for part in parts:
        if any(ch in part for ch in "*?["):
            break
        static.append(part)
    first_glob = parts[len(static)] if len(static) < len(parts) else ""
    fact = resolve_text(os.path.join(*static) if static else "/", places, shown=shown, kernel=True)
    protected = fact.protected if fact.protected != "the repository root" else None
    if fact.real == str(places.root) and (first_glob.startswith(".") or dotglob) and fnmatch.fnmatchcase(".git", first_glob):
        protected = ".git internals"
    secret = fact.secret or _glob_secret(os.path.normpath(pattern), places, inside_only=listing)
    return PathFact(**{**fact.__dict__, "under": True, "protected": protected, "secret": secret})


_PROC_ROOT = re.compile(r"^/proc/[^/]+/root(?=/)")
_PROCESS_SECRET = re.compile(r"/proc/[^/]+(?:/task/[^/]+)?/(?:" + "|".join(map(re.escape, PROCESS_SECRETS)) + ")")
_HOST_KEYS = ("ssh_host_rsa_key", "ssh_host_ed25519_key", "ssh_host_ecdsa_key", "ssh_host_dsa_key")


def _glob_secret(pattern: str, places: Places, *, inside_only: bool = False) -> str | None:
    """The secret store a glob could reach (``~/.ss?/id_rsa``, ``~/.*``, ``/etc/shado?``), or None:
    each of its components is matched against each secret store's path. With ``inside_only``
    (the Glob tool lists names), only a pattern that goes into a store counts."""
    pattern = _PROC_ROOT.sub("", pattern)
    wanted = Path(pattern).parts
    homes = {str(places.home), "/root"} | ({"/".join(wanted[:3])} if len(wanted) > 2 and wanted[1] == "home" else set())
    stores = [(os.path.join(h, s), f"~/{s}") for h in homes for s in SECRET_STORES]
    stores += [(p, p) for p in SYSTEM_SECRETS if not p.endswith("_")] + [(f"/etc/ssh/{k}", "/etc/ssh/ssh_host_") for k in _HOST_KEYS]
    stores += [(f"/proc/{pid}/{name}", f"/proc/*/{name}") for pid in ("self", "1") for name in PROCESS_SECRETS]
    for path, name in stores:
        have = Path(path).parts
        if len(wanted) >= len(have) + inside_only and all(_name_matches(h, w) for h, w in zip(have, wanted)):
            return name
    if not _within(pattern, str(places.root)):
        for part in wanted[: len(wanted) - inside_only]:
            if any(ch in part for ch in "*?[") and any(_name_matches(n, part) for n in SECRET_NAMES if n.startswith(".")):
                return part
    return None


def _name_matches(name: str, pattern: str) -> bool:
    """Whether the shell's glob ``pattern`` matches ``name`` (a leading dot must be matched by a dot)."""
    return fnmatch.fnmatchcase(name, pattern) and (not name.startswith(".") or pattern.startswith("."))


def glob_fact(pattern: str, path: str | None, places: Places) -> PathFact:
    """The folder a Glob call searches (its pattern's fixed prefix), as a fact."""
    base = os.path.join(str(places.root), _home(path or ".", places))
    full = os.path.join(base, _home(pattern, places))
    parts = Path(full).parts
    first = next((n for n, part in enumerate(parts) if any(ch in part for ch in "*?[")), len(parts))
    if ".." in parts[first:]:
        return PathFact(pattern, known=False)
    return _glob_prefix_fact(pattern, full, places, listing=True) if first < len(parts) else resolve_text(full, places, shown=pattern)


def store_holds(store: str, rel: str) -> bool:
    """Whether ``rel`` (relative to a home folder) is the secret store ``store`` or inside it; a
    ``*`` in the store stands for one name."""
    if "*" not in store:
        return rel == store or rel.startswith(store + "/")
    want, have = store.split("/"), rel.split("/")
    return len(have) >= len(want) and all(fnmatch.fnmatchcase(h, w) for w, h in zip(want, have))


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _secret(path: str, places: Places) -> str | None:
    if _PROCESS_SECRET.fullmatch(path):
        return "/proc/*/" + path.rsplit("/", 1)[1]
    for prefix in SYSTEM_SECRETS:
        if path == prefix or path.startswith(prefix.rstrip("/") + ("/" if not prefix.endswith("_") else "")):
            return prefix
    homes = {str(places.home), "/root"}
    parts = _parts(path)
    if len(parts) >= 3 and parts[1] == "home":
        homes.add(os.path.join("/", parts[1], parts[2]))
    for home in homes:
        if not _within(path, home) or path == home:
            continue
        rel = os.path.relpath(path, home)
        for store in SECRET_STORES:
            if store_holds(store, rel):
                return f"~/{store}"
    if not _within(path, str(places.root)) and any(part in SECRET_NAMES for part in parts):
        return next(part for part in parts if part in SECRET_NAMES)
    return None
