"""The Bash tool: ``bash -c COMMAND`` in the repository root, in its own process group, stdin
closed, with a timeout and cancel that kill the whole group (children included).

It returns the moment the command ends: one ``select`` waits on the output pipes and on the
process (a pidfd). Output is streamed into bounded buffers that keep the head and the tail of each
stream, so a command that prints gigabytes costs kilobytes.

Not a login shell (Leaf runs ``bash -lc``): ``/etc/profile`` would reset ``PATH`` and lose the
virtualenv, conda or pyenv selection of the shell that started frogtui; the environment is passed
as it is instead.
"""
from __future__ import annotations

import codecs
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from frogtui.programs import which
from frogtui.tools import observations as obs

BASH_LIMIT = 30_000
DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
"""The ceiling on the model's timeout (Leaf has none; 10 minutes)."""
CANCEL_POLL_S = 0.1
"""How often an interrupt is looked for while a command runs (the command's end wakes at once)."""
DRAIN_S = 2.0
"""How long output is still read after the command ended (children that escaped the group)."""

class CommandWrapper(Protocol):
    """A sandbox for Bash (``approval.sandbox.BwrapWrapper``), as the tools use it."""

    def __call__(self, argv: Sequence[str]) -> list[str]:
        """The plain argv (``bash -c COMMAND``) as the argv to run inside the sandbox."""
        ...

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment a sandboxed command gets, from the one Bash would start from."""
        ...

    def read_only_wrapper(self) -> CommandWrapper:
        """The same sandbox with everything read-only and no network (for a command the policy
        proved only reads)."""
        ...

    def shown(self) -> Callable[[str], str | None]:
        """What a command run now sees, for Read and Glob: a function from a host's real path to
        the host file a sandboxed command sees there (that path, or a sanitized copy bound over
        it), None where the sandbox hides it."""
        ...


OutputCallback = Callable[[str], None]
"""Receives a running command's output as it is read, on the thread that called ``run_bash``."""


@dataclass(frozen=True)
class BashResult:
    observation: str
    exit_code: int | None
    """None on timeout or cancel."""
    timed_out: bool = False
    cancelled: bool = False


def shell_argv(command: str) -> list[str]:
    """The argv that runs ``command`` (before any sandbox wraps it): frogtui's own bash by its
    absolute path (``frogtui.programs``), never a ``bash`` the project's ``PATH`` puts first."""
    return [which("bash") or "/bin/bash", "-c", command]


def effective_timeout(timeout: float | None) -> float:
    """Leaf's rule: absent means 120 s; a value over 1000 is read as milliseconds; at most 10 minutes."""
    if timeout is None or timeout <= 0:
        return DEFAULT_TIMEOUT
    return min(timeout / 1000.0 if timeout > 1000 else float(timeout), MAX_TIMEOUT)


class CappedOutput:
    """One output stream, held as its first and last ``keep`` bytes and a count of the rest."""

    def __init__(self, keep: int = BASH_LIMIT) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.keep:
                del self.tail[: len(self.tail) - self.keep]

    def text(self, share: int) -> str:
        """The stream cut to about ``share`` characters: head, a line saying what was dropped, tail."""
        tail = bytes(self.tail[-self.keep:])
        held = bytes(self.head) + tail
        contiguous = len(held) == self.total
        if contiguous and self.total <= share:
            return held.decode("utf-8", "replace")
        front = held[: share // 2]
        back_len = share - len(front)
        back = held[max(len(front), len(held) - back_len):] if contiguous else tail[len(tail) - back_len:]
        dropped = self.total - len(front) - len(back)
        return front.decode("utf-8", "replace") + obs.truncated_bytes(dropped) + back.decode("utf-8", "replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_bash(
    command: str,
    cwd: str,
    *,
    timeout: float | None = None,
    cancel: threading.Event | None = None,
    wrap: CommandWrapper | None = None,
    env: dict[str, str] | None = None,
    on_output: OutputCallback | None = None,
) -> BashResult:
    """Run ``command`` and return Leaf's observation; ``on_output`` (when given) receives the
    output as it is read (each stream decoded as UTF-8 on its own)."""
    limit = effective_timeout(timeout)
    for _attempt in range(2):
        argv = shell_argv(command)
        if wrap is not None:
            argv = wrap(argv)
        result, err = _run_once(argv, cwd, limit, cancel, env, on_output)
        if not _cover_went_away(argv, result, err):
            break
    return result


def _cover_went_away(argv: Sequence[str], result: BashResult, err: CappedOutput) -> bool:
    """Whether bwrap failed before the command ran because a listening socket its argv covers
    (``--ro-bind /dev/null SOCKET``, found when the argv was made) went away, with its folder,
    before the mounts: the argv made again no longer names it. Nothing of the command ran."""
    if result.exit_code != 1 or not err.head.startswith(b"bwrap: ") or err.total > 4096:
        return False
    said = bytes(err.head).decode("utf-8", "surrogateescape")
    covers = [argv[n + 2] for n in range(len(argv) - 2) if argv[n] == "--ro-bind" and argv[n + 1] == "/dev/null"]
    return said.count("\n") <= 1 and any(f" {path}: " in said and not os.path.lexists(path) for path in covers)


def _run_once(
    argv: list[str], cwd: str, limit: float, cancel: threading.Event | None, env: dict[str, str] | None, on_output: OutputCallback | None
) -> tuple[BashResult, CappedOutput]:
    proc = subprocess.Popen(
        argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env
    )
    out, err = CappedOutput(), CappedOutput()
    try:
        sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}  # type: ignore[union-attr]
        timed_out, cancelled = _pump(proc, sinks, limit, cancel, _Relay(on_output, sinks) if on_output is not None else None)
    finally:
        # Kill the group in every case (also on KeyboardInterrupt): a finished shell may leave
        # background children holding the pipes.
        _kill_group(proc)
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    if timed_out:
        head, code = obs.timeout_head(limit), None
    elif cancelled:
        head, code = obs.INTERRUPTED, None
    else:
        code = proc.returncode
        head = obs.exit_head(code)
    return BashResult(observation=compose(head, out, err), exit_code=code, timed_out=timed_out, cancelled=cancelled), err


