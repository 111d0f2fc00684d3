"""The pieces of the UI on their own: themes as data, the diff model and viewer, the status bar,
the modal ask behind the gate."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from frogtui.approval import Approver, PersonAnswer, PolicyEngine
from frogtui.errors import ConfigError
from frogtui.protocol import ApprovalRequest, ToolCall
from frogtui.tools import Workspace
from frogtui.ui.asking import ModalAsk
from frogtui.ui.diffmodel import FileDiff
from frogtui.ui.diffview import DiffView
from frogtui.ui.messages import ApprovalRequested
from frogtui.ui.status import StatusBar, context_bar, context_level, quantisation
from frogtui.ui.themes import (
    VARIABLE_DEFAULTS,
    load_themes,
    parse_theme,
    pygments_style_for,
    theme_folders,
)
from frogtui.vcs.repository import read_git_state
from tests.support import git


def test_shipped_themes_load_from_the_checkout_and_the_package_folder() -> None:
    checkout, package, _user = theme_folders()
    for folder in (checkout, package):
        catalog = load_themes([folder])
        assert {"frog-dark", "frog-light"} <= set(catalog.themes), folder
        assert catalog.problems == []
    dark = load_themes([checkout]).themes["frog-dark"]
    assert dark.dark and not load_themes([checkout]).themes["frog-light"].dark
    assert set(VARIABLE_DEFAULTS) <= set(dark.variables)
    assert pygments_style_for(dark) == "monokai"


def test_a_broken_theme_is_reported_and_the_others_still_load(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text('name = "pond"\nprimary = "#00ff00"\n[variables]\ndiff-added = "#00aa00"\n')
    (tmp_path / "bad.toml").write_text('name = "broken"\nprimary = \n')
    (tmp_path / "odd.toml").write_text('name = "odd"\nprimary = "#000000"\ncolour = "red"\n')
    catalog = load_themes([tmp_path])
    assert list(catalog.themes) == ["pond"]
    assert len(catalog.problems) == 2 and any("unknown key(s): colour" in p for p in catalog.problems)
    with pytest.raises(ConfigError, match="needs string keys"):
        parse_theme('dark = true\n', "x.toml")


def test_user_themes_override_shipped_ones(tmp_path: Path) -> None:
    user = tmp_path / "themes"
    user.mkdir()
    (user / "mine.toml").write_text('name = "frog-dark"\nprimary = "#123456"\n')
    checkout = theme_folders()[0]
    assert load_themes([checkout, user]).themes["frog-dark"].primary == "#123456"


def test_diff_rows_and_counts() -> None:
    before = "".join(f"line {i}\n" for i in range(20))
    after = before.replace("line 5\n", "line five\n").replace("line 15\n", "")
    diff = FileDiff("notes.txt", before, after)
    assert (diff.added, diff.removed) == (1, 2)
    assert diff.header == "notes.txt  +1 -2"
    kinds = [row.kind for row in diff.unified]
    assert kinds.count("hunk") == 2 and kinds.count("added") == 1 and kinds.count("removed") == 2
    changed = [row for row in diff.split if row.kind == "changed"]
    assert [(row.old_no, row.new_no) for row in changed] == [(5, 5)]
    new_file = FileDiff("a.py", None, "x = 1\n")
    assert new_file.header == "a.py  +1 -0  (new file)"


def test_highlighting_uses_the_file_type() -> None:
    diff = FileDiff("calc.py", None, "def add(a, b):\n    return a + b\n")
    names = {str(token) for token, _text in diff.new.tokens(0)}
    assert "Token.Keyword" in names and "Token.Name.Function" in names


class DiffApp(App[None]):
    def __init__(self, diff: FileDiff) -> None:
        super().__init__()
        self.diff = diff

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)  # DiffView's colours are frogtui theme variables

    def compose(self) -> ComposeResult:
        yield DiffView(self.diff)


@pytest.mark.parametrize("width", [100, 160])
@pytest.mark.slow
async def test_a_10000_line_change_opens_and_scrolls_fast(width: int) -> None:
    before = "".join(f"value_{i} = {i}\n" for i in range(10_000))
    after = "".join(f"value_{i} = {i * 2 if i % 3 else i}\n" for i in range(10_000))
    started = time.monotonic()
    diff = FileDiff("big.py", before, after)
    built = time.monotonic() - started
    app = DiffApp(diff)
    async with app.run_test(size=(width, 40)) as pilot:
        view = app.query_one(DiffView)
        await pilot.pause()
        started = time.monotonic()
        for fraction in range(20, -1, -1):  # 21 jumps across the whole change, each fully rendered
            view.scroll_to(y=view.max_scroll_y * fraction / 20, animate=False)
            await pilot.pause()
        shown = time.monotonic() - started
        assert view.is_split == (width >= 140)
        rows = diff.split if view.is_split else diff.unified
        assert view.virtual_size.height == len(rows) + 1
    print(f"\n10,000-line change: diff built in {built:.2f}s (worker thread), 21 jumps rendered in {shown:.2f}s (width {width})")


def test_status_helpers(py_repo: Path) -> None:
    assert quantisation("microsoft_FrogNano-4B-2609-Q4_K_M.gguf") == "Q4_K_M"
    assert quantisation("FrogNano-4B-IQ2_M") == "IQ2_M"
    assert quantisation("replay:x.jsonl") == ""
    assert context_bar(0, 100, 8) == "░" * 8 and context_bar(50, 100, 8) == "████░░░░" and context_bar(200, 100, 8) == "█" * 8
    state = read_git_state(py_repo)
    assert state is not None and (state.branch, state.changed) == ("main", 0)
    (py_repo / "new.txt").write_text("x\n")
    (py_repo / "calc.py").write_text("changed\n")
    assert read_git_state(py_repo).changed == 2
    git(py_repo, "checkout", "-q", "-b", "feature")
    assert read_git_state(py_repo).branch == "feature"
    assert read_git_state(py_repo.parent) is None


def engine(tmp_path: Path) -> PolicyEngine:
    """The policy with the default rules for a repository in ``tmp_path``."""
    return PolicyEngine(Workspace(tmp_path, tmp_dir=tmp_path / ".tmp"))


def test_approver_asks_and_always_allow_stores_the_narrow_rule(tmp_path: Path) -> None:
    posted: list[object] = []

    def answer(message: object) -> None:
        posted.append(message)
        if isinstance(message, ApprovalRequested):
            assert message.session_rule == "Bash: make test"
            message.future.set_result(PersonAnswer("always"))

    approver = Approver(engine(tmp_path), ask=ModalAsk(answer).ask)
    request = ApprovalRequest(ToolCall("c1", "Bash", {"command": "make test"}), step=1, root=str(tmp_path))
    first = approver.approve(request)
    assert (first.decision, first.by, first.rule) == ("allow", "person", "Bash: make test")
    second = approver.approve(request)
    assert (second.decision, second.by) == ("allow", "rule")
    assert sum(isinstance(m, ApprovalRequested) for m in posted) == 1
    read = approver.approve(ApprovalRequest(ToolCall("c2", "Read", {"file_path": "x"}), step=1, root=str(tmp_path)))
    assert read.allowed and read.by == "rule"


def test_cancel_pending_denies_a_waiting_question(tmp_path: Path) -> None:
    modal = ModalAsk(lambda message: None)
    approver = Approver(engine(tmp_path), ask=modal.ask)
    request = ApprovalRequest(ToolCall("c1", "Bash", {"command": "rm -rf build"}), step=1, root=str(tmp_path))
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(approver.approve(request)))
    thread.start()
    deadline = time.monotonic() + 5
    while not modal._pending and time.monotonic() < deadline:
        time.sleep(0.01)
    assert modal.cancel_pending() == 1
    thread.join(5)
    (approval,) = result
    assert (approval.decision, approval.by, approval.reason) == ("deny", "person", "Interrupted by the user")


def test_context_levels_follow_the_budget_and_the_handoff_margin() -> None:
    levels = [context_level(used, 1000, 100) for used in (0, 749, 750, 899, 901, 1000, 1200)]
    assert levels == ["ok", "ok", "near", "near", "full", "full", "full"]
    assert context_level(400, 1000, 900) == "ok" and context_level(501, 1000, 900) == "full"  # the margin is capped at half the budget
    assert context_level(10, 0, 100) == "ok"


class MeterApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar()


@pytest.mark.parametrize(
    ("used", "total", "style"), [(1200, 1200, "status-bar--bar"), (6200, 6200, "status-bar--warn"), (7900, 20500, "status-bar--full")]
)
async def test_the_meter_shows_used_of_budget_the_session_total_and_its_colour(used: int, total: int, style: str) -> None:
    app = MeterApp()
    async with app.run_test(size=(200, 3)):
        bar = app.query_one(StatusBar)
        bar.context_size, bar.handoff_margin, bar.context_used, bar.session_tokens = 8192, 1024, used, total
        text = bar.render()
        plain = text.plain
        assert f"ctx {context_bar(used, 8192)} {used / 1000:.1f}k/8.2k" in plain
        assert ("Σ20.5k" in plain) == (total > used)
        start = plain.index("ctx ") + 4
        styles = [span.style for span in text.spans if span.start == start]
        assert styles == [bar.get_component_rich_style(style)]


@pytest.mark.parametrize(("sandbox", "weak", "shown", "warned"), [(True, False, "sandbox on", False), (True, True, "sandbox weak", True),
                                                                  (False, False, "sandbox off", True)])
async def test_the_status_bar_warns_when_the_sandbox_is_off_or_missing_a_piece(sandbox: bool, weak: bool, shown: str, warned: bool) -> None:
    app = MeterApp()
    async with app.run_test(size=(200, 3)):
        bar = app.query_one(StatusBar)
        bar.sandbox, bar.sandbox_weak = sandbox, weak
        text = bar.render()
        assert shown in text.plain
        start = text.plain.index(shown) + len("sandbox ")
        warn = bar.get_component_rich_style("status-bar--warn")
        assert any(span.start == start and span.style == warn for span in text.spans) == warned
