"""A proposal run on the working tree itself (no copy-on-write view here: ``approval.sandbox.direct``),
turned into a proposal like any other: what the command changed, as git sees it, is moved into
the proposal's upper layer in the kernel overlay's form, and the tree is put back as it was before
the command (from git's snapshot of it). The proposal is then judged and landed as one on a view.

    before = capture.before()           # git's snapshot of the tree (tracked and untracked files)
    ... the command runs on the tree ...
    capture.capture(before, upper)      # changes -> upper (files, links, whiteouts); the tree put back

git's view is what is read: files git tracks or would add. Of what git ignores (``.venv``,
``node_modules``, caches), a file the command made is moved out too (so it is judged, and a
program planted in ``.venv/bin`` never lands unseen); one that was there before and that the
command changed or deleted cannot be put back (git holds no copy of it): it stays as the command
left it, and the model is told (``capture``'s answer). A nested repository the command makes
(which git's view leaves out) has its ``.git`` moved out first, then its files are read as any
others. Empty folders outside the ignored ones, folder modes, FIFOs, sockets and device files are
not read: they stay as the command left them (docs/APPROVALS.md). A file put back gets the
permission bits it had (``Before.modes``). Where git's view cannot see or give back every file as
it was (a submodule, a nested repository that was there before, ``core.fileMode = false``,
``core.ignoreCase = true``, git converting file contents: ``cannot_put_back``; more ignored files
than their walk looks at), the command is not run this way at all (``TreeCapture.problem``: it is
asked about by its text instead). The loop takes the step's checkpoint before the command runs,
so a crash between the command and the tree being put back leaves a checkpoint that undo goes
back to; a failure part way puts back the files git holds before it is said.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.vcs import ignored as ignored_module
from frogtui.vcs.hunks import decode, encode
from frogtui.vcs.ignored import IgnoredFiles, ignored_files
from frogtui.vcs.ignored import changed as changed_ignored
from frogtui.vcs.repository import GitFailed, run_git, temporary_index
from frogtui.vcs.snapshot import snapshot


@dataclass(frozen=True)
class Before:
    """The tree before the command: git's snapshot, and the ignored files' fingerprints."""

    tree: str
    ignored: IgnoredFiles
    nested: tuple[str, ...] = ()
    """Nested repositories (not submodules) there were: git's view leaves them out."""
    modes: dict[str, int] = field(default_factory=dict)
    """Each file's permission bits (git's copy holds only the executable bit): a file put back gets its own."""


def _fingerprint(root: Path, path: str) -> tuple[int, int, int, int] | None:
    """``path``'s fingerprint now, as ``vcs.ignored`` takes it (None: gone)."""
    try:
        info = os.lstat(os.path.join(root, path.rstrip("/")))
    except OSError:
        return None
    if path.endswith("/"):
        return (0, 0, info.st_ino, info.st_mode) if stat.S_ISDIR(info.st_mode) and not os.listdir(root / path) else None
    return (info.st_size, info.st_mtime_ns, info.st_ino, info.st_mode)


def _under(path: str, tops: tuple[str, ...]) -> bool:
    return any(path == top or path.startswith(top + "/") for top in tops)


def _parents(paths: Iterable[str]) -> set[str]:
    """Every folder above one of ``paths`` (an empty folder ``name/`` counts as one)."""
    found: set[str] = set()
    for path in paths:
        folder = path.rstrip("/") if path.endswith("/") else os.path.dirname(path)
        while folder and folder not in found:
            found.add(folder)
            folder = os.path.dirname(folder)
    return found


CANNOT_PUT_BACK = "run then undo cannot put every file back as it was here"
NOT_RUN = ("the command did not run (with [bash] proposals = false in your rules, such a command is asked about by its "
           "text before it runs)")
CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")
"""The attributes under which git's copy of a file is not its bytes (line endings, a filter's
clean and smudge, ``$Id$``, an encoding): put back from git, a CRLF file would come back LF."""
GITLINK = b"160000"


