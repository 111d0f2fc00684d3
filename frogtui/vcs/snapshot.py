"""Snapshots of the working tree as git tree objects, made through a private index so the
person's index, stash and branches are never touched.

The private index lives as long as the process (one per repository): it starts as a copy of the
person's index and is brought up to date at each snapshot with what ``git status`` (its stat data
and untracked cache) says changed since the last one, so a changed tree costs about what
``git stash create`` costs instead of a full ``git add --all`` search for untracked files; while
the kernel says nothing in the tree changed since the last snapshot (``vcs.watch``), the last
tree is the snapshot, without running git."""
from __future__ import annotations

import io
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import git

from frogtui.errors import FrogtuiError
from frogtui.temp_folders import private_folder
from frogtui.vcs.gitguard import open_pinned
from frogtui.vcs.nested import leave_out
from frogtui.vcs.watch import TreeWatch

STATUS_ARGS = (
    "-c", "core.untrackedCache=true", "-c", "core.quotePath=false",
    "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--ignore-submodules=dirty", "--no-renames",
)
"""What changed since the private index was last written: modified, deleted and untracked paths
(an untracked folder as ``dir/``); a submodule counts only when its commit moved, as for ``git add``."""


class SnapshotFailed(FrogtuiError):
    """git could not record the working tree (for example a ``.gitattributes`` filter such as
    git-lfs is configured but not installed)."""


def open_repo(root: str | os.PathLike[str]) -> git.Repo | None:
    """The git repository whose working tree is ``root``, or None when it is not one; pinned and
    hardened (``gitguard``): no hooks, no fsmonitor, no discovery after this."""
    return open_pinned(root)


@dataclass
class _PrivateIndex:
    path: Path
    lock: threading.Lock
    seeded: bool = False
    tree: str | None = None
    """The tree written from this index the last time (still the working tree when nothing changed)."""
    nested: tuple[str, ...] = ()
    """The nested repositories left out of ``tree`` (``vcs.nested``)."""
    sparse: bool = False
    """Some entries keep ``skip-worktree`` (absent files of a sparse checkout): check them each time."""
    watched: tuple[Path, ...] = ()
    """The person's index and the exclude files: when one changes, the index is copied again."""
    fingerprint: tuple[tuple[int, int, int] | None, ...] = ()
    tracked_ignored: bytes = b""
    """The files the person's index tracks although they are ignored (``git add -f``)."""
    watch: TreeWatch | None = None
    """The working tree's folders, watched (for the ``MAX_WATCHED`` repositories snapshotted last)."""


_indexes: dict[tuple[str, int, int, str], _PrivateIndex] = {}
_indexes_lock = threading.Lock()
_folder: list[str] = []
MAX_WATCHED = 8
"""Working trees watched at once (each holds an inotify instance; a test run makes hundreds)."""
_watched: list[_PrivateIndex] = []


def _unchanged(repo: git.Repo, private: _PrivateIndex) -> bool:
    """Whether the kernel vouches that nothing in the working tree changed since the last snapshot
    (``vcs.watch``; a repository with submodules is never vouched for: their HEADs live in
    ``.git/modules``). Called before a watched snapshot's ``git status``: it watches a new tree
    first (so a session that never trusts the watch never walks its tree; a snapshot that does not
    ask leaves the events for the next one that does, which then asks git)."""
    root = repo.working_tree_dir
    if root is None:
        return False
    with _indexes_lock:
        if private in _watched:
            _watched.remove(private)
        _watched.append(private)
        if len(_watched) > MAX_WATCHED:
            evicted = _watched.pop(0)
            if evicted.watch is not None:
                evicted.watch.close()
                evicted.watch = None
    if private.watch is None:
        private.watch = TreeWatch(root)
    if private.watch.changed() or os.path.exists(os.path.join(repo.common_dir, "modules")):
        return False
    identity = getattr(repo.git, "identity", None)  # what every git command checks first (vcs.gitguard)
    if identity is not None:
        identity.check()
    return True


