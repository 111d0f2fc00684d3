"""What the model, a command or the repository wrote never reaches the terminal as a control
sequence: Textual passes ESC through, so reasoning, an answer, a command's output or a file name
holding ``ESC ] 52`` (write the clipboard) or ``ESC [ 2 J`` (clear the screen) would act on the
person's terminal."""
from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget

from frogtui.ui.app import FrogApp
from frogtui.ui.terminal_safety import ControlFilter
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for

OSC52 = "\x1b]52;c;cHduZWQ=\x07"
CLEAR = "\x1b[2J\x9b1m"


def drawn_text(app: FrogApp) -> str:
    """Every line every widget on the screen draws, as the terminal would get its text."""
    texts = []
    for widget in app.screen.walk_children(Widget):
        if widget.display and widget.size.area:
            for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height)):
                texts.extend(segment.text for segment in strip if not segment.control)
    return "".join(texts)


async def test_control_sequences_written_by_the_model_or_a_command_are_not_drawn(make_app) -> None:
    command = "printf 'out \\033]52;c;cHduZWQ=\\007 \\033[2J done'"
    app = make_app([
        turn(f"Thinking {OSC52} about {CLEAR} it.", xml_call("Bash", command=command)),
        turn("Done.", answer=f"The answer {OSC52}{CLEAR} here."),
    ], approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
        app.action_toggle_reasoning()  # the reasoning open, its text drawn
        await pilot.pause(0.3)
        shown = drawn_text(app)
        assert "Thinking" in shown and "The answer" in shown and "done" in shown  # the text is there
        assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown


def test_the_filter_keeps_text_styles_and_width() -> None:
    from rich.segment import Segment
    from rich.style import Style

    bold = Style(bold=True)
    segments = [Segment("a\x1b[31mb", bold), Segment("plain")]
    out = ControlFilter().apply(segments, background=None)  # type: ignore[arg-type]
    assert [(s.text, s.style) for s in out] == [("a[31mb", bold), ("plain", None)]
    plain = segments[1:]
    assert ControlFilter().apply(plain, background=None) is plain  # nothing to drop: the same segments  # type: ignore[arg-type]
