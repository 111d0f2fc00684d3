"""Landlock's abstract-socket scope for a sandbox that shares the host's network namespace.

With ``[sandbox] network = true`` the sandbox keeps the host's network namespace, and with it every
abstract Unix socket (X11's ``@/tmp/.X11-unix/X0``, some D-Bus buses, agents): no file mount can
hide a socket that has no file. Landlock (ABI 6, Linux 6.12) scopes them: a process in a Landlock
domain with ``LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`` cannot connect to an abstract socket made
outside its domain. ``with_scope`` runs bwrap through a small launcher (frogtui's own interpreter,
``-I -S``, ``programs.python_argv``) that enters such a domain and then execs bwrap, so bwrap and every command under it are
inside; sockets the sandbox makes itself still work. Where the kernel has no such scope, the
sandbox refuses the network instead (``sandbox.make_sandbox``).
"""
from __future__ import annotations

import ctypes
import sys

from frogtui.programs import python_argv

SCOPE_ABI = 6
"""The first Landlock ABI with ``LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET`` (Linux 6.12)."""
_CREATE_RULESET, _RESTRICT_SELF = 444, 446
"""System call numbers, the same on every architecture (the unified table after 424)."""
_VERSION_FLAG = 1
"""``LANDLOCK_CREATE_RULESET_VERSION``: ask for the ABI instead of making a ruleset."""

LAUNCHER = """
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
attr = struct.pack("=QQQ", 0, 0, 1)  # no file system or network rights handled; scoped: abstract Unix sockets
fd = libc.syscall(444, attr, len(attr), 0)
if fd < 0 or libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(446, fd, 0) != 0:  # PR_SET_NO_NEW_PRIVS, restrict_self
    sys.stderr.write("frogtui: Landlock could not scope abstract sockets: %s\\n" % os.strerror(ctypes.get_errno()))
    sys.exit(126)
os.close(fd)
os.execv(sys.argv[1], sys.argv[1:])
"""
"""Enters a Landlock domain scoped to abstract Unix sockets, then execs its arguments; refuses to
run them (exit 126) when it cannot."""


def abi_version() -> int:
    """The kernel's Landlock ABI (0: no Landlock, or it is turned off)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def scopes_abstract_sockets(abi: int) -> bool:
    return abi >= SCOPE_ABI


def with_scope(argv: list[str]) -> list[str]:
    """``argv`` run inside a Landlock domain that cannot reach abstract sockets made outside it
    (frogtui's own Python, isolated and without site-packages: ``programs.python_argv``)."""
    return [*python_argv("-S", "-c", LAUNCHER), *argv]


def refusal(abi: int) -> str:
    """Why ``network = true`` is refused on this kernel (one line)."""
    found = f"Landlock ABI {abi}" if abi else "no Landlock"
    return (f"[sandbox] network = true refused: this kernel has {found} (the abstract-socket scope needs ABI {SCOPE_ABI}, "
            f"Linux 6.12), so X11, D-Bus and agents' abstract Unix sockets would be reachable; Bash runs with the network off")

