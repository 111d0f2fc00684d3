"""Landing a proposal: its accepted effects applied to the working tree, after a stale check.

``land(proposal, accepted)`` first checks every accepted effect against the tree (``stale``): the
tree's entry must still be what the effects were read against (kind, mode, size, link target,
content), and unchanged since the command started (its ctime; a file changed while the command
ran holds the command's copy of the old content). One stale effect and nothing is applied.
Then the effects are applied in order, deletions first, then folders, files, links and modes
in path order; a new file (or link) is written beside its target and renamed over it, a regular
file the tree has (with no other hard link) is written over in place (``_copy_in``: a rename
over 1,000 files made ext4 flush each one); the checkpoint taken before is what undoes a landing
cut short.

A text file accepted in part (``FileHunks``: the person took some hunks of its change) lands as
the tree's file with exactly the accepted hunks (``effect_hunks.partial``), computed against the
tree's file the command ran on (read again and checked against the hash taken then: stale
otherwise), written as any file is.

Every operation goes through folder descriptors opened from the root one component at a time
without following links (``O_NOFOLLOW``): a link in the tree (made by the person meanwhile, or
there all along) never carries a write outside the repository. The caller takes the checkpoint
before and after (one step, as any Write).
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace

from frogtui.protocol import FileHunks
from frogtui.tools.effect_hunks import HunksMismatch, partial, where
from frogtui.tools.effects import BIG, Effect, Entry, digest, left_out, tree_files
from frogtui.tools.observations import ToolOutcome, denied_by_person, denied_by_policy
from frogtui.tools.proposals import Proposal

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path of an effect goes through a link, or a folder became something else."""


@dataclass(frozen=True)
class Partly:
    """A text file that landed in part: where each hunk that was not applied is (``lines 10-14``)."""

    path: str
    left: tuple[str, ...]
    total: int
    """How many hunks the person was shown."""


@dataclass(frozen=True)
class Landed:
    """What landing did.

    Attributes:
        applied: The effects applied (their paths).
        stale: Why each stale effect is stale (then nothing was applied).
        error: Why applying stopped part way ('' when it did not; the checkpoint before it lets
            undo put the tree back).
    """

    applied: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    error: str = ""
    partly: tuple[Partly, ...] = ()
    """The applied text files of which only some hunks landed."""

    @property
    def ok(self) -> bool:
        return not self.stale and not self.error


def accepted_effects(proposal: Proposal, accepted: Collection[str] | None) -> list[Effect]:
    """The effects to land: every one (``accepted`` None) or those whose path is in ``accepted``,
    with the folders the command made above them (a file ticked in a new folder left unticked
    needs the folder: without it the landing stopped part way); never one that is left out
    (``effects.left_out``)."""
    effects = [e for e in proposal.effects if not left_out(e)]
    if accepted is None:
        return effects
    wanted = set(accepted)
    above = {path.rsplit("/", n)[0] for path in wanted for n in range(1, path.count("/") + 1)}
    return [e for e in effects if e.path in wanted or (e.path in above and e.after is not None and e.after.kind == "dir")]


