"""h9 red-team finding 3: the approval modal draws a command's direction overrides and invisible
characters as visible marks (as the review does), so what the person reads is what runs: with a
right-to-left override, ``rm -rf ~ #\u202e gol.sj`` may be drawn by a bidi terminal as a harmless
looking line. Real app, Pilot."""
from __future__ import annotations

from frogtui.ui.approval_screen import ApprovalScreen
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for

TRICKY = "cat notes.txt #\u202e\u2066 ; touch hidden-marker\u2069\u2066\u200b"


async def test_the_modal_marks_direction_overrides_and_invisible_characters(make_app) -> None:
    app = make_app([turn("Look.", xml_call("Bash", command=f"echo ok > x.txt; {TRICKY}")), turn("Done.", answer="ok")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        shown = app.screen.query_one("#approval-command").render().plain
        assert not any(c in shown for c in "\u202e\u2066\u2069\u200b"), repr(shown)
        assert "U+202E" in shown and "U+200B" in shown and "touch hidden-marker" in shown