def _private_index(repo: git.Repo) -> _PrivateIndex:
    git_dir = os.path.realpath(repo.git_dir)
    try:
        stat = os.stat(git_dir)
        identity = (stat.st_dev, stat.st_ino)
    except OSError:  # gone: the next git command says so (RepositoryChanged)
        identity = (0, 0)
    key = (git_dir, *identity, os.path.realpath(repo.working_tree_dir or "."))
    with _indexes_lock:
        if key not in _indexes:
            if not _folder:
                _folder.append(str(private_folder("index-")))
            _indexes[key] = _PrivateIndex(Path(_folder[0]) / f"index-{len(_indexes)}", threading.Lock())
        return _indexes[key]


@dataclass(frozen=True)
class Snapshot:
    tree: str
    nested: tuple[str, ...] = ()
    """Nested git repositories that are not submodules, left out of ``tree`` (``vcs.nested``)."""


def snapshot_tree(repo: git.Repo) -> str:
    """The sha of ``snapshot(repo)``'s tree."""
    return snapshot(repo).tree


def snapshot(repo: git.Repo, *, watched: bool = False) -> Snapshot:
    """Write the working tree (tracked and untracked files, minus what .gitignore ignores, minus
    nested repositories that are not submodules) as a tree object. The person's index is copied
    once, never written. ``watched``: the last tree is taken while the kernel says nothing in the
    tree changed (``vcs.watch``), for a caller whose commands cannot do what it cannot see (a
    sandboxed session's checkpoints); else git always looks."""
    private = _private_index(repo)
    with private.lock:
        env = {"GIT_INDEX_FILE": str(private.path)}
        try:
            quiet = watched and _unchanged(repo, private)  # asked first: the status below is what it vouches for next time
            if not private.seeded or _must_copy_again(repo, private):
                _seed(repo, private, env)
            elif private.sparse:
                private.sparse = _see_hidden_changes(repo, env)
            elif quiet and private.tree is not None:
                return Snapshot(private.tree, private.nested)
            changed, folders = _changed_paths(repo, env)
            if private.tree is not None and any(path.rsplit(b"/", 1)[-1] == b".gitignore" for path in changed):
                _seed(repo, private, env)  # what is ignored changed: start again from the person's index
                changed, folders = _changed_paths(repo, env)
            if changed:
                changed, private.nested = leave_out(repo, env, changed, folders)
            beyond = [path for path in changed if _beyond_link(repo, path)] if changed else []
            if beyond:  # ``mv docs d2 && ln -s d2 docs``: git add refuses docs/guide.md; it is gone from the tree
                changed = [path for path in changed if path not in set(beyond)]
                with _nul_file(beyond) as handle:
                    repo.git.update_index("--force-remove", "-z", "--stdin", env=env, istream=handle)
            if changed:
                with _nul_file(changed) as handle:
                    literal = {**env, "GIT_LITERAL_PATHSPECS": "1"}
                    repo.git.add("--all", "--pathspec-from-file=-", "--pathspec-file-nul", env=literal, istream=handle)
            if changed or beyond or private.tree is None:
                private.tree = repo.git.write_tree(env=env)
            return Snapshot(private.tree, private.nested)
        except git.exc.GitCommandError as err:
            private.seeded, private.tree = False, None  # start again from the person's index next time
            raise SnapshotFailed(snapshot_failure(err)) from None
        except BaseException:  # the watch's events are read: without this, the next snapshot would take the old tree
            private.seeded, private.tree = False, None
            raise


def _seed(repo: git.Repo, private: _PrivateIndex, env: dict[str, str]) -> None:
    """Start the private index from the person's (its stat data, so only changed files are hashed).

    A file once added stays in the private index even when it becomes ignored, where a copy of the
    person's index would leave it out; so the index is copied again whenever what is ignored may
    have changed (``info/exclude``, ``core.excludesFile``, a ``.gitignore``) or the person's index
    tracks other ignored files than before."""
    person = Path(repo.git_dir) / "index"
    private.watched = (person, Path(repo.git_dir) / "info" / "exclude", *_config_files(repo), *_excludes_files(repo))
    private.fingerprint = _fingerprint(private.watched)
    private.tracked_ignored = _tracked_ignored(repo)
    private.path.unlink(missing_ok=True)
    if person.exists():
        # copy2 keeps the index file's mtime, which git needs to spot "racily clean" entries
        # (a same-size edit in the same second)
        shutil.copy2(person, private.path)
    private.sparse = _see_hidden_changes(repo, env)
    private.tree = None
    private.seeded = True