def _pump(
    proc: subprocess.Popen[bytes], sinks: dict[int, CappedOutput], limit: float, cancel: threading.Event | None, relay: _Relay | None = None
) -> tuple[bool, bool]:
    """Read both pipes until the command ends (then what is left, briefly), the deadline passes or
    ``cancel`` is set; ``relay`` passes what is read on. Returns (timed_out, cancelled)."""
    selector = selectors.DefaultSelector()
    for fd in sinks:
        selector.register(fd, selectors.EVENT_READ)
    exited, closer = _exit_signal(proc)
    selector.register(exited, selectors.EVENT_READ)
    deadline = time.monotonic() + limit
    ended = False
    try:
        while not ended or selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return (not ended), False
            if cancel is not None and cancel.is_set():
                return False, True
            wait = min(remaining, CANCEL_POLL_S) if cancel is not None else remaining
            for key, _ in selector.select(wait):
                if key.fd == exited:
                    selector.unregister(exited)
                    ended = True
                    _kill_group(proc)
                    deadline = min(deadline, time.monotonic() + DRAIN_S)
                    continue
                data = os.read(key.fd, 65536)
                if data:
                    sinks[key.fd].add(data)
                else:
                    selector.unregister(key.fd)
                if relay is not None:
                    relay.pass_on(key.fd, data)
        return False, False
    finally:
        selector.close()
        closer()


class _Relay:
    """Decodes each stream incrementally (a character split between two reads stays whole) and
    passes the text on."""

    def __init__(self, on_output: OutputCallback, sinks: dict[int, CappedOutput]) -> None:
        self.on_output = on_output
        self.decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in sinks}

    def pass_on(self, fd: int, data: bytes) -> None:
        text = self.decoders[fd].decode(data, final=not data)  # b"": the stream ended
        if text:
            self.on_output(text)


def _exit_signal(proc: subprocess.Popen[bytes]) -> tuple[int, Callable[[], None]]:
    """A file descriptor that becomes readable when ``proc`` exits, and how to close it: a pidfd,
    or (where there is none) a pipe a waiting thread writes to."""
    try:
        fd = os.pidfd_open(proc.pid)
        return fd, lambda: os.close(fd)
    except (AttributeError, OSError):
        read, write = os.pipe()

        def wait() -> None:
            try:
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError:
                pass
            os.close(write)

        threading.Thread(target=wait, daemon=True).start()
        return read, lambda: os.close(read)


def compose(head: str, out: CappedOutput, err: CappedOutput) -> str:
    """Leaf's observation; when it would pass ``BASH_LIMIT``, each stream keeps its head and tail
    with Leaf's truncation line between them (``[truncated K bytes]``: K bytes were dropped)."""
    budget = BASH_LIMIT - len(head) - 80
    a, b = out.total, err.total
    if a + b > budget:
        half = budget // 2
        a, b = (a, budget - a) if a <= half else (budget - b, b) if b <= half else (half, budget - half)
    return obs.bash_observation(head, out.text(a), err.text(b))
