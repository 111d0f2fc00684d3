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
from typing import Any

from textual.app import App

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


class ExitsInApp(App[int]):
    """The ways out that do not come from a key (``SessionApp`` builds on it): SIGTERM and SIGHUP
    through the loop's signal handlers, and a closed terminal; each ends in the app's
    ``shutdown(status)``, as Ctrl+C twice does."""

    def __init__(self) -> None:
        super().__init__()
        self._exiting: asyncio.Task[None] | None = None
        self._had_terminal = on_a_terminal()
        self.hung_up = False
        """The terminal was closed: once the session is saved, the process ends there (Textual's
        exit would wait for ever on its writer thread, dead from writing to the closed terminal)."""

    def on_mount(self) -> None:
        on_signals(self._signalled)

    def on_unmount(self) -> None:
        on_signals(None)

    def _leave(self, status: int) -> None:
        if self._exiting is None:
            self._exiting = asyncio.ensure_future(self.shutdown(status))

    def _signalled(self, number: int) -> None:
        """SIGTERM (``kill``, ``timeout``, CI) or SIGHUP (the terminal closed): leave as Ctrl+C twice
        does, with the shell's status for the signal (128 + its number)."""
        if number == signal.SIGHUP and terminal_gone(self._had_terminal):
            self.hung_up = True
        self._leave(128 + number)

    def panic(self, *renderables: Any) -> None:
        """Textual's input thread fails (EIO) when the terminal is closed, maybe before SIGHUP
        arrives: leave as for SIGHUP (the session saved), not with a traceback nobody can see."""
        if not self.run_state.closed and terminal_gone(self._had_terminal):
            self.hung_up = True
            self._leave(128 + signal.SIGHUP)
            return
        super().panic(*renderables)
