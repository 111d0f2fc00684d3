"""The Bash tool: ``bash -lc COMMAND`` in the repository root, in its own process group, stdin
closed, with a timeout and cancel that kill the whole group (children included)."""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from frogtui.tools.files import truncate

BASH_LIMIT = 30_000
DEFAULT_TIMEOUT = 120.0
POLL_S = 0.05

CommandWrapper = Callable[[Sequence[str]], list[str]]
"""Turns the plain argv (``bash -lc COMMAND``) into the argv to run, e.g. under bubblewrap."""


@dataclass(frozen=True)
class BashResult:
    observation: str
    exit_code: int | None
    """None on timeout or cancel."""
    timed_out: bool = False
    cancelled: bool = False


def effective_timeout(timeout: float | None) -> float:
    """Leaf's rule: absent means 120 s; a value over 1000 is read as milliseconds."""
    if timeout is None or timeout <= 0:
        return DEFAULT_TIMEOUT
    return timeout / 1000.0 if timeout > 1000 else float(timeout)


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
) -> BashResult:
    """Run ``command`` and return Leaf's observation."""
    limit = effective_timeout(timeout)
    argv = ["bash", "-lc", command]
    if wrap is not None:
        argv = wrap(argv)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    chunks: dict[str, list[bytes]] = {"out": [], "err": []}
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, chunks["out"]), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, chunks["err"]), daemon=True),
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + limit
    timed_out = cancelled = False
    try:
        while proc.poll() is None:
            if cancel is not None and cancel.is_set():
                cancelled = True
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
            time.sleep(POLL_S)
    finally:
        # Kill the group in every case (also on KeyboardInterrupt): a finished shell may leave
        # background children holding the pipes.
        _kill_group(proc)
        proc.wait()
    for reader in readers:
        reader.join(timeout=2.0)
    out = b"".join(chunks["out"]).decode("utf-8", "replace")
    err = b"".join(chunks["err"]).decode("utf-8", "replace")
    if timed_out:
        head = f"Timed out after {limit:.1f}s"
        code = None
    elif cancelled:
        head = "Interrupted by the user"
        code = None
    else:
        code = proc.returncode
        head = f"Exit code: {code}"
    observation = truncate(f"{head}\nSTDOUT:\n{out}\nSTDERR:\n{err}", BASH_LIMIT)
    return BashResult(observation=observation, exit_code=code, timed_out=timed_out, cancelled=cancelled)


def _drain(stream, sink: list[bytes]) -> None:  # type: ignore[no-untyped-def]
    try:
        for chunk in iter(lambda: stream.read1(65536), b""):
            sink.append(chunk)
    except (OSError, ValueError):
        pass
    finally:
        stream.close()
