"""The process side of leaving the app: the signals that end it as Ctrl+C twice does, and a closed
terminal. Every way out ends in ``SessionApp.shutdown`` (the run stopped, its last events shown,
the session saved, then the exit with a status); after a closed terminal (``terminal_gone``) the
process ends there once the session is saved, since Textual's exit would wait for ever on its
writer thread."""
from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end the app as Ctrl+C twice does (the session saved), rather than killing it."""


def on_a_terminal() -> bool:
    """Whether the app draws on a terminal (standard error: Textual's output), now."""
    try:
        return sys.__stderr__ is not None and os.isatty(sys.__stderr__.fileno())
    except (OSError, ValueError):
        return False


def terminal_gone(had_terminal: bool) -> bool:
    """True when the app's terminal (``had_terminal``: it started on one) was closed (hung up),
    after pointing standard input, output and error at ``/dev/null``: what is written from now on
    goes nowhere rather than failing. A ``kill -HUP`` leaves a live terminal alone; an app that
    never had one (tests, a pipe) is never told its terminal is gone."""
    if not had_terminal or on_a_terminal():
        return False
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return True


def on_signals(handler: Callable[[int], None] | None) -> None:
    """Handle ``EXIT_SIGNALS`` with ``handler`` (None: as before), on the running loop. Only the main
    thread's loop can: elsewhere (an app run in a thread) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    loop = asyncio.get_running_loop()
    for number in EXIT_SIGNALS:
        if handler is None:
            loop.remove_signal_handler(number)
        else:
            loop.add_signal_handler(number, handler, number)