def land(proposal: Proposal, accepted: Collection[str] | None = None, hunks: Sequence[FileHunks] = ()) -> Landed:
    """Apply ``proposal``'s accepted effects to its tree (all of them when ``accepted`` is None);
    of a text file named in ``hunks``, only its accepted hunks.

    Never raises for the disk: a failure is ``Landed.error`` (hunks that are not those of the
    file's change: one, before anything is applied).
    """
    effects = accepted_effects(proposal, accepted)
    replaced = frozenset(e.path for e in effects if e.kind == "deleted" or (e.kind == "modified" and e.before is not None
                                                                            and e.after is not None and e.before.kind != e.after.kind))
    problems = [why for effect in effects for why in stale(effect, proposal, replaced)]
    if problems:
        return Landed(stale=tuple(problems))
    chosen = {choice.path: choice for choice in hunks}
    if len(chosen) != len(hunks):
        twice = next(path for path in chosen if sum(choice.path == path for choice in hunks) > 1)
        return Landed(error=f"{HunksMismatch.__name__}: {twice}: two hunk choices for one file")
    sources: dict[str, str] = {}
    partly: list[Partly] = []
    try:
        for n, effect in enumerate(e for e in effects if e.path in chosen):
            choice = chosen[effect.path]
            content = _partial_content(effect, proposal, choice)
            if content is None:
                return Landed(stale=(f"{effect.path}: it changed in the tree meanwhile",))
            sources[effect.path] = _stage(proposal, n, content, effect)
            left = tuple(where(span, choice.accepted) for span in sorted(choice.rejected))
            if left:
                partly.append(Partly(effect.path, left, len(choice.accepted) + len(choice.rejected)))
    except HunksMismatch as err:
        return Landed(error=f"{type(err).__name__}: {err}")
    except OSError as err:
        return Landed(error=f"{type(err).__name__}: {err}")
    applied: list[str] = []
    try:
        with _Tree(str(proposal.root)) as tree:
            for effect in sorted(effects, key=_deletions_first):
                _apply(tree, effect, str(proposal.upper), sources.get(effect.path))
                applied.append(effect.path)
            tree.set_folder_modes()
    except OSError as err:
        return Landed(applied=tuple(applied), error=f"{type(err).__name__}: {err}")
    return Landed(applied=tuple(applied), partly=tuple(partly))


def _partial_content(effect: Effect, proposal: Proposal, choice: FileHunks) -> bytes | None:
    """The tree's file with ``choice``'s accepted hunks of ``effect`` (None: the tree's file is no
    longer the one the command ran on).

    Raises:
        HunksMismatch: ``effect`` is not a text file's change, or the hunks are not its change's.
        OSError: a side cannot be read.
    """
    after, before = effect.after, effect.before
    if effect.kind not in ("modified", "added") or after is None or after.kind != "file" or (before is not None and before.kind != "file"):
        raise HunksMismatch(f"{effect.path}: only a text file's new or changed content can be accepted in part")
    if effect.binary or effect.big or (before is not None and before.size >= BIG):
        raise HunksMismatch(f"{effect.path}: a binary or big file is accepted whole or not at all")
    new = _read(os.path.join(str(proposal.upper), effect.path))
    old = b"" if before is None else _read(os.path.join(str(proposal.root), effect.path))
    if before is not None and hashlib.sha256(old).hexdigest() != effect.before_digest:
        return None
    try:
        return partial(old, new, choice.accepted, choice.rejected)
    except HunksMismatch as err:
        raise HunksMismatch(f"{effect.path}: {err}") from None


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _stage(proposal: Proposal, n: int, content: bytes, effect: Effect) -> str:
    """``content`` in a file of the proposal's layer folder (out of the sandbox's reach), with the
    mode the command left: what lands at ``effect``'s path instead of the command's file."""
    folder = proposal.layers.folder / "partial"
    folder.mkdir(mode=0o700, exist_ok=True)
    path = str(folder / str(n))
    assert effect.after is not None
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
        os.fchmod(handle.fileno(), effect.after.mode)
    return path


def _deletions_first(effect: Effect) -> tuple[int, tuple[str, ...]]:
    removes = effect.kind == "deleted"
    return (0 if removes else 1, tuple(effect.path.split("/")))


# the stale check -------------------------------------------------------------------------------
def stale(effect: Effect, proposal: Proposal, replaced: frozenset[str] = frozenset()) -> list[str]:
    """Why ``effect`` can no longer land as it was read (empty: it can). ``replaced``: the paths
    another effect landing with it deletes or turns into another kind of entry (a folder that
    becomes a link, a file that becomes a folder): what the tree has there is that effect's to check."""
    root = str(proposal.root)
    problems = []
    places = [(effect.source, effect.before)] if effect.source else [(effect.path, effect.before)]
    if effect.source:
        places.append((effect.path, None))
    for rel, before in places:
        why = _changed(root, rel, before, effect, proposal.started_ns, replaced)
        if why:
            problems.append(f"{rel}: {why}")
    return problems


