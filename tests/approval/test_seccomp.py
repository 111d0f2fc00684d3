"""The sandbox's seccomp program, run through a small classic-BPF interpreter for every machine it
supports: each denied call and the terminal ioctls are refused, everything else (and other ioctls)
is allowed, another ABI is refused."""
from __future__ import annotations

import struct

import pytest

from frogtui.approval.sandbox.seccomp import ARCHES, DENIED, SET_ID_MODES, filter_program

ALLOW, EPERM = 0x7FFF0000, 0x00050001


def run_filter(program: bytes, arch: int, nr: int, arg1: int = 0, arg0: int = 0, args: tuple[int, ...] = ()) -> int:
    values = list(args) or [arg0, arg1]
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(values + [0] * (6 - len(values))))
    ops = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = ops[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code in (0x15, 0x35, 0x45):
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += jt if hit else jf
        elif code == 0x54:
            acc &= k
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected BPF op {code:#x}")
        pc += 1


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_the_program_refuses_exactly_what_it_lists(machine: str) -> None:
    program = filter_program(machine)
    assert program is not None and len(program) % 8 == 0
    audit_arch, ioctl, numbers = ARCHES[machine]
    for name in DENIED:
        assert run_filter(program, audit_arch, numbers[name]) == EPERM, name
    denied = {numbers[name] for name in DENIED} | {ioctl}  # socket and socketpair: allowed with arguments 0 (AF_UNSPEC)
    for nr in set(range(0, 460)) - denied:
        assert run_filter(program, audit_arch, nr) == ALLOW, nr
    assert run_filter(program, audit_arch, ioctl, 0x5412) == EPERM and run_filter(program, audit_arch, ioctl, 0x541C) == EPERM
    assert run_filter(program, audit_arch, ioctl, 0x5401) == ALLOW  # TCGETS: isatty() keeps working
    assert run_filter(program, 0x40000003, 1) == EPERM  # i386 ABI
    if machine == "x86_64":
        assert run_filter(program, audit_arch, 0x40000000 | 1) == EPERM  # x32 ABI


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_vsock_sockets_are_refused(machine: str) -> None:
    """Red team (rt9): AF_VSOCK is not in any network namespace: from inside the sandbox (network
    off) a socket reached the VM's host (a cloud or WSL2 dev machine)."""
    program = filter_program(machine)
    audit_arch, _, numbers = ARCHES[machine]
    socket_nr = {"x86_64": 41, "aarch64": 198}[machine]
    assert run_filter(program, audit_arch, socket_nr, arg0=40) == EPERM  # AF_VSOCK
    for family in (2, 10, 16):  # AF_INET, AF_INET6, AF_NETLINK: the network namespace governs them
        assert run_filter(program, audit_arch, socket_nr, arg0=family) == ALLOW


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_unix_sockets_that_could_reach_an_address_are_refused(machine: str) -> None:
    """Issue 30, finding 3: no network namespace holds a pathname socket. ``socket(AF_UNIX)`` (any
    type, with flags) and a datagram (or raw, which AF_UNIX makes a datagram) ``socketpair`` are
    refused; a stream or seqpacket pair, connected to each other for good, is allowed."""
    program = filter_program(machine)
    audit_arch, _, _ = ARCHES[machine]
    socket_nr, pair_nr = {"x86_64": (41, 53), "aarch64": (198, 199)}[machine]
    cloexec, nonblock = 0o2000000, 0o4000
    for kind in (1, 2, 5, 1 | cloexec, 2 | nonblock | cloexec):
        assert run_filter(program, audit_arch, socket_nr, arg0=1, arg1=kind) == EPERM, kind
    for kind in (2, 3, 2 | cloexec, 0):
        assert run_filter(program, audit_arch, pair_nr, arg0=1, arg1=kind) == EPERM, kind
    for kind in (1, 5, 1 | cloexec, 5 | nonblock | cloexec):
        assert run_filter(program, audit_arch, pair_nr, arg0=1, arg1=kind) == ALLOW, kind
    assert run_filter(program, audit_arch, pair_nr, arg0=2, arg1=2) == ALLOW  # not AF_UNIX: the kernel refuses it anyway


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_a_set_id_mode_is_refused(machine: str) -> None:
    """Red team (h9, issue 30): chmod 4755, open(O_CREAT, 04755), mknod with S_ISUID left a
    set-user-ID program in the tree (owned by root where frogtui runs as root)."""
    program = filter_program(machine)
    assert program is not None
    audit_arch = ARCHES[machine][0]
    for nr, (mode, flags) in SET_ID_MODES[machine].items():
        for bits, expected in ((0o4755, EPERM), (0o2755, EPERM), (0o755, ALLOW), (0o1777, ALLOW)):
            args = [0] * 6
            args[mode] = bits
            if flags is not None:
                args[flags] = 0o100  # O_CREAT
            assert run_filter(program, audit_arch, nr, args=tuple(args)) == expected, (nr, oct(bits))
            if flags is not None:  # without O_CREAT/O_TMPFILE the mode is not read (whatever the register holds)
                args[flags] = 0o2  # O_RDWR
                assert run_filter(program, audit_arch, nr, args=tuple(args)) == ALLOW, nr


def test_no_program_for_an_unknown_machine() -> None:
    assert filter_program("riscv64") is None


def test_a_process_leaves_no_filter_folder_behind(tmp_path) -> None:
    """The filter's private folder goes when the process that wrote it ends."""
    import os
    import subprocess
    import sys

    code = "from frogtui.approval.sandbox.seccomp import filter_file; import os; print(os.path.dirname(filter_file() or ''))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TMPDIR": str(tmp_path)}, check=True)
    folder = proc.stdout.strip()
    if folder:  # a machine with a filter
        assert folder.startswith(str(tmp_path))
    assert list(tmp_path.iterdir()) == []
