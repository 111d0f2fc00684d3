"""Before the session is prepared (rules, sandbox, the repository's state, on a worker after the
first paint), the commands that need it say so instead of acting on a half-built session: Review
and Undo used to say "needs a git repository" inside one, and ctrl+n started a second prepare."""
from __future__ import annotations

import threading

from frogtui.session.core import SessionCore
from tests.support import turn
from tests.ui.conftest import SIZE, wait_for


async def test_review_undo_and_new_task_wait_for_the_session(make_app, monkeypatch) -> None:
    release, calls = threading.Event(), []
    prepare = SessionCore.prepare

    def slow_prepare(core: SessionCore) -> list[str]:
        calls.append(core)
        release.wait(20)
        return prepare(core)

    monkeypatch.setattr(SessionCore, "prepare", slow_prepare)
    app = make_app([turn("Look.", answer="Done.")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: calls, what="the prepare worker")
        for key in ("ctrl+r", "ctrl+z", "ctrl+n"):
            await pilot.press(key)
        await pilot.pause(0.2)
        messages = [n.message for n in app._notifications]
        assert not [m for m in messages if "git repository" in m], messages
        assert sum("once the session has started" in m for m in messages) == 3, messages
        assert len(calls) == 1, "a second prepare started before the first ended"
        release.set()
        await wait_for(pilot, lambda: app.run_state.wired, what="the session")
        await pilot.press("ctrl+z")  # now it answers from the session: a git repository, nothing to undo
        await wait_for(pilot, lambda: any("Nothing (more) to undo" in n.message for n in app._notifications), what="undo's answer")


async def test_after_a_failed_setup_they_say_why(make_app, tmp_path) -> None:
    bad = tmp_path / "bad-rules.toml"
    bad.write_text("[[rules]]\ntool = \n")
    app = make_app([turn("Look.", answer="Done.")], rules_file=bad)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.setup_error, what="the setup to fail")
        await pilot.press("ctrl+r")
        await pilot.pause(0.1)
        said = [n.message for n in app._notifications if n.message.startswith("Review")]
        assert said and "the session could not start" in said[-1] and app.setup_error in said[-1], said
