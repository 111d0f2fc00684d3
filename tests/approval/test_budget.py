"""The policy's work is bounded (issue 23, item 7): a glob that would walk a tree of symlinked
folders, or any other look at the disk, stops at the budget and the command is asked about,
saying why, within about two seconds."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine
from frogtui.approval.budget import Budget
from frogtui.approval.facts_links import glob_matches, links_under
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace


@pytest.fixture
def loops(py_repo: Path) -> Path:
    """The repository with eight symlinks to itself: every level of a glob has eight more folders."""
    for n in range(8):
        os.symlink(".", py_repo / f"l{n}")
    return py_repo


@pytest.mark.timing
def test_a_glob_through_self_links_is_asked_about_within_two_seconds(loops: Path) -> None:
    engine = PolicyEngine(Workspace(loops, tmp_dir=loops.parent / "tmp"))
    started = time.monotonic()
    decision = engine.evaluate(ToolCall("t", "Bash", {"command": "cat */*/*/*/*/*/*/*/*/*/*/nomatch"}))
    assert time.monotonic() - started < 2.0
    assert decision.kind == "ask" and "stopped" in decision.reason, decision


def test_an_ordinary_glob_is_still_decided(loops: Path) -> None:
    engine = PolicyEngine(Workspace(loops, tmp_dir=loops.parent / "tmp"))
    decision = engine.evaluate(ToolCall("t", "Bash", {"command": "cat *.py"}))
    assert (decision.kind, decision.rule) == ("allow", "read-only"), decision


def test_glob_matches_follows_the_shell(tmp_path: Path) -> None:
    for name in ("a.py", "b.txt", ".hidden.py", "sub/c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    assert glob_matches(f"{tmp_path}/*.py") == [f"{tmp_path}/a.py"]
    assert glob_matches(f"{tmp_path}/*.py", dotglob=True) == [f"{tmp_path}/.hidden.py", f"{tmp_path}/a.py"]
    assert glob_matches(f"{tmp_path}/*/c.py") == [f"{tmp_path}/sub/c.py"]
    assert glob_matches(f"{tmp_path}/*/nomatch") == []


def test_the_budget_stops_the_walk_and_says_why(loops: Path) -> None:
    budget = Budget(work=1_000)
    assert glob_matches(f"{loops}/*/*/*/*/*/*/nomatch", budget=budget) is None
    assert budget.stopped is not None and "1,000" in budget.stopped
    ticks = iter(range(10**9))
    slow = Budget(seconds=5, clock=lambda: float(next(ticks)))
    assert links_under(str(loops), slow) is not None or slow.stopped
    assert glob_matches(f"{loops}/*/*/*/*/*/*/*/nomatch", budget=slow) is None and "5 s" in (slow.stopped or "")