def _must_copy_again(repo: git.Repo, private: _PrivateIndex) -> bool:
    """Whether an exclude file or git's settings (which name the excludes file) changed, or the
    person's index changed in a way that matters here: it tracks other ignored files (``git add
    -f``, ``git rm --cached``). Its other changes (a ``git status`` refreshing its stat data, a
    commit) leave the snapshot as it is."""
    now = _fingerprint(private.watched)
    if now == private.fingerprint:
        return False
    if now[1:] != private.fingerprint[1:]:
        return True
    private.fingerprint = now
    return _tracked_ignored(repo) != private.tracked_ignored


def _tracked_ignored(repo: git.Repo) -> bytes:
    out = repo.git.ls_files("-z", "--cached", "--ignored", "--exclude-standard", stdout_as_string=False, strip_newline_in_stdout=False)
    return bytes(out)


def _config_files(repo: git.Repo) -> list[Path]:
    """Where git reads its settings (``core.excludesFile`` among them): the repository's, the
    person's and the system's."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [Path(repo.common_dir) / "config", Path(repo.git_dir) / "config.worktree", Path(home) / ".gitconfig",
            Path(xdg) / "git" / "config", Path("/etc/gitconfig")]


def _excludes_files(repo: git.Repo) -> list[Path]:
    """``core.excludesFile``, or git's default for it."""
    try:
        configured = repo.git.config("--path", "--get", "core.excludesFile").strip()
    except git.exc.GitCommandError:  # not set
        configured = ""
    if configured:
        return [Path(configured)]
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return [Path(base) / "git" / "ignore"]


def _fingerprint(paths: tuple[Path, ...]) -> tuple[tuple[int, int, int] | None, ...]:
    result = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            result.append(None)
            continue
        result.append((stat.st_mtime_ns, stat.st_size, stat.st_ino))
    return tuple(result)


def _nul_file(paths: list[bytes]) -> IO[bytes]:
    """A temporary file holding ``paths``, each ended by NUL, read from its start (git's stdin)."""
    handle = tempfile.TemporaryFile(prefix="frogtui-stdin-")
    handle.write(b"".join(path + b"\0" for path in paths))
    handle.seek(0)
    return handle


def _beyond_link(repo: git.Repo, path: bytes) -> bool:
    """Whether a folder on the way to ``path`` is now a symbolic link or a file (the path is then
    gone from the working tree, and ``git add`` refuses to name it)."""
    folder = os.fsencode(repo.working_tree_dir or ".")
    parts = path.split(b"/")[:-1]
    for n in range(1, len(parts) + 1):
        leading = os.path.join(folder, *parts[:n])
        if os.path.islink(leading) or not os.path.isdir(leading):
            return True
    return False


def _changed_paths(repo: git.Repo, env: dict[str, str]) -> tuple[list[bytes], list[bytes]]:
    """Paths whose working-tree state differs from the private index, untracked ones included;
    and the untracked folders among them (one ``dir/`` entry each)."""
    out = repo.git.execute(["git", *STATUS_ARGS], env=env, stdout_as_string=False, strip_newline_in_stdout=False)
    paths, folders = [], []
    for record in out.split(b"\0"):
        if len(record) < 4:
            continue
        status, path = record[:2], record[3:]
        if status == b"??" or status[1:] != b" ":
            paths.append(path.rstrip(b"/") or path)
            if status == b"??" and path.endswith(b"/"):
                folders.append(paths[-1])
    return paths, folders


def _see_hidden_changes(repo: git.Repo, env: dict[str, str]) -> bool:
    """In the private index, clear ``assume-unchanged`` and (for files present on disk)
    ``skip-worktree``: ``git add`` would otherwise not see changes to those files (or refuse to
    run), and a checkpoint that misses them cannot rewind them. Absent skip-worktree files (outside
    a sparse checkout) keep the bit, so they are not taken as deleted; returns whether any did."""
    out = repo.git.ls_files("-v", "-z", env=env, stdout_as_string=False, strip_newline_in_stdout=False)
    assumed, skipped, kept = [], [], False
    for record in out.split(b"\0"):
        if len(record) < 3:
            continue
        tag, path = record[:1], record[2:]
        if tag.islower():
            assumed.append(path)
        if tag in (b"S", b"s"):
            if os.path.lexists(Path(repo.working_tree_dir or ".") / os.fsdecode(path)):
                skipped.append(path)
            else:
                kept = True
    for flag, paths in (("--no-assume-unchanged", assumed), ("--no-skip-worktree", skipped)):
        if paths:
            with tempfile.TemporaryFile(prefix="frogtui-stdin-") as handle:
                handle.write(b"\0".join(paths) + b"\0")
                handle.seek(0)
                repo.git.update_index(flag, "-z", "--stdin", env=env, istream=handle)
    return kept


