"""`frogtui demo`: a whole replayed session on a fresh demo repository, no model needed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import git


@pytest.mark.slow
def test_headless_demo_fixes_the_bug(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "frogtui", "demo", str(folder), "--headless"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "3 passed" in proc.stdout and proc.stdout.startswith("Fixed `median`")
    repo = folder / "stats"
    assert "return (ordered[middle - 1] + ordered[middle]) / 2" in (repo / "stats.py").read_text()
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo, capture_output=True, text=True)
    assert tests.returncode == 0, tests.stdout
    assert git(repo, "status", "--porcelain") == " M stats.py\n"
    assert "[3] Bash python -m pytest -q" in proc.stderr and "exit=1" in proc.stderr  # the failing run before the fix
    assert "whatever you answer" in proc.stderr  # a replay: the person's answers do not change what comes next


async def test_the_demo_app_says_that_the_replay_ignores_the_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from frogtui import demo
    from frogtui.ui.chat import Notice
    from tests.ui.conftest import wait_for

    monkeypatch.setenv("HOME", str(tmp_path))
    app = demo.demo_app(tmp_path / "demo")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the replay to load")
        notices = [notice.render().plain for notice in app.query(Notice)]
        assert any(demo.REPLAY_NOTE in text for text in notices), notices
        assert app.query_one("#prompt").value == demo.TASK


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine\n")
    proc = subprocess.run(
        [sys.executable, "-m", "frogtui", "demo", str(tmp_path), "--headless"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "is not empty" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "keep.txt").read_text() == "mine\n"
