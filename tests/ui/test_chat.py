"""The chat pane streams cheaply: its flush timer runs only while text streams, and reasoning is
appended (finished lines frozen, only the last one re-rendered), looking as it did when redrawn."""
from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from frogtui.ui.chat import ChatPane, ReasoningBlock
from frogtui.ui.themes import VARIABLE_DEFAULTS
from tests.ui.conftest import wait_for


class ChatApp(App[None]):
    CSS_PATH = "../../frogtui/ui/app.tcss"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield ChatPane(id="chat")


def shown_lines(block: ReasoningBlock) -> list[str]:
    return [str(static.render()) for static in block.body.query(Static)]


async def test_the_flush_timer_runs_only_while_something_streams() -> None:
    app = ChatApp()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        await pilot.pause(0.2)
        assert not chat.flushing
        chat.reasoning_delta(1, "thinking")
        assert chat.flushing
        await wait_for(pilot, lambda: not chat.flushing, what="the timer to stop")
        assert app.query_one(ReasoningBlock).text == "thinking"
        chat.answer_delta(1, "the answer")
        assert chat.flushing
        await wait_for(pilot, lambda: not chat.flushing, what="the timer to stop again")


async def test_reasoning_is_appended_line_by_line_and_reads_as_one_text() -> None:
    app = ChatApp()
    text = "\n\n  First [line] of thought.\nSecond line\n\nThird, after a blank line.\nAnd a tail being written\n\n"
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        for start in range(0, len(text), 5):
            chat.reasoning_delta(1, text[start : start + 5])
            await chat.flush()
            await pilot.pause()
        block = app.query_one(ReasoningBlock)
        await pilot.pause()
        assert "\n".join(shown_lines(block)) == text.strip()
        assert str(block.tail.render()) == "And a tail being written"  # only the last line re-renders
        assert len(shown_lines(block)) > 2
