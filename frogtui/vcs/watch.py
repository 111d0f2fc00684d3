"""Whether anything in a working tree may have changed since the last look, told by the kernel
(inotify), so that a checkpoint of an unchanged tree costs no ``git status``: with one file a
folder, git's untracked cache still reads every folder, and a checkpoint before ``true`` cost
1.2-1.33x ``git stash create`` on a 5,000-file tree (docs/PERFORMANCE.md).

``TreeWatch`` watches every folder of the working tree (only the repository's own ``.git`` is left
out; a nested repository's is watched, so a move of its HEAD counts) for files and folders
created, written, closed after writing, moved, deleted or given other metadata (mode, times, link
count). Reading changes nothing. It never vouches for what it cannot see: no inotify here, a
folder it cannot watch, more than ``MAX_FOLDERS`` folders, the kernel's queue overflowed or a
folder moved (its subfolders' paths are stale) all count as "changed"; a folder moved or an
overflow also has the whole tree watched again, before the caller asks git. The caller (``vcs.snapshot``)
asks ``changed()`` before each snapshot and runs ``git status`` whenever it says True: a watch is
set up (``start``) before the first ``git status`` it vouches for, and a folder made meanwhile is
watched (with what it holds) before ``changed()`` returns, so nothing can change unseen between
the status and the watch.

What inotify cannot see: writes through a memory mapping while it is open (its release is seen),
writes through a hard link from outside the tree, a file system mounted over a folder, and changes
made by another machine to a network file system. So the watch gives up on a tree that is not on a
local file system or has a file system mounted inside it, and looks again (``start``) whenever
the mount table changes (``/proc/self/mountinfo`` polled); and ``vcs.snapshot`` trusts it only
for a session whose commands run in the sandbox, which cannot link out of the tree (its folders
are separate mounts), mount, or leave a process behind (bubblewrap's PID namespace).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import struct
from collections.abc import Iterator

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x01000000, 0x02000000, 0x40000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF
        | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
"""What a watched folder reports: every change to what it holds or to itself, never a read."""
MAX_FOLDERS = 25_000
"""A larger tree is not watched: watching costs a walk of every folder at the first snapshot that
trusts it (about 18 µs a folder here: 0.4 s for 20,000) and again after a folder moves."""
EVENT = struct.Struct("iIII")
"""``struct inotify_event`` without its name: wd, mask, cookie, len."""
LOCAL_FILE_SYSTEMS = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "bcachefs", "reiserfs", "jfs", "nilfs2", "tmpfs", "ramfs",
    "overlay", "vfat", "exfat", "ntfs3", "hfsplus",
})
"""File systems whose every change goes through this kernel (not NFS, SMB, FUSE, 9p, virtiofs...)."""
MOUNTINFO = "/proc/self/mountinfo"


def _unescape(field: bytes) -> bytes:
    """A path of ``mountinfo`` (space, tab, newline and backslash are written as octal escapes)."""
    for code in (b"\\040", b"\\011", b"\\012", b"\\134"):
        field = field.replace(code, bytes([int(code[1:], 8)]))
    return field


def mount_problem(root: bytes, table: bytes) -> str | None:
    """Why a tree at ``root`` (a real path) cannot be watched, from the mount table: a file system
    whose changes may not pass through this kernel, or one mounted inside the tree."""
    best, kind = b"", ""
    for line in table.splitlines():
        left, _, right = line.partition(b" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or not rest:
            continue
        point = _unescape(fields[4])
        if point.startswith(root + b"/"):
            return f"a file system is mounted inside the tree, at {os.fsdecode(point)}"
        if (root == point or root.startswith(point.rstrip(b"/") + b"/")) and len(point) >= len(best):
            best, kind = point, os.fsdecode(rest[0])
    if kind not in LOCAL_FILE_SYSTEMS:
        return f"on a {kind or 'unknown'} file system (changes made elsewhere are not reported)"
    return None


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):  # not Linux, or a libc without inotify
        return None
    return libc


class TreeWatch:
    """The folders of the working tree at ``root``, watched. ``changed()`` says whether anything
    may have changed since the last call (True the first time, and always when it cannot tell)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.fsencode(os.path.realpath(root))
        self._libc = _libc()
        self._fd = -1
        self._folders: dict[int, bytes] = {}
        """Each watch's folder."""
        self.given_up: str | None = None
        """Why this tree is not watched at all (then ``changed()`` is always True)."""
        self.ok = False
        """Watching, and nothing missed since the last ``start``."""
        self.blocked: str | None = None
        """Why the tree is not watched for now, from the mount table (looked at again each time)."""
        self._mounts: int = -1
        """``/proc/self/mountinfo``, open: polled, it says when the mount table changed."""

    @property
    def folders(self) -> int:
        return len(self._folders)

    def start(self) -> bool:
        """Watch every folder of the tree again (the first time, and after an overflow or a move);
        False when it cannot (``given_up`` says why, for good)."""
        self.close()
        if self.given_up is not None:
            return False
        if self._libc is None:
            self.given_up = "no inotify"
            return False
        try:
            self._mounts = os.open(MOUNTINFO, os.O_RDONLY | os.O_CLOEXEC)
            problem = mount_problem(self.root, _read_all(self._mounts))
        except OSError as err:
            problem = f"cannot read the mount table: {err.strerror}"
        if problem is not None:  # looked at again at the next call: mounts come and go
            self.close()
            self.blocked = problem
            return False
        self.blocked = None
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            self.given_up = f"inotify_init1: {os.strerror(ctypes.get_errno())}"
            return False
        self.ok = self._add_tree(self.root)
        if not self.ok:
            self.close()
        return self.ok

    def _add_tree(self, top: bytes) -> bool:
        """Watch ``top`` and every folder under it; False when one could not be watched."""
        pending = [top]
        while pending:
            folder = pending.pop()
            wd = self._libc.inotify_add_watch(self._fd, folder, MASK)  # type: ignore[union-attr]
            if wd < 0:
                err = ctypes.get_errno()
                if err in (errno.ENOENT, errno.ENOTDIR) and folder != self.root:  # gone meanwhile: its parent saw that
                    continue
                self.given_up = f"cannot watch {os.fsdecode(folder)}: {os.strerror(err)}"
                return False
            self._folders[wd] = folder
            if len(self._folders) > MAX_FOLDERS:
                self.given_up = f"more than {MAX_FOLDERS} folders"
                return False
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False) and not (folder == self.root and entry.name == b".git"):
                            pending.append(entry.path)
            except FileNotFoundError:
                continue
            except OSError as err:
                self.given_up = f"cannot read {os.fsdecode(folder)}: {err.strerror}"
                return False
        return True

    def changed(self) -> bool:
        """Whether anything may have changed since the last call. Folders made since are watched
        before this returns; after an overflow or a folder's move the whole tree is again."""
        if not self.ok:
            self.start()
            return True
        seen, restart = False, self._mounts_changed()
        for wd, mask, name in self._events():
            seen = True
            if mask & (IN_Q_OVERFLOW | IN_UNMOUNT) or mask & IN_ISDIR and mask & IN_MOVED_FROM or mask & IN_MOVE_SELF:
                restart = True  # missed events, or watched folders whose paths are stale
            elif mask & IN_IGNORED or mask & IN_DELETE_SELF:
                if self._folders.pop(wd, None) == self.root:
                    restart = True
            elif mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO) and wd in self._folders and not restart:
                if not self._add_tree(os.path.join(self._folders[wd], name)):
                    self.close()
                    return True
        if restart or self._fd < 0:
            self.start()
        return seen or restart

    def _events(self) -> Iterator[tuple[int, int, bytes]]:
        while self._fd >= 0:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                self.close()
                yield -1, IN_Q_OVERFLOW, b""
                return
            offset = 0
            while offset + EVENT.size <= len(data):
                wd, mask, _cookie, length = EVENT.unpack_from(data, offset)
                name = data[offset + EVENT.size : offset + EVENT.size + length].rstrip(b"\0")
                offset += EVENT.size + length
                yield wd, mask, name

    def _mounts_changed(self) -> bool:
        """Whether something was mounted or unmounted since the mount table was last read."""
        poller = select.poll()
        poller.register(self._mounts, select.POLLPRI | select.POLLERR)
        return bool(poller.poll(0))

    def close(self) -> None:
        for fd in (self._fd, self._mounts):
            if fd >= 0:
                os.close(fd)
        self._fd, self._mounts, self._folders, self.ok = -1, -1, {}, False


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)
