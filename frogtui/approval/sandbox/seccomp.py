"""A seccomp filter for the sandbox (bwrap ``--seccomp``): system calls a coding command never needs
and that attack the kernel or other processes fail with EPERM — mounts, ptrace and reading other
processes' memory, kernel modules and kexec, bpf, perf events, userfaultfd, keyrings, io_uring,
the terminal-injecting ioctls TIOCSTI/TIOCLINUX, AF_VSOCK sockets (a VM's host, whatever the
network namespace), and every Unix socket a command could point at an address: ``socket(AF_UNIX)``
and a datagram ``socketpair``. No network namespace holds a pathname socket: a tmux server's socket
in the repository, a dev server's or devenv's Postgres socket, one made outside after the command
started would all be reachable by path, and a mount can only cover the ones found before the
command starts. What a command keeps is the stream and seqpacket ``socketpair`` (already connected
to each other, never to an address): pipes between its own processes, asyncio's self-pipe, Node's
IPC. A file mode with the set-user-ID or set-group-ID bit is refused too (``chmod``, ``open`` with
``O_CREAT``, ``mknod``: a program left in the tree that runs as its owner, root where frogtui runs
as root; ``openat2`` passes its mode in memory the filter cannot read). Built by hand as classic
BPF for x86_64 and aarch64; elsewhere there is no filter
(``frogtui doctor`` says so).
"""
from __future__ import annotations

import os
import platform
import struct

from frogtui.temp_folders import private_folder

_LD_ABS, _JEQ, _JGE, _AND, _RET = 0x20, 0x15, 0x35, 0x54, 0x06
_ALLOW, _EPERM = 0x7FFF0000, 0x00050000 | 1
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C
_AF_UNIX, _AF_VSOCK = 1, 40
_SOCK_STREAM, _SOCK_SEQPACKET, _SOCK_TYPE_MASK = 1, 5, 0xF
_SOCKET = {"x86_64": 41, "aarch64": 198}
"""``socket``'s number: AF_VSOCK sockets are refused (no network namespace holds them: they reach
the VM's host with the network off), and so are AF_UNIX ones (no network namespace holds a
pathname socket either)."""
_SOCKETPAIR = {"x86_64": 53, "aarch64": 199}
"""``socketpair``'s number: an AF_UNIX pair is allowed as a stream or seqpacket pair (connected to
each other for good: ``connect`` says EISCONN, an address given to ``sendto`` is refused or
ignored), refused as a datagram pair (which ``connect``/``sendto`` can point at any path)."""
_X32_BIT = 0x40000000
_JSET = 0x45
_SET_ID = 0o6000
"""S_ISUID | S_ISGID."""
_CREATES = 0o100 | 0o20000000
"""O_CREAT | __O_TMPFILE (the same on x86_64 and aarch64): the flags under which ``open`` reads its mode."""
SET_ID_MODES = {
    "x86_64": {90: (1, None), 91: (1, None), 268: (2, None), 452: (2, None), 2: (2, 1), 257: (3, 2), 85: (1, None),
               133: (1, None), 259: (2, None)},  # chmod fchmod fchmodat fchmodat2 open openat creat mknod mknodat
    "aarch64": {52: (1, None), 53: (2, None), 452: (2, None), 56: (3, 2), 33: (2, None)},  # fchmod fchmodat fchmodat2 openat mknodat
}
"""Per machine: system call number -> (the mode's argument, the open flags' argument or None)."""

DENIED = ("mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
          "ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load", "init_module", "finit_module",
          "delete_module", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
          "io_uring_setup", "io_uring_enter", "io_uring_register")
"""The system calls refused inside the sandbox."""

_GENERIC_NEW = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
                "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427}
ARCHES = {
    "x86_64": (0xC000003E, 16, {
        "mount": 165, "umount2": 166, "pivot_root": 155, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "bpf": 321,
        "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249, **_GENERIC_NEW}),
    "aarch64": (0xC00000B7, 29, {
        "mount": 40, "umount2": 39, "pivot_root": 41, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106, "bpf": 280,
        "perf_event_open": 241, "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218, **_GENERIC_NEW}),
}
"""Per machine: the audit arch, the ioctl number and the denied calls' numbers."""


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The BPF program for ``machine`` (default: this one), None where there is none."""
    machine = machine or platform.machine()
    arch = ARCHES.get(machine)
    if arch is None:
        return None
    audit_arch, ioctl, numbers = arch
    deny = _op(_RET, _EPERM)
    program = [_op(_LD_ABS, 4), _op(_JEQ, audit_arch, jt=1), deny, _op(_LD_ABS, 0)]  # another ABI (i386, x32): refused
    if audit_arch == ARCHES["x86_64"][0]:
        program += [_op(_JGE, _X32_BIT, jf=1), deny]
    for name in DENIED:
        program += [_op(_JEQ, numbers[name], jf=1), deny]
    for number, (mode, flags) in SET_ID_MODES[machine].items():  # refused with S_ISUID/S_ISGID in the mode
        check = [_op(_LD_ABS, 16 + 8 * mode), _op(_JSET, _SET_ID, jf=1), deny, _op(_RET, _ALLOW)]
        if flags is not None:  # the mode counts only when the call creates a file
            check = [_op(_LD_ABS, 16 + 8 * flags), _op(_JSET, _CREATES, jf=3), *check]
        program += [_op(_JEQ, number, jf=len(check)), *check]
    program += [_op(_JEQ, _SOCKET[machine], jf=6), _op(_LD_ABS, 16), _op(_JEQ, _AF_VSOCK, jf=1), deny,
                _op(_JEQ, _AF_UNIX, jf=1), deny, _op(_RET, _ALLOW)]
    program += [_op(_JEQ, _SOCKETPAIR[machine], jf=8), _op(_LD_ABS, 16), _op(_JEQ, _AF_UNIX, jf=5), _op(_LD_ABS, 24),
                _op(_AND, _SOCK_TYPE_MASK), _op(_JEQ, _SOCK_STREAM, jt=2), _op(_JEQ, _SOCK_SEQPACKET, jt=1), deny,
                _op(_RET, _ALLOW)]
    program += [_op(_JEQ, ioctl, jf=5), _op(_LD_ABS, 24), _op(_JEQ, _TIOCSTI, jf=1), deny, _op(_JEQ, _TIOCLINUX, jf=1), deny]
    program.append(_op(_RET, _ALLOW))
    return b"".join(program)


_FILES: dict[str, str | None] = {}


def filter_file() -> str | None:
    """A private file holding this machine's program (written once per process, in a private
    folder in the process's temp folder: ``temp_folders``), None without one."""
    if "path" not in _FILES:
        program = filter_program()
        path = None
        if program is not None:
            path = os.path.join(str(private_folder("seccomp-")), "filter.bpf")
            with open(path, "wb") as handle:
                handle.write(program)
            os.chmod(path, 0o400)
        _FILES["path"] = path
    return _FILES["path"]


def with_filter(argv: list[str], path: str) -> list[str]:
    """``argv`` (bwrap's) run with the filter on descriptor 3: ``sh`` opens the file and execs bwrap."""
    return ["/bin/sh", "-c", 'f=$1; shift; exec "$@" 3<"$f"', "sh", path, argv[0], "--seccomp", "3", *argv[1:]]
