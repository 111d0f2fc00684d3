"""The approval modal keeps its keys on screen (y, a, n, r, e, Esc) whatever it shows: a long
command, a long diff, a long rule scroll above the key row, at 80x24 as at 120x40."""
from __future__ import annotations

import pytest

from frogtui.ui.approval_screen import ApprovalScreen
from tests.support import turn, xml_call
from tests.ui.conftest import submit, wait_for

LONG_COMMAND = " && ".join([
    "python -m pip install --quiet --requirement requirements-dev.txt --constraint constraints.txt",
    "python -m pytest -q tests/unit tests/integration --maxfail=1 --durations=10 -p no:cacheprovider",
    "python -m ruff check src tests --output-format=concise --select E,F,W,I,B,UP,SIM",
    "git diff --stat HEAD~1 -- src tests docs | tee build/diffstat.txt | tail -n 20",
])
LONG_FILE = "".join(f"line {n}: the quick brown fox jumps over the lazy dog\n" for n in range(1, 31))

CALLS = {
    "bash": xml_call("Bash", command=LONG_COMMAND, description="Install, test, lint and summarise the change in one go"),
    "write": xml_call("Write", file_path="NOTES.md", content=LONG_FILE),
}


def modal_app(make_app, kind: str):
    return make_app([turn("Go.", CALLS[kind]), turn("Done.", answer="Done.")])


async def open_modal(pilot, app) -> ApprovalScreen:
    await submit(pilot, "do it")
    await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
    await pilot.pause(0.3)
    return app.screen


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("kind", sorted(CALLS))
async def test_the_key_row_is_on_screen(make_app, kind: str, size: tuple[int, int]) -> None:
    app = modal_app(make_app, kind)
    async with app.run_test(size=size) as pilot:
        screen = await open_modal(pilot, app)
        keys = screen.query_one("#approval-keys")
        region = keys.region
        assert region.height >= 1
        assert screen.region.contains_region(region), (region, screen.region)
        assert screen.query_one("#approval-dialog").region.contains_region(region)
        assert region.height == len(keys.lines(keys.size.width))  # every line of it drawn
        text = keys.render().plain
        for key in ["y", "a", "n", "r"] + (["e"] if kind == "bash" else []) + ["Esc"]:
            assert f" {key} " in text
        body = screen.query_one("#approval-body")
        assert body.region.bottom <= region.y
        if size == (80, 24):  # more than fits: the body scrolls
            assert body.max_scroll_y > 0 or screen.query_one("#approval-diff").max_scroll_y > 0
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal to close")


async def test_the_reason_box_opens_above_the_keys_at_80x24(make_app) -> None:
    app = modal_app(make_app, "bash")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_modal(pilot, app)
        await pilot.press("r")
        await pilot.pause(0.2)
        box = screen.query_one("#approval-reason")
        assert box.has_focus and screen.region.contains_region(box.region)
        assert screen.region.contains_region(screen.query_one("#approval-keys").region)
        await pilot.press("escape")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("kind", sorted(CALLS))
def test_approval_modal_fits(make_app, snap_compare, kind: str, size: tuple[int, int]) -> None:
    app = modal_app(make_app, kind)

    async def run_before(pilot) -> None:
        await open_modal(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


async def test_arrows_scroll_a_long_command_at_80x24(make_app) -> None:
    app = modal_app(make_app, "bash")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_modal(pilot, app)
        body = screen.query_one("#approval-body")
        assert body.has_focus and body.scroll_y == 0
        await pilot.press("end")
        await pilot.pause(0.2)
        assert body.scroll_y == body.max_scroll_y > 0  # the rule at the bottom is reachable
        await pilot.press("y")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal to close")


MANY_PARTS = " && ".join(f"touch build/report-{n}-with-a-rather-long-file-name-for-the-nightly-job.txt" for n in range(15))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_long_always_allow_rule_leaves_the_other_keys_on_screen(make_app, size: tuple[int, int]) -> None:
    """A command of 15 parts, each with its own narrow rule: the rules "always allow" would store
    are listed in the body (which scrolls), and the key row keeps n, r, e and Esc on screen."""
    app = make_app([turn("Go.", xml_call("Bash", command=MANY_PARTS, description="Touch the reports")), turn("Done.", answer="Done.")])
    async with app.run_test(size=size) as pilot:
        screen = await open_modal(pilot, app)
        keys = screen.query_one("#approval-keys")
        assert screen.query_one("#approval-dialog").region.contains_region(keys.region)
        assert keys.region.height == len(keys.lines(keys.size.width)) <= 3
        text = keys.render().plain
        for key in ["y", "a", "n", "r", "e", "Esc"]:
            assert f" {key} " in text
        listed = screen.query_one("#approval-always")
        assert listed.display
        stored = str(listed.render())
        assert all(f"report-{n}-with" in stored for n in range(15))
        body = screen.query_one("#approval-body")
        assert body.region.bottom <= keys.region.y
        await pilot.press("end")
        await pilot.pause(0.2)
        assert body.scroll_y == body.max_scroll_y  # the list's end is reachable
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal to close")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_end_of_a_long_diff_and_the_rule_are_drawn(make_app, size: tuple[int, int]) -> None:
    """A new file of 120 lines: the diff (which has the focus) fits inside the body, so its last
    line is drawn after End, and the rule that asked stays drawn below it (no part of either is
    cut off by the body's edge, where the keys cannot scroll to it)."""
    content = "".join(f"row {n}\n" for n in range(1, 121))
    app = make_app([turn("Go.", xml_call("Write", file_path="big.txt", content=content)), turn("Done.", answer="Done.")])
    async with app.run_test(size=size) as pilot:
        screen = await open_modal(pilot, app)
        body, diff, rule = (screen.query_one(f"#approval-{name}") for name in ("body", "diff", "rule"))
        assert diff.has_focus
        await pilot.press("end")
        await pilot.pause(0.2)
        assert diff.scroll_y == diff.max_scroll_y > 0
        assert body.region.contains_region(diff.region), (body.region, diff.region)
        assert body.region.contains_region(rule.region), (body.region, rule.region)
        assert screen.region.contains_region(screen.query_one("#approval-keys").region)
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalScreen), what="the modal to close")