def _changed(root: str, rel: str, before: Entry | None, effect: Effect, started_ns: int, replaced: frozenset[str] = frozenset()) -> str:
    full = os.path.join(root, rel)
    if _through_link(root, rel, replaced):
        return "a folder above it is now a link"
    now = Entry.of(full)
    if before is None:
        return "" if now is None or rel in replaced else "it was made in the tree after the command ran"
    if now is None:
        return "it was deleted from the tree meanwhile"
    if (now.kind, now.mode, now.target) != (before.kind, before.mode, before.target) or (now.kind == "file" and now.size != before.size):
        return "it changed in the tree meanwhile"
    if now.kind == "file" and effect.before_digest and digest(full) != effect.before_digest:
        return "it changed in the tree meanwhile"
    if now.kind == "dir" and effect.kind != "mode":  # deleted, renamed, or replaced by a file or link
        try:
            if tuple(tree_files(full)) != effect.files:
                return "what the folder holds changed meanwhile"
        except OSError as err:
            return f"what the folder holds cannot be listed ({err})"
        if any(_ctime(os.path.join(full, name)) > started_ns for name in effect.files):
            return "a file in it changed while the command ran"
    if now.kind != "dir" and _ctime(full) > started_ns:
        return "it changed while the command ran"
    return ""


def _ctime(path: str) -> int:
    try:
        return os.lstat(path).st_ctime_ns
    except OSError:
        return 0


def _through_link(root: str, rel: str, replaced: frozenset[str] = frozenset()) -> bool:
    current, parts = root, rel.split("/")[:-1]
    for n, part in enumerate(parts, start=1):
        current = os.path.join(current, part)
        if "/".join(parts[:n]) in replaced:
            return False  # an effect landing first makes it a folder (``land`` goes through descriptors, never a link)
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return True
        except FileNotFoundError:
            return False
    return False


# applying --------------------------------------------------------------------------------------
class _Tree:
    """The working tree reached through descriptors, never through a link."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.fd = -1
        self.modes: list[tuple[str, int]] = []
        """Folders' modes, set last (a read-only folder would refuse what lands in it)."""

    def set_folder_modes(self) -> None:
        for rel, mode in sorted(self.modes, key=lambda item: -item[0].count("/")):
            with self.parent(rel) as (fd, name):
                folder = os.open(name, _DIR_FLAGS, dir_fd=fd)
                try:
                    os.fchmod(folder, mode)
                finally:
                    os.close(folder)

    def __enter__(self) -> _Tree:
        self.fd = os.open(self.root, _DIR_FLAGS)
        return self

    def __exit__(self, *_exc: object) -> None:
        os.close(self.fd)

    @contextlib.contextmanager
    def parent(self, rel: str) -> Iterator[tuple[int, str]]:
        """The folder holding ``rel`` (a descriptor, every folder opened without following a
        link) and ``rel``'s last name."""
        parts = rel.split("/")
        fds: list[int] = []
        fd = self.fd
        try:
            for part in parts[:-1]:
                try:
                    fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as err:
                    raise UnsafePath(err.errno, f"{rel}: a folder above it is not a folder of the tree ({err.strerror})") from None
                fds.append(fd)
            yield fd, parts[-1]
        finally:
            for opened in reversed(fds):
                os.close(opened)


def _apply(tree: _Tree, effect: Effect, upper: str, staged: str | None = None) -> None:
    """Apply one effect; ``staged``: the file to put at its path instead of the command's (a text
    file accepted in part)."""
    if effect.kind == "deleted":
        _remove(tree, effect.path)
        return
    if effect.kind == "renamed":
        _remove(tree, effect.source)
    if effect.kind == "mode":
        assert effect.after is not None
        _chmod(tree, effect.path, effect.after.mode)
        return
    after = effect.after
    assert after is not None
    if effect.kind == "modified" and effect.before is not None and effect.before.kind != after.kind:
        _remove(tree, effect.path)
    source = staged or os.path.join(upper, effect.path)
    if after.kind == "dir" and effect.kind == "renamed":
        _copy_in(tree, effect.path, source)  # the upper layer holds the whole renamed folder, subfolders first made
    elif after.kind == "dir":
        _make_folder(tree, effect.path, after.mode)
    else:
        _copy_in(tree, effect.path, source)


def _remove(tree: _Tree, rel: str) -> None:
    with tree.parent(rel) as (fd, name):
        try:
            st = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=fd)  # the descriptor-based walk: links are removed, never followed
        else:
            os.unlink(name, dir_fd=fd)


