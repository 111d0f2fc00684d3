"""The queue list above the prompt, driven by keys as a person does (Pilot, a real run that waits):
focus selects its first row so ``x`` and ``e`` act at once, and after an action focus goes back to
the prompt, so the letters typed next are text, never the list's commands."""
from __future__ import annotations

from pathlib import Path

from textual import events

from frogtui.ui.chat import PromptInput
from frogtui.ui.queue import QueuePanel
from tests.support import turn
from tests.ui.conftest import SIZE, submit, wait_for
from tests.ui.test_long_sessions import WAIT


async def queue_two(pilot, app) -> QueuePanel:  # noqa: ANN001 (Pilot, FrogApp)
    await submit(pilot, "wait a bit")
    await wait_for(pilot, lambda: app.status.state == "running Bash", what="the command")
    for text in ("first follow-up", "second follow-up"):
        await submit(pilot, text)
    panel = app.query_one(QueuePanel)
    await wait_for(pilot, lambda: panel.display and len(panel.children) == 2, what="the queue shown")
    return panel


async def focus_queue(pilot, app, panel: QueuePanel) -> None:  # noqa: ANN001
    prompt = app.query_one(PromptInput)
    prompt.focus()
    await pilot.pause()
    await pilot.press("shift+tab")  # the way the panel's title names
    await wait_for(pilot, lambda: panel.has_focus, what="the queue list to take focus")


def burst(app, text: str) -> None:  # noqa: ANN001 (FrogApp)
    """Keys as a terminal delivers a fast typist's or tmux's send-keys: all queued before the app
    has handled the first (``pilot.press`` waits for the app between keys)."""
    for char in text:
        key = {" ": "space", "(": "left_parenthesis", ")": "right_parenthesis"}.get(char, char)
        app._driver.send_message(events.Key(key, char))


async def test_focus_selects_the_first_row_and_x_removes_it_then_typing_goes_to_the_prompt(make_app, py_repo: Path) -> None:
    app = make_app([turn("wait", WAIT), turn("", answer="waited")] + [turn("", answer="ok")] * 3, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        panel = await queue_two(pilot, app)
        await focus_queue(pilot, app, panel)
        assert panel.index == 0
        await pilot.press("x")
        await wait_for(pilot, lambda: len(app.queue) == 1, what="the removal")
        assert [q.text for q in app.queue.items] == ["second follow-up"]
        prompt = app.query_one(PromptInput)
        await wait_for(pilot, lambda: prompt.has_focus, what="focus back on the prompt")
        await pilot.press(*"see edited")
        assert prompt.value == "see edited" and len(app.queue) == 1
        (py_repo / "release").touch()
        await wait_for(pilot, lambda: not app.queue.items and not app.busy, timeout=30, what="the queue sent")


async def test_after_e_the_words_typed_go_into_the_edited_message(make_app, py_repo: Path) -> None:
    app = make_app([turn("wait", WAIT), turn("", answer="waited")] + [turn("", answer="ok")] * 3, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        panel = await queue_two(pilot, app)
        await focus_queue(pilot, app, panel)
        await pilot.press("down", "e")  # the second one back into the prompt
        prompt = app.query_one(PromptInput)
        await wait_for(pilot, lambda: prompt.value == "second follow-up" and prompt.has_focus, what="the message in the prompt")
        await pilot.press(*" (edited)")
        assert prompt.value == "second follow-up (edited)" and [q.text for q in app.queue.items] == ["first follow-up"]
        await pilot.press("enter")  # queued again, after the first
        await wait_for(pilot, lambda: len(app.queue) == 2, what="queued again")
        assert [q.text for q in app.queue.items] == ["first follow-up", "second follow-up (edited)"]
        (py_repo / "release").touch()
        await wait_for(pilot, lambda: not app.queue.items and not app.busy, timeout=30, what="the queue sent")


async def test_letters_typed_in_a_burst_right_after_an_action_are_text(make_app, py_repo: Path) -> None:
    app = make_app([turn("wait", WAIT), turn("", answer="waited")] + [turn("", answer="ok")] * 4, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait a bit")
        await wait_for(pilot, lambda: app.status.state == "running Bash", what="the command")
        for text in ("first follow-up", "second follow-up", "third follow-up"):
            await submit(pilot, text)
        panel = app.query_one(QueuePanel)
        await wait_for(pilot, lambda: panel.display and len(panel.children) == 3, what="the queue shown")
        await focus_queue(pilot, app, panel)
        burst(app, "x next (edited) x")  # one x to remove, then words full of e and x
        prompt = app.query_one(PromptInput)
        try:
            await wait_for(pilot, lambda: prompt.value == " next (edited) x", what="every letter after the x in the prompt")
        except AssertionError:
            raise AssertionError(f"{prompt.value!r} {[q.text for q in app.queue.items]}") from None
        assert [q.text for q in app.queue.items] == ["second follow-up", "third follow-up"]
        (py_repo / "release").touch()
        await wait_for(pilot, lambda: not app.queue.items and not app.busy, timeout=30, what="the queue sent")
