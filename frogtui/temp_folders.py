"""frogtui's own temp folder: one a process, removed when the process ends, and swept by the next
frogtui to start when its process could not remove it.

What frogtui keeps for as long as it runs (the sandbox's sanitized git configs and seccomp filter,
the private git indexes of the snapshots, a ``Workspace``'s own temp folder) lives in one folder,
``$TMPDIR/frogtui-process-XXXXXXXX``. The process removes it at exit (``atexit``). A process that
cannot (killed by SIGKILL or the out-of-memory killer, or ended by ``os._exit``) leaves it behind,
so the folder is locked (``flock``) for as long as its process lives, and the next frogtui process
to make its own folder removes every such folder of the same user that nobody holds: a person's
``/tmp`` never fills with frogtui's folders, however its processes end.
"""
from __future__ import annotations

import atexit
import errno
import fcntl
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

PREFIX = "frogtui-process-"
"""The name of a process's folder: ``PREFIX`` and random letters."""
HELD = ".held"
"""Written into a process's folder once its lock is taken: a folder without it may be one whose
process is between making it and locking it, so it is swept only when older than ``STARTING``."""
STARTING = 60.0
"""Seconds after which a folder that was never marked held is taken for a dead process's."""

_lock = threading.Lock()
_mine: dict[int, tuple[Path, int]] = {}
"""This process's folder and the descriptor that holds its lock, by process id (a forked child
makes its own, and never removes its parent's)."""


def process_folder() -> Path:
    """This process's private temp folder (made on first use, after sweeping what dead frogtui
    processes left; mode 0711: a sandbox run as another user may pass through it to what it is
    given)."""
    with _lock:
        pid = os.getpid()
        if pid not in _mine:
            sweep()
            folder = Path(tempfile.mkdtemp(prefix=PREFIX))
            held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            fcntl.flock(held, fcntl.LOCK_EX)
            (folder / HELD).touch()
            os.chmod(folder, 0o711)
            _mine[pid] = (folder, held)
            atexit.register(_remove, pid)
        return _mine[pid][0]


def private_folder(prefix: str) -> Path:
    """A new folder of its own (mode 0700) in ``process_folder()``."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=process_folder()))


def sweep(base: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the folders of frogtui processes that are gone from ``base`` (the system's temp folder
    by default): those of this user that no process holds. Returns what was removed."""
    base = Path(base if base is not None else tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith(PREFIX) and _sweep_one(Path(entry.path)):
            removed.append(Path(entry.path))
    return removed


def _sweep_one(folder: Path) -> bool:
    try:
        info = folder.lstat()
        if not os.path.isdir(folder) or os.path.islink(folder) or info.st_uid != os.getuid():
            return False  # another user's, or not a folder: never ours to remove
        held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False  # its process is alive
            raise
        if not (folder / HELD).exists() and time.time() - info.st_mtime < STARTING:
            return False  # a process may be about to lock it
        shutil.rmtree(folder, ignore_errors=True)
        return True
    except OSError:
        return False
    finally:
        os.close(held)


def _remove(pid: int) -> None:
    if os.getpid() != pid or pid not in _mine:
        return
    folder, held = _mine.pop(pid)
    shutil.rmtree(folder, ignore_errors=True)
    os.close(held)
