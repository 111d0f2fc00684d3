"""A thread worker that ends while the app closes touches no widget: the app's screens are being
removed then, and a ``query_one`` raised ``NoMatches`` and failed the app as it ended (the attempts
test, 1 run in 3 under load: its undo ended as the test's Pilot left). ``ui/from_workers.py``."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from textual.worker import WorkerState

from tests.support import turn, xml_call
from tests.ui.conftest import submit, wait_for


def release_when_closing(app: object, fifo: Path, done: list[bytes]) -> threading.Thread:
    """A thread that waits for the app to start closing, then opens ``fifo`` for reading: the
    worker, held opening it for writing, goes on just as the app removes its screens."""

    def run() -> None:
        deadline = time.monotonic() + 30
        print("WAITING", time.monotonic(), flush=True)
        while app.is_running and time.monotonic() < deadline:  # type: ignore[attr-defined]
            time.sleep(0.0005)
        print("CLOSING", time.monotonic(), flush=True)
        with fifo.open("rb") as reader:
            done.append(reader.read())
        print("READ", time.monotonic(), flush=True)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


async def test_an_undo_that_ends_as_the_app_closes_touches_no_widget(make_app, py_repo: Path) -> None:
    app = make_app([turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("Done.", answer="ok")],
                   approve="all")
    done: list[bytes] = []
    async with app.run_test() as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
        assert (py_repo / "new.txt").exists()
        fifo = app.session.notices_path
        os.mkfifo(fifo)  # the undo's notice is kept there: its worker waits for a reader (a slow disk)
        releaser = release_when_closing(app, fifo, done)
        print("UNDO", time.monotonic(), flush=True)
        app.action_undo()
        [worker] = [w for w in app.workers if w.group == "undo"]
        print("W", time.monotonic(), flush=True)
        await wait_for(pilot, lambda: not (py_repo / "new.txt").exists(), what="the undo")
    print("EXITED", time.monotonic(), worker.state, flush=True)
    # run_test raised here when the worker failed (exit_on_error): NoMatches for the trace pane
    releaser.join(30)
    assert done and b"new.txt" in done[0]
    for _ in range(200):
        if worker.state is not WorkerState.RUNNING:
            break
        time.sleep(0.01)
    assert worker.state is not WorkerState.ERROR, worker.error
