"""What typing does where (docs/UI.md, "Typing and committing"): letters typed outside the prompt
go to the prompt, never trigger actions; committing takes ctrl+s in the review, shown in its footer."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.ui.chat import Notice, PromptInput
from frogtui.ui.review import ReviewScreen
from tests.support import git, turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for

EDIT = [turn("Fix.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")), turn("Done.", answer="Fixed.")]


def run_over(app) -> bool:
    return app.last_exit_reason is not None and not app.busy


@pytest.mark.slow
async def test_a_sentence_typed_outside_the_prompt_goes_to_the_prompt(make_app, py_repo: Path) -> None:
    app = make_app(EDIT, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        prompt = app.query_one(PromptInput)
        for focus in ("#trace-table", "#chat"):
            app.query_one(focus).focus()
            await pilot.pause()
            await pilot.press(*"commit it, space and all")
            await pilot.pause()
            assert not isinstance(app.screen, ReviewScreen)
            assert prompt.has_focus and prompt.value == "commit it, space and all"
            prompt.value = ""
        assert git(py_repo, "log", "--format=%s").split() == ["initial"]
        # in the review, letters are its keys, but none of them commits: ctrl+s does, shown first in the footer
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        shown = [(key.key_display, key.description) for key in app.screen.query("FooterKey") if key.display]
        assert shown[:3] == [("space", "Accept/reject"), ("^s", "Commit"), ("esc", "Back")], shown
        await pilot.press("c", "c", "y", "enter")
        await pilot.app.workers.wait_for_complete()
        assert git(py_repo, "log", "--format=%s").split() == ["initial"]
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: len(git(py_repo, "log", "--format=%s").splitlines()) == 2, what="the commit")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ReviewScreen), what="back on the main screen")
        await pilot.press(*"cc")
        assert prompt.value == "cc" and not isinstance(app.screen, ReviewScreen)


async def test_a_prompt_given_at_start_is_shown_not_sent(make_app) -> None:
    app = make_app(EDIT, prompt="test_median_even fails. Find the bug and fix it.")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        prompt = app.query_one(PromptInput)
        assert prompt.value == "test_median_even fails. Find the bug and fix it." and prompt.has_focus
        assert any("press Enter to send it" in str(n.render()) for n in app.query(Notice))
        assert app.core.agent is None  # nothing was sent
