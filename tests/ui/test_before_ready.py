"""Before the session is prepared (rules, sandbox, the repository's state, on a worker after the
first paint), the commands that need it say so instead of acting on a half-built session: Review
and Undo used to say "needs a git repository" inside one, and ctrl+n started a second prepare."""
from __future__ import annotations

import threading

import pytest

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


@pytest.mark.slow  # llama.cpp loads a tiny model twice (the probe crashes, then without the buffers)
async def test_the_extra_buffers_fallback_is_said_on_its_own(py_repo, home, tmp_path, monkeypatch) -> None:
    """On a CPU where llama.cpp's extra weight buffers crash, the app says so in a notice of its
    own, not as a few words at the end of the load line."""
    from frogtui.config import Config
    from frogtui.ui.app import FrogApp
    from frogtui.ui.chat import Notice
    from tests.models.tiny_gguf import write_dense_llama
    from tests.ui.conftest import SIZE, fake_clock, rules_file, wait_for

    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "extra-buffers-probe")  # an AMX machine's crash, simulated
    gguf = write_dense_llama(tmp_path / "tiny.gguf")
    app = FrogApp(Config(repo=py_repo, model_spec=str(gguf), theme="frog-dark", rules_file=rules_file(home)), clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, timeout=60, what="the model")
        await pilot.pause(0.2)
        notices = [str(n.render()) for n in app.query(Notice)]
    (said,) = [text for text in notices if "extra weight buffers" in text and "Model ready" not in text]
    assert said.startswith("llama.cpp crashed (SIGSEGV) with its extra weight buffers on this CPU") and "runs without them" in said