def cannot_put_back(repo: git.Repo, tree: str | None = None, nested: tuple[str, ...] = (),
                    entries: list[tuple[bytes, bytes]] | None = None) -> str:
    """Why a file of ``tree`` (None: the person's index and the untracked files) may not be put
    back as it is from git's copy, as run then undo puts files back; '' when each can.
    ``nested``: the nested repositories the snapshot of ``tree`` left out; ``entries``: its
    ``tree_entries`` when the caller has them.

    - a submodule: git's snapshot holds its commit, not its files (a command that removed it
      left it empty, the person's work in it lost; one that edited a file in it was never seen);
    - a nested repository (not a submodule): the snapshot leaves it out whole (a command that
      removed it lost it, its history too);
    - git is told to ignore file modes (``core.fileMode = false``): a ``chmod +x`` is not seen;
    - git is told to ignore case (``core.ignoreCase = true``): a new ``B.md`` beside ``b.md`` is not seen;
    - git converts file contents (``core.autocrlf``, or an attribute of ``CONVERTING``, read
      where ``git check-attr`` reads: every ``.gitattributes``, ``info/attributes``, the
      person's and the system's; git-lfs's filter gives back what it took and is not counted).

    Raises:
        FrogtuiError: git cannot say.
    """
    if tree is not None:
        entries = tree_entries(repo, tree) if entries is None else entries
    else:
        entries = [(meta.split(b" ")[0], path) for meta, _, path in
                   (e.partition(b"\t") for e in run_git(repo, "ls-files", "-s", "-z").split(b"\0") if e)]
        entries += [(b"", p) for p in run_git(repo, "ls-files", "-z", "--others", "--exclude-standard").split(b"\0") if p]
        nested = tuple(decode(p).rstrip("/") for _, p in entries if p.endswith(b"/"))  # git names a nested repository as a folder
    if nested:
        return (f"the nested repository {nested[0]}: git's snapshot leaves it out (what a command did in it could be neither "
                "read back nor put back)")
    submodule = next((path for mode, path in entries if mode == GITLINK), None)
    if submodule is not None:
        return (f"the submodule {decode(submodule)}: git holds its commit, not its files (what a command did in it could "
                "be neither read back nor put back)")
    settings = _settings(repo)
    if settings.get("core.filemode", "").lower() in ("false", "no", "off", "0"):
        return (f"git is told to ignore file modes (core.fileMode = {settings['core.filemode']}): a chmod +x could be "
                "neither read back nor put back")
    if settings.get("core.ignorecase", "").lower() in ("true", "yes", "on", "1"):
        return (f"git is told to ignore case (core.ignoreCase = {settings['core.ignorecase']}): a new file named as a "
                "tracked one but for its case would be neither read back nor put back")
    why = _converts(repo, [path for _, path in entries], settings)
    return f"git converts file contents: {why}" if why else ""


def _too_many(found: IgnoredFiles) -> str:
    tops = ", ".join(found.unchecked[:3]) + (f" and {len(found.unchecked) - 3} more" if len(found.unchecked) > 3 else "")
    return (f"more than {ignored_module.MAX_FILES} files and folders git ignores ({tops}): what a command made or changed "
            "among them could not be seen")


def undo_problem(repo: git.Repo) -> str:
    """Why running a proposal on the tree and putting it back cannot be done in ``repo`` as it is
    now (``cannot_put_back``, said as the session's and doctor's line says it), '' when it can."""
    try:
        why = cannot_put_back(repo)
    except FrogtuiError as err:
        return f"git cannot say whether it could put each file back: {err}"
    return f"{CANNOT_PUT_BACK}: {why}" if why else ""


def tree_entries(repo: git.Repo, tree: str) -> list[tuple[bytes, bytes]]:
    """Each file, link and submodule of ``tree``: its git mode and its path."""
    out = run_git(repo, "ls-tree", "-r", "-z", tree)
    return [(meta.split(b" ")[0], path) for meta, _, path in (e.partition(b"\t") for e in out.split(b"\0") if e)]


