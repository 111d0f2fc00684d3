"""A proposal's effects: the upper layer of its copy-on-write view read as changes against the
tree under it (``read_effects``).

What the kernel's overlayfs leaves in the upper layer, and how it is read here:

* a file or link the command created or changed: the whole file (a copy-up copies all of it,
  an appended line too): added when the tree has nothing there, else modified (content, mode,
  link target, or a different kind of entry) or nothing at all (the same bytes and mode: a
  ``touch``, a file opened for writing and left as it was);
* a deletion: a character device 0/0 (a whiteout): the tree's file, or its whole folder with
  every file under it counted and listed;
* a folder the command deleted and made again (``rm -r d; mkdir d``): an upper folder marked
  ``user.overlay.opaque`` (``y``): nothing of the tree's folder shows through, so what the tree
  has there and the upper folder does not is deleted;
* a renamed folder: a whiteout and a full copy (unprivileged overlayfs has no ``redirect_dir``),
  paired here by content into one rename, as renamed files are;
* anything else (a FIFO, a socket): listed, never carried over.

A name the command gives an xattr through the view is stored escaped (``user.overlay.overlay.*``),
so only the kernel's own ``user.overlay.opaque`` is read. Links are never followed; the upper
layer is read after every process of the command has ended.

Each effect also says whether its file runs later (``runs_later``: executables, scripts, hooks,
a virtualenv's or ``node_modules/.bin`` programs, control files, Python's start-up files and
bytecode): those are named one by one wherever effects are shown, and no default lands one unseen.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from frogtui.terminal_text import name_drawn

EntryKind = Literal["file", "dir", "link", "special"]
EffectKind = Literal["added", "modified", "deleted", "renamed", "mode", "special"]
OPAQUE = "user.overlay.opaque"
BIG = 1 << 20
"""A file at least this large is shown as one summary line (as a binary one is)."""
MAX_ENTRIES = 500_000
"""Upper-layer entries read at most; a proposal with more is too large to review (``Effects.complete``)."""
MAX_DEPTH = 200
"""Folders nested deeper than this in the upper layer make a proposal too large to review (the
reader recurses once per level; a path past ``PATH_MAX`` cannot be named)."""
MAX_PATH = 3800
"""Bytes of an upper-layer path at most (the layer folder's own included; ``PATH_MAX`` is 4096)."""
BYTECODE = re.compile(r"(^|/)__pycache__/[^/]+\.pyc$|\.py[co]$")
VENV_PROGRAM = re.compile(r"(^|/)node_modules/\.bin/[^/]+$")
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py", ".envrc", ".pythonrc.py"})


@dataclass(frozen=True)
class Entry:
    """One entry of a tree: its kind, permission bits, size, and for a link its target."""

    kind: EntryKind
    mode: int = 0
    size: int = 0
    target: str = ""

    @classmethod
    def of(cls, path: str, st: os.stat_result | None = None) -> Entry | None:
        """The entry at ``path`` (links not followed), None when there is none."""
        try:
            st = st or os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            return cls("link", mode, st.st_size, os.readlink(path))
        if stat.S_ISDIR(st.st_mode):
            return cls("dir", mode)
        if stat.S_ISREG(st.st_mode):
            return cls("file", mode, st.st_size)
        return cls("special", mode)


@dataclass(frozen=True)
class Effect:
    """One change the command made, against the tree.

    Attributes:
        kind: ``added``, ``modified`` (content, link target or kind of entry), ``deleted``,
            ``renamed`` (a deletion and an addition of the same content), ``mode`` (only the
            permission bits), ``special`` (a FIFO or socket: never carried over).
        path: Relative to the repository, ``/``-separated (a rename: the new path).
        before: What the tree has at ``path`` (a rename: at ``source``); None: nothing.
        after: What the command left there; None: deleted.
        source: A rename's old path.
        files: A deleted, renamed or replaced folder (a file or link where it was): every file
            under it (relative to the folder).
        replaced: In a folder the command deleted and made again (an opaque folder).
        binary: Not UTF-8 text (or a NUL byte in it).
        runs_later: Why this file runs later ('' when it does not).
    """

    kind: EffectKind
    path: str
    before: Entry | None
    after: Entry | None
    source: str = ""
    files: tuple[str, ...] = ()
    replaced: bool = False
    binary: bool = False
    runs_later: str = ""
    before_digest: str = ""
    """sha256 of the tree's file at ``path`` (``source``) when the effects were read ('' for
    anything but a file): landing checks the file still has it."""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path this effect writes (a deletion is a write): a rename's both, a folder's
        files under it too."""
        tops = (self.source, self.path) if self.source else (self.path,)
        return (*tops, *(f"{top}/{name}" for top in tops for name in self.files))

    @property
    def big(self) -> bool:
        return self.after is not None and self.after.size >= BIG

    @property
    def is_dir(self) -> bool:
        entry = self.after or self.before
        return entry is not None and entry.kind == "dir"

    def describe(self, *, full: bool = True) -> str:
        """The effect in one line (a person and the model read it); a deleted folder's files
        named one by one (``full``), or counted. Every name and link target is drawn on one line
        as it is (``terminal_text.name_drawn``: a newline, a control character, a byte that is not
        UTF-8 shown as a mark), so a name cannot draw a made-up line."""
        what = name_drawn(self.path) + ("/" if self.is_dir else "")
        if self.kind == "renamed":
            count = f" ({len(self.files)} file(s))" if self.files else ""
            return f"renamed {name_drawn(self.source)}{'/' if self.is_dir else ''} -> {what}{count}"
        if self.kind == "deleted":
            named = f": {_names(self.files)}" if full else ""
            count = f" (a folder with {len(self.files)} file(s){named})" if self.is_dir else ""
            return f"deleted {what}{count}"
        if self.kind == "mode":
            assert self.before is not None and self.after is not None
            return f"mode of {what}: {self.before.mode:o} -> {self.after.mode:o}"
        if self.kind == "special":
            return f"{what}: a FIFO or socket (not carried over)"
        after = self.after
        assert after is not None
        verb = "added" if self.kind == "added" else "modified"
        folder = ""
        if self.before is not None and self.before.kind == "dir":  # replaced: its files are deleted, named or counted
            folder = f"was a folder with {len(self.files)} file(s)" + (f": {_names(self.files)}" if full else "")
        if after.kind == "link":
            was = f" (was -> {name_drawn(self.before.target)})" if self.before is not None and self.before.kind == "link" else ""
            return f"{verb} {what} -> {name_drawn(after.target)}{was}" + (f" ({folder})" if folder else "")
        detail = [folder] if folder else []
        if not folder and self.before is not None and self.before.kind != after.kind:
            detail.append(f"was a {self.before.kind}")
        if after.kind == "file" and (self.binary or self.big):
            detail.append(f"{'binary, ' if self.binary else ''}{after.size} bytes")
        if self.before is not None and after.kind == self.before.kind == "file" and after.mode != self.before.mode:
            detail.append(f"mode {self.before.mode:o} -> {after.mode:o}")
        elif self.kind == "added" and after.kind == "file" and after.mode & 0o111:
            detail.append(f"mode {after.mode:o}")
        return f"{verb} {what}" + (f" ({', '.join(detail)})" if detail else "")


def left_out(effect: Effect) -> str:
    """Why ``effect`` is never carried over ('' when it can land): a FIFO or socket, and Python
    bytecode (a cache that runs instead of its source; Python makes it again)."""
    if effect.kind == "special":
        return "a FIFO or socket is not carried over"
    if effect.after is not None and BYTECODE.search(effect.path):
        return "Python bytecode is left out: Python makes it again from the source"
    return ""


def _names(files: tuple[str, ...]) -> str:
    return ", ".join(name_drawn(name) for name in files)  # every one: a deletion is never hidden behind a cap


@dataclass(frozen=True)
class Effects:
    """Everything a proposal changed, in path order.

    Attributes:
        items: The effects.
        complete: False when the upper layer had more than ``limit`` entries, folders nested
            deeper than ``MAX_DEPTH``, a path longer than ``MAX_PATH`` or an entry that could not
            be read (then nothing may land: what was not read cannot be judged).
        limit: The most upper-layer entries the reader read (``read_effects``' ``max_entries``).
        why: Why not complete, when it is not for ``limit`` ('' otherwise).
    """

    items: tuple[Effect, ...] = ()
    complete: bool = True
    limit: int = MAX_ENTRIES
    why: str = ""

    def __iter__(self) -> Iterator[Effect]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def paths(self) -> list[str]:
        return [p for effect in self.items for p in effect.paths]


def read_effects(upper: str | os.PathLike[str], root: str | os.PathLike[str], *, max_entries: int = MAX_ENTRIES) -> Effects:
    """The effects of a proposal: ``upper`` (its upper layer) against ``root`` (the tree under it),
    reading at most ``max_entries`` entries of ``upper`` (more: ``Effects.complete`` is False)."""
    reader = _Reader(str(upper), str(root), budget=max_entries)
    reader.folder("", complete=False)
    effects = pair_renames(reader.effects, str(upper), str(root))
    effects = [_with_runs_later(e, runs_later(e, str(upper), str(root), scripts=reader.scripts)) for e in effects]
    return Effects(tuple(sorted(effects, key=lambda e: _order(e.path))), complete=not (reader.truncated or reader.why),
                   limit=max_entries, why=reader.why)


def _with_runs_later(effect: Effect, why: str) -> Effect:
    return replace(effect, runs_later=why) if why else effect


def _order(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


@dataclass
class _Reader:
    upper: str
    root: str
    effects: list[Effect] = field(default_factory=list)
    budget: int = MAX_ENTRIES
    folders: dict[str, bool] = field(default_factory=dict)
    why: str = ""
    """Why the upper layer was not read whole, other than the budget ('' while it is)."""
    truncated: bool = False
    """An entry was left unread (the budget was spent)."""
    scripts: dict[str, bool] = field(default_factory=dict)
    """Whether each file whose start was read (``binary``) starts with ``#!``: read once."""

    def binary(self, rel: str, path: str, entry: Entry) -> bool:
        """``_binary`` of the upper layer's ``path`` (``rel``), noting whether it starts with ``#!``."""
        head = _head(path) if entry.kind == "file" else None
        if head is None:
            return False
        self.scripts[rel] = head.startswith(b"#!")
        return _binary_head(head)

    def folder(self, rel: str, *, complete: bool) -> None:
        """Read the upper folder ``rel``; with ``complete`` (inside an opaque folder, or a folder
        the tree does not have) it holds the whole of the folder, and what the tree has there
        besides was deleted."""
        if self.why or self.truncated:
            return
        upper_dir = _join(self.upper, rel)
        if rel.count("/") >= MAX_DEPTH:
            self.why = f"the command made folders nested deeper than {MAX_DEPTH} ({rel.split('/', 1)[0]}/…)"
            return
        try:
            names = sorted(os.listdir(upper_dir))
        except OSError as err:
            self.why = f"{rel or '.'}: could not be read ({err.strerror})"
            return
        for name in names:
            if self.budget <= 0:
                self.truncated = True
                return
            if self.why:
                return
            if len(os.fsencode(_join(upper_dir, name))) > MAX_PATH:
                self.why = f"the command made a path longer than {MAX_PATH} bytes ({rel.split('/', 1)[0]}/…)"
                return
            self.budget -= 1
            self.entry(_rel(rel, name), replaced=complete and bool(rel) and self.lower_folder(rel))
        if complete and self.lower_folder(rel):
            for name in sorted(set(_listdir(_join(self.root, rel))) - set(names)):
                self.deleted(_rel(rel, name), replaced=True)

    def entry(self, rel: str, *, replaced: bool) -> None:
        upper_path = _join(self.upper, rel)
        st = os.lstat(upper_path)
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout
            self.deleted(rel, replaced=replaced)
            return
        after = Entry.of(upper_path, st)
        assert after is not None
        before = self.lower(rel)
        if after.kind == "dir":
            opaque = _opaque(upper_path)
            if before is None or before.kind != "dir":
                if before is not None:
                    self.effects.append(Effect("modified", rel, before, after, replaced=replaced))
                else:
                    self.effects.append(Effect("added", rel, None, after, replaced=replaced))
                self.folder(rel, complete=True)
                return
            if before.mode != after.mode:
                self.effects.append(Effect("mode", rel, before, after, replaced=replaced))
            self.folder(rel, complete=opaque or replaced)
            return
        if after.kind == "special":
            self.effects.append(Effect("special", rel, before, after, replaced=replaced))
            return
        if before is None:
            self.effects.append(Effect("added", rel, None, after, replaced=replaced, binary=self.binary(rel, upper_path, after)))
            return
        if before.kind == "dir":  # one effect for one path: a person's tick is per path (a deletion never unticked apart)
            try:
                files = tuple(tree_files(_join(self.root, rel)))
            except Unlisted as err:
                self.why = f"the command replaced {rel}/, and {err}"
                return
            self.effects.append(Effect("modified", rel, before, after, files=files, replaced=replaced,
                                       binary=self.binary(rel, upper_path, after)))
            return
        if before.kind == after.kind == "file" and before.size == after.size:
            old = digest(_join(self.root, rel))
            if old and old == digest(upper_path):
                if before.mode != after.mode:
                    self.effects.append(Effect("mode", rel, before, after, replaced=replaced, before_digest=old))
                return
        if before.kind == after.kind == "link" and before.target == after.target:
            return
        old = digest(_join(self.root, rel)) if before.kind == "file" else ""
        self.effects.append(Effect("modified", rel, before, after, replaced=replaced, binary=self.binary(rel, upper_path, after),
                                   before_digest=old))

    def lower(self, rel: str) -> Entry | None:
        """The tree's entry at ``rel`` (None when there is none, or a folder above it is not a
        folder of the tree: a link is never followed)."""
        if not self.lower_folder(os.path.dirname(rel)):
            return None
        return Entry.of(_join(self.root, rel))

    def lower_folder(self, rel: str) -> bool:
        """Whether ``rel`` is a folder of the tree, every folder above it one too (no link)."""
        if not rel:
            return True
        if rel not in self.folders:
            parent_ok = self.lower_folder(os.path.dirname(rel))
            try:
                self.folders[rel] = parent_ok and stat.S_ISDIR(os.lstat(_join(self.root, rel)).st_mode)
            except OSError:
                self.folders[rel] = False
        return self.folders[rel]

    def deleted(self, rel: str, *, replaced: bool) -> None:
        before = self.lower(rel)
        if before is None:
            return  # made and deleted by the command
        try:
            files = tuple(tree_files(_join(self.root, rel))) if before.kind == "dir" else ()
        except Unlisted as err:
            self.why = f"the command deleted {rel}/, and {err}"
            return
        old = digest(_join(self.root, rel)) if before.kind == "file" else ""
        self.effects.append(Effect("deleted", rel, before, None, files=files, replaced=replaced, before_digest=old))


class Unlisted(OSError):
    """A folder of the tree cannot be listed whole: nested deeper than ``MAX_DEPTH``, a path
    longer than ``MAX_PATH``, or a folder that cannot be read."""


def tree_files(folder: str) -> Iterator[str]:
    """Every file, link and empty folder under ``folder`` (relative to it, links not followed),
    in ``os.walk``'s order, without recursion (a tree thousands of folders deep).

    Raises:
        Unlisted: a part of it cannot be listed (then what it holds is not known: never a
            shorter list).
    """
    stack = [""]
    while stack:
        rel = stack.pop()
        top = os.path.join(folder, rel) if rel else folder
        if rel.count("/") >= MAX_DEPTH or len(os.fsencode(top)) > MAX_PATH:
            raise Unlisted(f"{os.path.basename(folder)}/ holds folders nested deeper than frogtui lists ({MAX_DEPTH} levels)")
        try:
            with os.scandir(top) as found:
                entries = [(entry.name, entry.is_dir()) for entry in found]  # is_dir follows a link, as os.walk
        except OSError as err:
            raise Unlisted(f"{rel or '.'} in {os.path.basename(folder)}/ cannot be listed ({err.strerror})") from None
        prefix = rel + "/" if rel else ""
        yield from (prefix + name for name, is_dir in sorted(entries) if not is_dir)
        deeper = []
        for name in sorted(name for name, is_dir in entries if is_dir):
            full = os.path.join(top, name)
            if os.path.islink(full):
                yield prefix + name
                continue
            try:
                empty = not os.listdir(full)
            except OSError as err:
                raise Unlisted(f"{prefix}{name} in {os.path.basename(folder)}/ cannot be listed ({err.strerror})") from None
            if empty:
                yield prefix + name + "/"
            deeper.append(prefix + name)
        stack.extend(reversed(deeper))


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _join(base: str, rel: str) -> str:
    return os.path.join(base, rel) if rel else base


def _rel(parent: str, name: str) -> str:
    return f"{parent}/{name}" if parent else name


def _opaque(path: str) -> bool:
    try:
        return os.getxattr(path, OPAQUE, follow_symlinks=False) in (b"y", b"x")
    except OSError:
        return False


def digest(path: str) -> str:
    """sha256 of a file's bytes (links not followed; '' when it cannot be read)."""
    sha = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            sha.update(chunk)
    return sha.hexdigest()


def _binary(path: str, entry: Entry) -> bool:
    head = _head(path) if entry.kind == "file" else None
    return head is not None and _binary_head(head)


def _head(path: str) -> bytes | None:
    """The first 8 KB of a file (None when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(8192)
    except OSError:
        return None


def _binary_head(head: bytes) -> bool:
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start < len(head) - 4  # a character cut at the end of the sample is still text
    return False


# renames ---------------------------------------------------------------------------------------
def pair_renames(effects: list[Effect], upper: str, root: str) -> list[Effect]:
    """Deleted and added files of the same content paired into renames; a deleted folder whose
    every file reappears, same names and content, under one added folder, into one folder rename."""
    added = [e for e in effects if e.kind == "added" and e.after is not None and e.after.kind == "file"]
    if not added:
        return effects
    result = list(effects)
    for gone in [e for e in effects if e.kind == "deleted" and e.before is not None]:
        assert gone.before is not None
        if gone.before.kind == "dir":
            result = _pair_folder(result, gone, upper, root)
        elif gone.before.kind == "file":
            result = _pair_file(result, gone, upper, root)
    return result


def _pair_file(effects: list[Effect], gone: Effect, upper: str, root: str) -> list[Effect]:
    assert gone.before is not None
    size = gone.before.size
    candidates = [e for e in effects if e.kind == "added" and e.after is not None and e.after.kind == "file" and e.after.size == size]
    if not candidates:
        return effects
    old = gone.before_digest
    for candidate in candidates:
        assert candidate.after is not None
        if candidate.after.mode != gone.before.mode:
            continue  # a rename and a mode change: shown as a deletion and an addition (with its mode)
        if old and digest(os.path.join(upper, candidate.path)) == old:
            renamed = Effect("renamed", candidate.path, gone.before, candidate.after, source=gone.path, binary=candidate.binary,
                             before_digest=old)
            return [renamed if e is candidate else e for e in effects if e is not gone]
    return effects


def _pair_folder(effects: list[Effect], gone: Effect, upper: str, root: str) -> list[Effect]:
    wanted = set(gone.files)
    if not wanted:
        return effects
    for head in [e for e in effects if e.kind == "added" and e.is_dir]:
        prefix = head.path + "/"
        inside = [e for e in effects if e.path.startswith(prefix)]
        names = {e.path[len(prefix):] + ("/" if e.is_dir else "") for e in inside if not (e.is_dir and _has_children(e, inside))}
        if names != wanted or any(e.kind != "added" for e in inside) or head.after != gone.before:
            continue
        if all(_same_entry(os.path.join(root, gone.path, e.path[len(prefix):]), os.path.join(upper, e.path), e) for e in inside):
            renamed = Effect("renamed", head.path, gone.before, head.after, source=gone.path, files=gone.files)
            drop = {id(e) for e in inside} | {id(gone)}
            return [renamed if e is head else e for e in effects if id(e) not in drop]
    return effects


def _same_entry(lower: str, upper: str, added: Effect) -> bool:
    """Whether the tree's entry at ``lower`` is what ``added`` made at ``upper``, whole: kind,
    mode, size, a link's target, a file's bytes (a renamed folder hides no change inside it: a
    link retargeted out of the repository, a file made executable)."""
    before = Entry.of(lower)
    if before is None or before != added.after:
        return False
    return before.kind != "file" or digest(lower) == digest(upper)


def _has_children(folder: Effect, effects: list[Effect]) -> bool:
    return any(e.path.startswith(folder.path + "/") for e in effects)


# what runs later -------------------------------------------------------------------------------
def runs_later(effect: Effect, upper: str, root: str, *, scripts: dict[str, bool] | None = None) -> str:
    """Why the file ``effect`` leaves runs later ('' when it does not); ``scripts``: whether files
    already read start with ``#!`` (by path; a file not in it is read)."""
    after = effect.after
    if after is None or after.kind == "dir":
        return ""
    path = effect.path
    name = path.rsplit("/", 1)[-1]
    if path == ".git" or path.startswith(".git/") or "/.git/" in path:
        return "in git's own folder (hooks, config)"
    from frogtui.vcs.control import control_files_changed  # GitPython: with the first proposal, not with the tools

    if control_files_changed([path]):
        return "a control file: it decides what git or a hook runs at your next commit"
    if BYTECODE.search(path):
        return "Python bytecode: it runs instead of its source"
    if name.endswith(".pth") or name in STARTUP_NAMES:
        return "Python or the shell runs it at start-up"
    if VENV_PROGRAM.search(path) or _in_venv_bin(path, upper, root):
        return "a program of the project's environment (.venv/bin, node_modules/.bin)"
    if after.kind == "file" and after.mode & 0o111:
        return "executable"
    known = scripts.get(path) if scripts is not None else None
    if after.kind == "file" and (known if known is not None else _shebang(os.path.join(upper, path))):
        return "a script (#!)"
    return ""


def in_cache(path: str) -> bool:
    """Whether ``path`` lies in a cache or a build output (``vcs.ignored.is_cache``: ``__pycache__``,
    ``.pytest_cache``, ``target/``…): losing it loses nothing a tool does not make again."""
    from frogtui.vcs.ignored import is_cache  # GitPython: with the first proposal, not with the tools

    return is_cache(path)


def _in_venv_bin(path: str, upper: str, root: str) -> bool:
    parts = path.split("/")
    if len(parts) < 3 or parts[-2] not in ("bin", "Scripts"):
        return False
    env = "/".join(parts[:-2])
    return any(os.path.isfile(os.path.join(base, env, "pyvenv.cfg")) for base in (upper, root))


def _shebang(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as handle:
        return handle.read(2) == b"#!"


def group_ignored(paths: Iterable[str]) -> list[tuple[str, int]]:
    """Ignored paths grouped by their top folder, with counts (``.venv/``: 1,204)."""
    counts: dict[str, int] = {}
    for path in paths:
        top = path.split("/", 1)[0] + ("/" if "/" in path else "")
        counts[top] = counts.get(top, 0) + 1
    return sorted(counts.items())


