"""The chat pane streams cheaply: its flush timer runs only while text streams, reasoning is
appended (finished lines wrapped once, only the last one wrapped again), and a step costs no
widget: its reasoning and call lines are items of one ``StepLog``."""
from __future__ import annotations

from textual.app import App, ComposeResult

from frogtui.protocol import ToolCall
from frogtui.ui.chat import ChatPane, UserMessage
from frogtui.ui.steplog import StepLog, StepReasoning
from frogtui.ui.themes import VARIABLE_DEFAULTS
from frogtui.ui.trace import TraceEntry
from tests.support import turn
from tests.ui.conftest import SIZE, submit, wait_for


class ChatApp(App[None]):
    CSS_PATH = "../../frogtui/ui/app.tcss"

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield ChatPane(id="chat")


def shown_lines(chat: ChatPane, block: StepReasoning) -> list[str]:
    """The block's text lines as drawn (its title is the first line, the text is indented)."""
    log = chat.query_one(StepLog)
    start = next(log._layout()[i] for i, item in enumerate(log.items) if item is block)
    return [log.render_line(y).text.rstrip()[2:] for y in range(start + 1, start + len(log.lines_of(block)))]


async def test_the_flush_timer_runs_only_while_something_streams() -> None:
    app = ChatApp()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        await pilot.pause(0.2)
        assert not chat.flushing
        chat.reasoning_delta(1, "thinking")
        assert chat.flushing
        await wait_for(pilot, lambda: not chat.flushing, what="the timer to stop")
        assert [block.text for block in chat.reasoning] == ["thinking"]
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
        [block] = chat.reasoning
        await pilot.pause()
        assert "\n".join(shown_lines(chat, block)) == text.strip()
        # the finished lines were wrapped once and kept; only the last one is wrapped again
        assert block._prefix == text.strip()[: text.strip().rfind("\n") + 1]
        assert len(shown_lines(chat, block)) > 2


async def test_a_hundred_steps_are_items_of_one_widget_not_widgets() -> None:
    """A step used to mount a Collapsible of five widgets and a line widget: Textual's cost per
    widget made the app 10-60x slower than headless (docs/PERFORMANCE.md)."""
    app = ChatApp()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        chat.add_user("go")
        for step in range(1, 101):
            chat.reasoning_delta(step, f"Step {step}: read the file [again].")
            await chat.end_turn()
            await chat.show_call(TraceEntry(step, ToolCall(f"c{step}", "Read", {"file_path": "calc.py"}), status="done"))
        await pilot.pause()
        assert [type(child) for child in chat.children] == [UserMessage, StepLog]
        log = chat.query_one(StepLog)
        assert len(log.items) == 200 and log.size.height == 200
        assert len(chat.reasoning) == 100 and all(block.collapsed for block in chat.reasoning)
        # the end of the chat is on screen: the last step's title and its call line
        lines = [line.rstrip() for line in log.text().splitlines()]
        assert lines[-2] == "▶ thinking (step 100) · Step 100: read the file [again]."
        assert lines[-1].startswith("● Read  calc.py")
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y


async def test_a_theme_change_redraws_the_step_lines_in_its_colours() -> None:
    app = ChatApp()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        await chat.show_call(TraceEntry(1, ToolCall("c1", "Read", {"file_path": "calc.py"}), status="done", decision="allow", by="rule"))
        await pilot.pause()
        log = chat.query_one(StepLog)

        def colour(text: str) -> str:
            segment = next(seg for seg in log.render_line(0) if seg.text.startswith(text))
            return segment.style.color.triplet.hex.lower()

        app.theme = "textual-dark"
        await pilot.pause()
        dark = colour("Read")
        assert colour("●") == app.get_css_variables()["success"].lower()
        app.theme = "textual-light"
        await pilot.pause()
        assert colour("Read") != dark  # the light theme's text colour, not the line drawn before
        assert colour("●") == app.get_css_variables()["success"].lower()


async def test_a_click_on_a_reasoning_title_opens_and_folds_that_step() -> None:
    app = ChatApp()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        for step in (1, 2):
            chat.reasoning_delta(step, f"Step {step} thinks.\nA second line for step {step}.")
            await chat.end_turn()
        await pilot.pause()
        log = chat.query_one(StepLog)
        first, second = chat.reasoning
        assert first.collapsed and second.collapsed and log.size.height == 2
        await pilot.click(StepLog, offset=(3, 1))  # the second title
        await pilot.pause()
        assert not second.collapsed and first.collapsed
        assert log.text().splitlines()[1:] == ["▼ thinking (step 2) · Step 2 thinks. A second line for step 2.",
                                               "  Step 2 thinks.", "  A second line for step 2."]
        await pilot.click(StepLog, offset=(3, 2))  # a line of the open text: nothing happens
        await pilot.pause()
        assert not second.collapsed
        await pilot.click(StepLog, offset=(3, 1))
        await pilot.pause()
        assert second.collapsed and log.size.height == 2


async def test_open_reasoning_can_be_selected_and_copied_with_the_mouse() -> None:
    app = ChatApp()
    async with app.run_test(size=(80, 30)) as pilot:
        chat = app.query_one(ChatPane)
        chat.reasoning_delta(1, "The test fails.\nadd() subtracts.")
        await chat.flush()  # open while it streams
        await pilot.pause()
        log = chat.query_one(StepLog)
        # a drag from the first column of the second text line to its end
        await pilot.mouse_down(StepLog, offset=(2, 2))
        await pilot.hover(StepLog, offset=(18, 2))
        await pilot.mouse_up(StepLog, offset=(18, 2))
        await pilot.pause()
        assert app.screen.get_selected_text() == "add() subtracts."
        drawn = log.render_line(2)
        selected = app.screen.get_component_rich_style("screen--selection")
        assert any(seg.text.startswith("add()") and seg.style.bgcolor == selected.bgcolor for seg in drawn)


async def test_a_long_line_in_a_code_block_is_wrapped_not_cut(make_app) -> None:
    tail = "THE_END_OF_THE_LINE"
    code = "x = " + " + ".join(f"value_{i}" for i in range(40)) + f"  # {tail}"
    app = make_app([turn("", answer=f"Here:\n\n```python\n{code}\n```\n")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "show code")
        await wait_for(pilot, lambda: app.last_exit_reason == "agent" and not app.busy, what="the run")
        await pilot.pause(0.3)
        await wait_for(pilot, lambda: tail in app.export_screenshot(), timeout=5, what="the end of the long code line on screen")