def _make_folder(tree: _Tree, rel: str, mode: int) -> None:
    with tree.parent(rel) as (fd, name):
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode):
                raise
    tree.modes.append((rel, mode))


def _copy_in(tree: _Tree, rel: str, source: str) -> None:
    """Put the upper layer's ``source`` (a file, a link or a folder) at ``rel``. A file the tree
    has is written over in place (no rename, no truncation to zero: ext4 would flush each one,
    ``auto_da_alloc``); anything else is made under a temporary name beside it and renamed over it."""
    st = os.lstat(source)
    if stat.S_ISDIR(st.st_mode):
        _make_folder(tree, rel, stat.S_IMODE(st.st_mode))
        for name in sorted(os.listdir(source)):
            _copy_in(tree, f"{rel}/{name}", os.path.join(source, name))
        return
    if not (stat.S_ISLNK(st.st_mode) or stat.S_ISREG(st.st_mode)):
        return  # a FIFO or socket is never carried over
    with tree.parent(rel) as (fd, name):
        if stat.S_ISREG(st.st_mode) and _write_over(source, fd, name, stat.S_IMODE(st.st_mode)):
            return
        temporary = f".frogtui-landing-{os.urandom(6).hex()}"  # short: a name of 255 bytes has no room for more
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary, dir_fd=fd)
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(source), temporary, dir_fd=fd)
        else:
            writer = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
            _copy_bytes(source, writer, stat.S_IMODE(st.st_mode))
        try:
            os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except IsADirectoryError:
            shutil.rmtree(name, dir_fd=fd)
            os.rename(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)


def _write_over(source: str, fd: int, name: str, mode: int) -> bool:
    """Write ``source``'s bytes over the tree's regular file ``name`` (False: there is none, or
    it has other hard links: a link, a folder or nothing is never opened, another name of the
    same file never changed)."""
    try:
        writer = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        return False
    st = os.fstat(writer)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:  # a hard link's other names keep their bytes
        os.close(writer)
        return False
    _copy_bytes(source, writer, mode)
    return True


def _copy_bytes(source: str, writer: int, mode: int) -> None:
    """Copy ``source`` into the open ``writer`` from its start, cut it to that size, set ``mode``;
    closes ``writer``."""
    try:
        reader = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            size = os.fstat(reader).st_size
            if _has_holes(reader, size):  # ``truncate -s 10G``: the holes stay holes, never 10 GB of zeros
                os.ftruncate(writer, 0)
                _copy_data(reader, writer, size)
                offset = size
            else:
                offset = _copy_range(reader, writer, size)
            os.ftruncate(writer, offset)
            if stat.S_IMODE(os.fstat(writer).st_mode) != mode:
                os.fchmod(writer, mode)
        finally:
            os.close(reader)
    finally:
        os.close(writer)


def _has_holes(reader: int, size: int) -> bool:
    try:
        return os.lseek(reader, 0, os.SEEK_HOLE) < size
    except OSError:
        return False


