"""How a thread worker reaches the screen: only while what it updates is still there.

A worker (undo, git init, an attempt's pick, a commit message drafted) can finish while the app
closes (Ctrl+C, a test's Pilot leaving) or after the screen it updates was dismissed. Textual's
``call_from_thread`` runs its callback in a task of its own, outside the message queues, so it
runs in the middle of the app's shutdown (``App._shutdown`` marks the app not running, then
removes the screens' widgets; Pilot's ``run_test`` calls it while the workers still run), after
the widgets were removed: a ``query_one`` there raised ``NoMatches`` in the worker, which failed
the app as it ended (the attempts test's undo, 1 run in 3 under load). Every worker's call to the
UI goes through ``call_while_shown``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.message_pump import MessagePump


def call_while_shown(app: App[Any], callback: Callable[..., object], *args: Any, **kwargs: Any) -> None:
    """From a worker thread: run ``callback(*args, **kwargs)`` on the UI thread and wait for it,
    unless the app is closing (or has closed) or the screen or widget ``callback`` is a method of
    was removed meanwhile: then nothing is done. The callback's own errors are raised here (a bug
    fails the worker, as it did)."""
    owner = getattr(callback, "__self__", None)

    def guarded() -> object:
        if not app.is_running or (isinstance(owner, MessagePump) and owner is not app and not owner.is_running):
            return None
        return callback(*args, **kwargs)

    try:
        app.call_from_thread(guarded)
    except RuntimeError:
        if app.is_running:  # not "App is not running": a real error of the callback
            raise