def snapshot_failure(err: git.exc.GitCommandError) -> str:
    """The one line shown when the working tree cannot be recorded."""
    text = err.stderr.strip() if isinstance(err.stderr, str) else str(err)
    lines = [line.strip() for line in text.removeprefix("stderr: ").strip("'\n ").splitlines() if line.strip()]
    text = lines[-1] if lines else "git add failed"
    hint = ""
    if "filter" in text:
        hint = (" A .gitattributes filter is configured but does not work here (is git-lfs or the filter's "
                "program installed?); plain `git add` fails the same way.")
    return f"cannot record the working tree, so checkpoints and review cannot work: {text}.{hint}"


PATCH_CAP = 32 * 2**20
"""The most bytes of a session's diff held as its trajectory's ``output_patch``: a larger one is
recorded as its files' ``diff --git`` lines and a note saying how to see it (a 150 MB file written
by the model cost frogtui 600 MB when its diff was held whole, several times over)."""
DIFF_ARGS = ("diff", "--binary", "--no-color", "--no-ext-diff", "--no-textconv")
"""The binary-safe diff, whatever the person's git config says (``gitguard`` pins the rest)."""


class OverCap(Exception):
    """A streamed git output grew past its cap: git is stopped (its output pipe closed)."""


class Capped:
    """A binary stream that takes at most ``cap`` bytes (None: any) into ``handle``, counting them;
    one more raises ``OverCap``."""

    def __init__(self, handle: IO[bytes], cap: int | None) -> None:
        self.handle, self.cap, self.total = handle, cap, 0

    def write(self, data: bytes) -> int:
        self.total += len(data)
        if self.cap is not None and self.total > self.cap:
            raise OverCap
        return self.handle.write(data)

    def flush(self) -> None:
        self.handle.flush()


def stream_git(repo: git.Repo, args: tuple[str, ...], out: Capped) -> tuple[int, str]:
    """Run ``git ARGS`` hardened (``gitguard``), its output written to ``out`` a chunk at a time as
    git writes it: (its exit status, its error text); over ``out``'s cap git is stopped (status 0)."""
    try:
        status, _, err = repo.git.execute(
            ["git", *args], output_stream=out, with_extended_output=True, with_exceptions=False,
            stdout_as_string=False,
        )
    except OverCap:
        return 0, ""
    return status, str(err)


def diff_trees(repo: git.Repo, before: str, after: str, cap: int | None = PATCH_CAP) -> str:
    """The binary-safe unified diff from tree ``before`` to tree ``after``; larger than ``cap``
    bytes, its files' ``diff --git`` lines and a note instead (never held whole).

    Raises:
        FrogtuiError: git failed.
    """
    if before == after:
        return ""
    buffer = io.BytesIO()
    out = Capped(buffer, cap)
    status, err = stream_git(repo, (*DIFF_ARGS, before, after), out)
    if cap is not None and out.total > cap:
        del buffer
        names = repo.git.diff("--name-only", "-z", "--no-renames", before, after, stdout_as_string=False).split(b"\0")
        heads = "".join(f"diff --git a/{n} b/{n}\n" for n in (name.decode("utf-8", "surrogateescape") for name in names) if n)
        size = f"{cap // 2**20} MiB" if cap >= 2**20 else f"{cap:,} bytes"
        return heads + f"# frogtui: this diff is larger than {size}; its text is left out (git diff {before} {after})\n"
    if status != 0:
        raise FrogtuiError(f"git diff failed: {err.strip()}")
    return buffer.getvalue().decode("utf-8", "surrogateescape")