def _copy_data(reader: int, writer: int, size: int) -> None:
    """Copy only the parts of ``reader`` that hold data (``SEEK_DATA``), each to the same offset."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(reader, offset, os.SEEK_DATA)
        except OSError as err:
            if err.errno == errno.ENXIO:  # nothing but a hole after offset
                return
            raise
        end = min(os.lseek(reader, start, os.SEEK_HOLE), size)
        _copy_range(reader, writer, end, start)
        offset = end


def _copy_range(reader: int, writer: int, size: int, start: int = 0) -> int:
    """Copy the bytes of ``reader`` from ``start`` up to ``size`` to the same offsets of
    ``writer`` (in the kernel where it can); the offset reached."""
    offset = start
    try:
        while offset < size:
            copied = os.copy_file_range(reader, writer, size - offset, offset, offset)
            if not copied:
                return offset
            offset += copied
        return offset
    except OSError as err:
        if err.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
    while offset < size:
        chunk = os.pread(reader, min(1 << 20, size - offset), offset)
        if not chunk:
            return offset
        offset += os.pwrite(writer, chunk, offset)
    return offset


def _chmod(tree: _Tree, rel: str, mode: int) -> None:
    """Set ``rel``'s mode (a folder's at the end, after what lands inside it); a link is left as it is."""
    with tree.parent(rel) as (fd, name):
        st = os.lstat(name, dir_fd=fd)
        if stat.S_ISDIR(st.st_mode):
            tree.modes.append((rel, mode))
        elif not stat.S_ISLNK(st.st_mode):
            os.chmod(name, mode, dir_fd=fd)


# what the model is told ------------------------------------------------------------------------
NOT_UNDONE_NOTE = ("Note: this command ran on the working tree itself (no copy-on-write view here); its changes to these "
                   "files git ignores could not be put back and stay as it left them: {paths}")
NOT_UNDONE_SHOWN = 20


def outcome(proposal: Proposal, allowed: bool, reason: str, landed: Landed | None, *, by: str = "rule") -> ToolOutcome:
    """``decided_outcome``, after a note naming what a proposal run in place could not put back."""
    found = decided_outcome(proposal, allowed, reason, landed, by=by)
    if not proposal.not_undone:
        return found
    paths = list(proposal.not_undone)
    named = ", ".join(paths[:NOT_UNDONE_SHOWN]) + (f" and {len(paths) - NOT_UNDONE_SHOWN} more" if len(paths) > NOT_UNDONE_SHOWN else "")
    return replace(found, observation=NOT_UNDONE_NOTE.format(paths=named) + "\n" + found.observation)


def decided_outcome(proposal: Proposal, allowed: bool, reason: str, landed: Landed | None, *, by: str = "rule") -> ToolOutcome:
    """The call's outcome once the proposal is decided (``allowed``: its effects, or some, were
    to land; ``reason``: why not, ``by`` whom): the command's own observation (held back until
    now), after a note when not all of what it did was applied, or, when none was to land, after
    the denial as any denied call's (Leaf's ``PermissionError: …``, the person's words)."""
    result = proposal.result
    observation = result.observation
    code = result.exit_code
    if proposal.failed and proposal.in_place:
        return ToolOutcome(f"OSError: {proposal.failed}; what it changed may still be in the tree (undo goes back to the "
                           f"checkpoint before it)\n{observation}", ok=False, error="OSError")
    if proposal.failed:
        return ToolOutcome(f"OSError: the proposal's copy-on-write view could not be made; the command did not run\n{observation}",
                           ok=False, error="OSError")
    if result.cancelled or result.timed_out:
        note = f"Note: {proposal.ran_as}; nothing it changed was applied\n" if proposal.effects.items else ""
        return ToolOutcome(note + observation, ok=False, exit_code=None, cancelled=result.cancelled, timed_out=result.timed_out)
    if not allowed:
        denial = denied_by_person(reason) if by == "person" else denied_by_policy(reason)
        return ToolOutcome(f"{denial}\n{observation}", ok=False, exit_code=code, denied=True)
    if landed is not None and landed.stale:
        stale = "; ".join(landed.stale)
        return ToolOutcome(f"Note: {proposal.ran_as}; its changes were not applied: the tree changed meanwhile ({stale})\n{observation}",
                           ok=False, exit_code=code)
    if landed is not None and landed.error:
        return ToolOutcome(f"Note: {proposal.ran_as}; applying its changes stopped part way: {landed.error}\n{observation}", ok=False,
                           exit_code=code, error=landed.error.split(":", 1)[0])
    applied = set(landed.applied) if landed is not None else set()
    left = [e.describe(full=False) for e in proposal.effects if not left_out(e) and e.path not in applied]
    notes = [f"only some of its changes were applied; not applied: {'; '.join(left)}"] if left else []
    notes += [partly_note(part) for part in (landed.partly if landed is not None else ())]
    if notes:
        return ToolOutcome(f"Note: {proposal.ran_as}; {'; '.join(notes)}\n{observation}", ok=code == 0, exit_code=code)
    return ToolOutcome(observation, ok=code == 0, exit_code=code)


def partly_note(part: Partly) -> str:
    """``its changes to src/a.py were applied except 2 of 5 hunks (lines 10-14, after line 30)``:
    where each hunk not applied is in the file as it now is."""
    return f"its changes to {part.path} were applied except {len(part.left)} of {part.total} hunks ({', '.join(part.left)})"