def _modes(root: Path, entries: list[tuple[bytes, bytes]]) -> dict[str, int]:
    """The permission bits each regular file of ``entries`` has in the tree now (git keeps only
    whether it is executable: one put back from git would get 644 or 755 by the umask)."""
    modes: dict[str, int] = {}
    for mode, raw in entries:
        if mode in (b"100644", b"100755"):
            path = decode(raw)
            try:
                modes[path] = stat.S_IMODE(os.lstat(os.path.join(root, path)).st_mode)
            except OSError:
                continue
    return modes


def _converts(repo: git.Repo, paths: list[bytes], settings: dict[str, str]) -> str:
    """The first reason git's copy of one of ``paths`` may not be its bytes ('' none); ``settings``: ``_settings``'."""
    autocrlf = settings.get("core.autocrlf", "")
    if autocrlf.lower() in ("true", "input", "yes", "on", "1"):
        return f"core.autocrlf = {autocrlf} (a file with CRLF line endings would come back with git's)"
    if not paths or not _attribute_files(repo, paths, settings.get("core.attributesfile", "")):
        return ""
    out = run_git(repo, "check-attr", "-z", "--stdin", *CONVERTING, stdin=b"".join(p + b"\0" for p in paths))
    fields = out.split(b"\0")
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        if value in (b"unspecified", b"unset", b"") or (name == b"filter" and value == b"lfs"):
            continue
        shown = name.decode() if value == b"set" else f"{name.decode()}={decode(value)}"
        return f"{decode(path)} has the attribute {shown} (.gitattributes): git's copy of it may not be its bytes"
    return ""


def _settings(repo: git.Repo) -> dict[str, str]:
    """``core.autocrlf``, ``core.fileMode``, ``core.ignoreCase`` and ``core.attributesFile`` (a path, ``~`` expanded)
    where set (lower-case keys), in one git call."""
    try:
        out = run_git(repo, "config", "-z", "--type=path", "--get-regexp", r"^core\.(autocrlf|filemode|ignorecase|attributesfile)$")
    except GitFailed:  # neither is set
        return {}
    found = {}
    for record in out.split(b"\0"):
        key, _, value = decode(record).partition("\n")
        if key:
            found[key.lower()] = value.strip()
    return found


def _attribute_files(repo: git.Repo, paths: list[bytes], configured: str) -> bool:
    """Whether any file git reads attributes from is there (a ``.gitattributes`` among ``paths``,
    ``info/attributes``, ``core.attributesFile`` (``configured``) or its default, the system's)."""
    if any(p == b".gitattributes" or p.endswith(b"/.gitattributes") for p in paths):
        return True
    if os.path.isfile(os.path.join(repo.working_tree_dir or ".", ".gitattributes")):
        return True  # one git ignores is read all the same
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    files = [os.path.join(repo.common_dir, "info", "attributes"), configured or os.path.join(xdg, "git", "attributes")]
    if not os.environ.get("GIT_ATTR_NOSYSTEM"):
        files.append("/etc/gitattributes")
    return any(os.path.isfile(f) and os.path.getsize(f) for f in files)


@dataclass(frozen=True)
class Change:
    """One path git sees changed: ``A`` added, ``M`` modified (content or mode), ``T`` a change of
    kind (file, link), ``D`` deleted."""

    status: str
    path: str


