"""A thread worker that ends while the app closes, or after the widget it updates was removed,
touches no widget (``ui/from_workers.py``). Textual's ``call_from_thread`` runs its callback
whatever is left of the app: its ``query_one`` raised ``NoMatches`` in the worker (the attempts
test's undo, 1 run in 3 under load, as the test's Pilot left) and failed the app as it ended."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.css.query import NoMatches
from textual.widgets import Static

from frogtui.ui.from_workers import call_while_shown


class Panes(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("pane", id="pane")

    def mark(self) -> str:
        self.query_one("#pane", Static).update("marked")
        return "marked"


async def in_a_thread(work: Callable[[], object]) -> list[object]:
    """``work()`` on a thread of its own (a worker), the event loop going meanwhile: what it
    returned or raised."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(work())
        except Exception as err:  # what the worker would have died of
            out.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    while thread.is_alive():
        await asyncio.sleep(0.005)
    return out


async def test_a_call_while_the_app_runs_is_made_and_its_errors_are_raised() -> None:
    app = Panes()
    async with app.run_test():
        assert await in_a_thread(lambda: call_while_shown(app, app.mark)) == [None]
        assert str(app.query_one("#pane", Static).render()) == "marked"
        [raised] = await in_a_thread(lambda: call_while_shown(app, app.query_one, "#nothing"))
        assert isinstance(raised, NoMatches)  # a bug still fails the worker


async def test_a_call_for_a_removed_widget_or_a_closed_app_does_nothing() -> None:
    app = Panes()
    async with app.run_test():
        pane = app.query_one("#pane", Static)
        await pane.remove()
        assert await in_a_thread(lambda: call_while_shown(app, pane.update, "late")) == [None]
    [raised] = await in_a_thread(lambda: app.call_from_thread(app.mark))  # the race, as it was
    assert isinstance(raised, NoMatches)
    assert await in_a_thread(lambda: call_while_shown(app, app.mark)) == [None]

