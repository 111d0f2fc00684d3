"""The modal's hunks of a proposal's text file and the landing agree: for every choice of hunks,
the spans the modal reads off the review's change groups land (``effect_hunks.partial``) exactly
what the review's own patch of those groups leaves when git applies it. Odd bytes, odd names,
long runs cut into blocks and missing final newlines included."""
from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from frogtui.tools.effect_hunks import partial
from frogtui.ui.proposal_hunks import ProposalHunks, hunk_change, spans
from frogtui.ui.review_pages import PAGE_ROWS
from frogtui.ui.themes import VARIABLE_DEFAULTS
from frogtui.vcs.hunks import FileChange, HunkSelection, decode

NUMBERS = "".join(f"{n}\n" for n in range(1, 41))
CASES = {
    "two close changes and one far": (NUMBERS, NUMBERS.replace("3\n", "three\n", 1).replace("\n5\n", "\nfive\n").replace("30\n", "")),
    "insert at the start, append without newline": (NUMBERS, "top\n" + NUMBERS + "tail"),
    "a long run cut into blocks": (NUMBERS, NUMBERS.replace("20\n", "20\n" + "".join(f"new {n}\n" for n in range(150)))),
    "crlf, form feed, line separator, a lone cr": ("a\r\nb\x0cc\nd\u2028e\nf\rg\nh\n", "a\r\nB\x0cc\nd\u2028E\nf\rg\nh"),
    "a new file": (None, "".join(f"line {n}\n" for n in range(130))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_choice_of_hunks_lands_what_the_reviews_patch_leaves(name: str, tmp_path: Path) -> None:
    before, after = CASES[name]
    change = hunk_change('we"ird\npath ␊.py', before, after)
    assert change is not None
    lines = spans(change)
    assert [h.group_ids for h in change.review_hunks] == [[g.id] for g in change.groups], "one hunk per run (or block)"
    old = (before or "").encode()
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    choices = list(itertools.product([True, False], repeat=len(change.groups)))
    for choice in choices[:16]:
        for group, taken in zip(change.groups, choice, strict=True):
            group.accepted = taken
        accepted = tuple(lines[g.id] for g in change.groups if g.accepted)
        rejected = tuple(lines[g.id] for g in change.groups if not g.accepted)
        landed = partial(old, after.encode(), accepted, rejected)
        target = tmp_path / change.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(old)
        patch = HunkSelection([change]).to_patch()
        if patch:
            done = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=_as_existing(patch, before), capture_output=True)
            assert done.returncode == 0, decode(done.stderr)
        assert landed == target.read_bytes(), (name, choice)


def _as_existing(patch: bytes, before: str | None) -> bytes:
    """A new file's patch, applied over an empty file (as the landing computes it: against nothing)."""
    if before is not None:
        return patch
    name = patch.split(b"+++ b/")[1].split(b"\n")[0]
    return patch.replace(b"new file mode 100644\n", b"").replace(b"--- /dev/null\n", b"--- a/" + name + b"\n")


class HunksApp(App[None]):
    """The modal's hunk view alone, in a scrolling body 12 rows high."""

    CSS = "VerticalScroll { height: 12; }"

    def __init__(self, change: FileChange) -> None:
        super().__init__()
        self.change = change

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield ProposalHunks(self.change)


async def test_arrows_reach_every_line_and_every_page_and_space_takes_the_hunk_under_the_cursor() -> None:
    before = "".join(f"{n}\n" for n in range(600))
    after = "".join(f"{n} changed\n" if n % 8 == 0 else ("".join(f"tall {k}\n" for k in range(30)) if n == 300 else f"{n}\n")
                    for n in range(600))
    change = hunk_change("big.txt", before, after)
    assert change is not None
    app = HunksApp(change)
    async with app.run_test(size=(80, 20)) as pilot:
        view = app.query_one(ProposalHunks)
        body = app.query_one(VerticalScroll)
        view.focus()
        await pilot.pause()
        assert view.pages > 1 and view.page_number == 0
        last_on_first = [r.hunk for r in view.rows[:PAGE_ROWS] if r.kind == "header"][-1]
        view.cursor = last_on_first
        view._show_cursor()
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        at = change.review_hunks.index(last_on_first) + 1
        assert view.cursor is change.review_hunks[at] and view.page_number == 1, "the next hunk, on the next page"
        await pilot.press("space")
        assert not change.review_hunks[at].accepted and all(h.accepted for h in change.review_hunks if h is not change.review_hunks[at])
        tall = next(h for h in change.review_hunks if any(g.added and g.added[0] == "tall 0\n" for g in h.groups))
        view.cursor = tall
        view.page_number = next(n for n in range(view.pages) if any(r.hunk is tall for r in view.rows[n * PAGE_ROWS:(n + 1) * PAGE_ROWS]))
        view._draw()
        await pilot.pause()
        view._show_cursor()
        await pilot.pause()
        top = body.scroll_y
        await pilot.press("down")
        await pilot.pause()
        assert view.cursor is tall and body.scroll_y > top, "a hunk taller than the view is scrolled through before the next one"
        for _ in range(5):
            await pilot.press("down")
        await pilot.pause()
        assert view.cursor is not tall
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert view.page_number == view._page_of(view.cursor) and view.page_number < view.pages - 1