class TreeCapture:
    """Reads back what a command run on ``repo``'s working tree changed, and puts the tree back."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        self.root = Path(repo.working_tree_dir or ".")

    def problem(self) -> str:
        """Why a command cannot run this way in the repository as it is now (``undo_problem``:
        asked before each command, so that one is asked about by its text instead), '' when it can."""
        return undo_problem(self.repo)

    def before(self) -> Before:
        """git's snapshot of the tree now, and the ignored files' fingerprints.

        Raises:
            OSError: git cannot snapshot the tree, or git's copy of a file there may not be its
                bytes (``cannot_put_back``): the command does not run.
        """
        try:
            taken = snapshot(self.repo)
            entries = tree_entries(self.repo, taken.tree)
            modes: dict[str, int] = {}
            reading = threading.Thread(target=lambda: modes.update(_modes(self.root, entries)), name="frogtui-modes", daemon=True)
            reading.start()  # an lstat per file, beside git's processes below (each waits on the disk)
            try:
                why = cannot_put_back(self.repo, taken.tree, taken.nested, entries)
                if why:
                    raise OSError(f"{CANNOT_PUT_BACK}: {why}; {NOT_RUN}")
                ignored = ignored_files(self.repo)
                if ignored.unchecked:
                    raise OSError(f"{CANNOT_PUT_BACK}: {_too_many(ignored)}; {NOT_RUN}")
            finally:
                reading.join()
            return Before(taken.tree, ignored, taken.nested, modes)
        except FrogtuiError as err:
            raise OSError(f"the tree cannot be snapshot before the command: {err}") from None

    def capture(self, before: object, upper: Path) -> tuple[str, ...]:
        """Move what changed in the tree since ``before`` (``before()``'s) into ``upper`` and put
        the tree back as it was then; the ignored paths that could not be put back (changed or
        deleted: git holds no copy of them).

        Raises:
            OSError: git cannot say what changed, or the tree cannot be put back (what was moved out
                so far is in ``upper``; the loop's checkpoint before the command holds the rest).
        """
        assert isinstance(before, Before)
        try:
            taken = snapshot(self.repo)
            made_nested = [name for name in taken.nested if name not in before.nested]
            modes: dict[Path, int] = {}
            if made_nested:  # git's view leaves a nested repository out: its .git goes first, then git sees its files
                for name in made_nested:
                    self._move_git_folder(name, upper, modes)
                taken = snapshot(self.repo)
            after = taken.tree
            was_ignored = before.ignored.files
            changes = self.changes(before.tree, after) if after != before.tree else []
            changes = [c for c in changes if c.path not in was_ignored]  # one the command un-ignored: there before, no copy of it
            ignored_after = ignored_files(self.repo)
            unchecked = before.ignored.unchecked + ignored_after.unchecked
            made = [p for p in changed_ignored(before.ignored, ignored_after) if p not in was_ignored]
            kept = tuple(p for p in sorted(was_ignored) if not _under(p, unchecked) and _fingerprint(self.root, p) != was_ignored[p])
            if not changes and not made and not modes and not ignored_after.unchecked:
                return kept
            folders = self._folders(before.tree) | _parents(before.ignored.files)
            restored = [c.path for c in changes if c.status != "A"]
            try:
                for change in changes:
                    if change.status == "D":
                        self._whiteout(change.path, upper, modes)
                for path in [c.path for c in changes if c.status != "D"] + made:
                    self._move_out(path, upper, folders, modes)
                for folder, mode in sorted(modes.items(), key=lambda item: -len(item[0].parts)):
                    os.chmod(folder, mode)
            finally:  # also when a move failed part way: the person's own files go back before anything else is said
                self._put_back(before, restored)
            if ignored_after.unchecked:  # what it made past the walk's end was not seen: it is in the tree, unjudged
                raise OSError(f"{_too_many(ignored_after)}; what it made there is still in the tree")
        except FrogtuiError as err:
            raise OSError(f"what the command changed cannot be read back: {err}") from None
        return kept

    def _put_back(self, before: Before, paths: list[str]) -> None:
        """Write ``paths`` back as they were in ``before`` (git's copy, with the permission bits
        they had), over what the command left there."""
        if not paths:
            return
        with temporary_index(self.repo, before.tree) as env:
            stdin = b"".join(encode(path) + b"\0" for path in paths)
            run_git(self.repo, "checkout-index", "-f", "-z", "--stdin", env=env, stdin=stdin)
        for path in paths:
            if path in before.modes:
                self._chmod(path, before.modes[path])

    def changes(self, before: str, after: str) -> list[Change]:
        """The paths that differ between two trees (no renames: a rename is a deletion and an addition)."""
        out = run_git(self.repo, "diff-tree", "-r", "-z", "--no-renames", before, after)
        fields = out.split(b"\0")
        return [Change(meta.split()[-1].decode()[:1], decode(path)) for meta, path in zip(fields[0::2], fields[1::2], strict=False)
                if meta]

    def _folders(self, tree: str) -> set[str]:
        out = run_git(self.repo, "ls-tree", "-r", "-d", "-z", "--name-only", tree)
        return {decode(p) for p in out.split(b"\0") if p}

    def _inside(self, rel: str) -> str:
        """The path of ``rel`` in the tree, its folders real folders of the tree (never a link)."""
        full = os.path.join(self.root, rel)
        parent = os.path.dirname(full)
        if os.path.realpath(parent) != os.path.normpath(parent):
            raise OSError(errno.ELOOP, f"{rel}: a folder above it is a link")
        return full

    def _chmod(self, rel: str, mode: int) -> None:
        """Give the tree's file ``rel`` (put back from git) the permission bits it had (never through a link)."""
        try:
            fd = os.open(self._inside(rel), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return  # not a file now (the person's, since): left as it is
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def _whiteout(self, rel: str, upper: Path, modes: dict[Path, int]) -> None:
        """Mark ``rel`` deleted in ``upper``: a whiteout at the highest folder of it the command
        removed (a deleted folder is one whiteout, as the kernel's overlay writes it)."""
        parts = rel.split("/")
        for top in range(1, len(parts) + 1):
            try:
                st = os.lstat(os.path.join(self.root, *parts[:top]))
            except FileNotFoundError:
                break
            if not stat.S_ISDIR(st.st_mode):
                return  # a file or a link is there now (a folder became a link): its own change says so
        else:
            return  # something else is there now: its own change says so
        gone = "/".join(parts[:top])
        target = upper / gone
        if os.path.lexists(target):
            return
        self._upper_folder(upper, os.path.dirname(gone), modes)
        os.mknod(target, stat.S_IFCHR | 0o600, os.makedev(0, 0))

    def _move_out(self, rel: str, upper: Path, folders: set[str], modes: dict[Path, int]) -> None:
        """Move the tree's ``rel`` (a file or link; ``name/``: an empty folder) into ``upper``;
        remove the folders above it that are left empty and were not folders before."""
        full = self._inside(rel.rstrip("/"))
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            return
        if rel.endswith("/"):
            self._upper_folder(upper, rel.rstrip("/"), modes)
            os.rmdir(full)
            rel = rel.rstrip("/")
            self._remove_empty(os.path.dirname(rel), folders)
            return
        self._upper_folder(upper, os.path.dirname(rel), modes)
        target = upper / rel
        try:
            os.rename(full, target)
        except OSError as err:
            if err.errno != errno.EXDEV:
                raise
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(full), target)
            else:
                shutil.copyfile(full, target, follow_symlinks=False)
                os.chmod(target, stat.S_IMODE(st.st_mode))
            os.unlink(full)
        self._remove_empty(os.path.dirname(rel), folders)

    def _move_git_folder(self, name: str, upper: Path, modes: dict[Path, int]) -> None:
        """Move the ``.git`` of a nested repository the command made into ``upper`` (then its
        files are the tree's as git sees them; its ``.git`` is an effect of its own, named as one
        that runs later)."""
        rel = f"{name}/.git"
        full = self._inside(rel)
        if not os.path.lexists(full):
            return
        self._upper_folder(upper, name, modes)
        try:
            os.rename(full, upper / rel)
        except OSError as err:
            if err.errno != errno.EXDEV:
                raise
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.copytree(full, upper / rel, symlinks=True)
                shutil.rmtree(full)
            else:
                self._move_out(rel, upper, set(), modes)

    def _remove_empty(self, folder: str, folders: set[str]) -> None:
        """Remove ``folder`` and those above it while empty and not folders before the command."""
        while folder and folder not in folders:
            try:
                os.rmdir(os.path.join(self.root, folder))
            except OSError:
                break
            folder = os.path.dirname(folder)

    def _upper_folder(self, upper: Path, rel: str, modes: dict[Path, int]) -> None:
        """Make the folders down to ``rel`` in ``upper``; ``modes`` gets the tree's folder's mode
        now for each (set once everything is in)."""
        current = upper
        for part in [p for p in rel.split("/") if p]:
            current = current / part
            if not current.is_dir():
                current.mkdir(mode=0o700)
                try:
                    modes[current] = stat.S_IMODE(os.lstat(self.root / current.relative_to(upper)).st_mode)
                except OSError:
                    continue
