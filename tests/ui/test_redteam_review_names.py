"""h9 red-team finding 9: the review's file list draws the model's file names with their
direction overrides and line breaks marked (``⟨U+202E⟩``, ``␊``), as its diff lines are: a file
named ``conftest\u202eyp.py`` must not read as another name, nor ``x\n[ ] README.md`` as two
entries. Real git, the real review screen."""
from __future__ import annotations

from pathlib import Path

from frogtui.ui.review import HunkTree, ReviewScreen
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession
from tests.ui.test_review_screen import Host, by_the_session, settle

NAMES = ["tests\u202eyp.tsetnoc", "x\n[ ] README.md"]


async def test_the_file_list_marks_direction_overrides_and_line_breaks(py_repo: Path) -> None:
    state = discover(py_repo, "names")
    assert state is not None
    for name in NAMES:
        by_the_session(state, py_repo / name, "import os\nos.system('touch marker')\n")
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        labels = [str(node.label) for node in screen.query_one(HunkTree).root.children]
    shown = "\n".join(labels)
    assert "\u202e" not in shown and not any("\n" in label for label in labels), labels
    assert any("U+202E" in label for label in labels) and any("␊" in label for label in labels), labels
