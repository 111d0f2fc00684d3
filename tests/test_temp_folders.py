"""A person's temp folder never fills with frogtui's: frogtui keeps what it needs while it runs in
one folder of its process (``frogtui.temp_folders``), removes it when it ends, and a process that
could not (killed, ``os._exit``) has its folder removed by the next frogtui that starts. Each product
path runs in a process of its own with ``TMPDIR`` pointed at a fresh folder."""
from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from frogtui import temp_folders
from frogtui.tools.workspace import Workspace
from tests.acp.support import ScriptedClient, acp_agent
from tests.overlay import needs_overlay
from tests.support import turn, write_replay, xml_call

ROOT = Path(__file__).resolve().parent.parent

RUN = """
from frogtui.cli import main
code = main(["run", "go", "--repo", REPO, "--model", "replay:" + REPLAY, "--approve", "policy"])
assert code == 0, code
print("DURING", sorted(os.listdir(os.environ["TMPDIR"])), flush=True)
"""
"""A run whose Bash commands run in the sandbox (``ls``: read-only, allowed) and as a proposal on
a copy-on-write view (a write the policy asks about: denied, no person)."""
HEADLESS = RUN + """
assert main(["doctor", "--repo", REPO]) in (0, 1)
"""
"""The run, then ``frogtui doctor``."""

APP = """
import asyncio
from frogtui.config import Config
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from tests.ui.conftest import submit, wait_for

async def drive():
    app = FrogApp(Config(repo=Path(REPO), model_spec="replay:" + REPLAY), prompt="")
    async with app.run_test(size=(100, 30)) as pilot:
        await submit(pilot, "go")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.query(".proposal-diff"), what="the proposal")
        await pilot.press("n")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
        print("DURING", sorted(os.listdir(os.environ["TMPDIR"])), flush=True)

asyncio.run(drive())
"""
"""The app through Pilot, the same run (the proposal shown, and denied)."""


def steps(repo: Path) -> Path:
    return write_replay(repo.parent / "replay.jsonl", [
        turn("Look.", xml_call("Bash", command="ls; echo note > $TMPDIR/note; cat calc.py")),
        turn("Write.", xml_call("Bash", command="echo 2 > made.txt")),
        turn("Done.", answer="done"),
    ])


def run_product(script: str, repo: Path, tmp: Path, *, killed: bool = False) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh Python with ``TMPDIR=tmp`` (REPO and REPLAY set; with ``killed``, the
    process then kills itself with SIGKILL: no ``finally``, no ``atexit``)."""
    prelude = f"import os, signal\nfrom pathlib import Path\nREPO = {str(repo)!r}\nREPLAY = {str(steps(repo))!r}\n"
    end = "\nos.kill(os.getpid(), signal.SIGKILL)\n" if killed else ""
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(script) + end], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def during(done: subprocess.CompletedProcess[str]) -> list[str]:
    line = next(line for line in done.stdout.splitlines() if line.startswith("DURING "))
    return eval(line.removeprefix("DURING "))  # a list of names, printed by the script above


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    return folder


@needs_overlay
@pytest.mark.slow  # a real frogtui process each, 4-7 s (issue 29's budget)
def test_the_app_keeps_one_folder_while_it_runs_and_leaves_none(py_repo: Path, tmp: Path) -> None:
    done = run_product(APP, py_repo, tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    [kept] = during(done)  # the sandbox's git config and seccomp filter, the snapshots' indexes: all in it
    assert kept.startswith(temp_folders.PREFIX)
    assert os.listdir(tmp) == []


@needs_overlay
@pytest.mark.slow  # a real frogtui process each, 4-7 s (issue 29's budget)
def test_a_killed_frogtui_leaves_a_folder_the_next_one_removes(py_repo: Path, tmp: Path) -> None:
    """The next ``frogtui run`` (and ``frogtui doctor``) sweeps it, keeps its own in one folder
    while it runs, and leaves none."""
    killed = run_product(RUN, py_repo, tmp, killed=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    [left] = os.listdir(tmp)
    assert left.startswith(temp_folders.PREFIX)
    done = run_product(HEADLESS, py_repo, tmp)
    assert done.returncode == 0, done.stderr[-3000:]
    [kept] = during(done)
    assert kept.startswith(temp_folders.PREFIX) and kept != left
    assert os.listdir(tmp) == []


async def test_the_acp_agent_leaves_nothing(py_repo: Path, tmp: Path, tmp_path: Path) -> None:
    from acp.helpers import text_block

    client = ScriptedClient()
    env = dict(os.environ, TMPDIR=str(tmp))
    async with acp_agent(client, "--model", f"replay:{steps(py_repo)}", cwd=py_repo, stderr=tmp_path / "stderr", env=env,
                         process=True) as conn:
        new = await conn.new_session(cwd=str(py_repo))
        response = await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
        assert response.stop_reason == "end_turn"
        assert [name for name in os.listdir(tmp) if not name.startswith(temp_folders.PREFIX)] == []
    assert os.listdir(tmp) == [], (tmp_path / "stderr").read_text()[-3000:]


def test_a_folder_in_use_or_not_ours_is_never_swept(tmp: Path) -> None:
    """A live process's folder is locked; a folder nobody holds that was never marked held is
    swept only once it is older than a process needs to lock it; a file of that name stays."""
    held = subprocess.Popen([sys.executable, "-c", "from frogtui.temp_folders import process_folder; process_folder(); input()"],
                            env=dict(os.environ, TMPDIR=str(tmp)), stdin=subprocess.PIPE, text=True)
    try:
        while not any((tmp / name / temp_folders.HELD).exists() for name in os.listdir(tmp)):
            assert held.poll() is None
        starting = tmp / f"{temp_folders.PREFIX}starting"
        starting.mkdir()
        (tmp / f"{temp_folders.PREFIX}file").write_text("")
        assert temp_folders.sweep(tmp) == []
        os.utime(starting, (0, 0))
        assert temp_folders.sweep(tmp) == [starting]
        assert len(os.listdir(tmp)) == 2
    finally:
        held.communicate("\n", timeout=30)
    assert os.listdir(tmp) == [f"{temp_folders.PREFIX}file"]


def test_a_workspace_without_a_temp_folder_removes_its_own(tmp_path: Path) -> None:
    closed = Workspace(tmp_path)
    assert closed.tmp_dir.is_dir()
    closed.close()
    assert not closed.tmp_dir.exists()
    dropped = Workspace(tmp_path)
    folder = dropped.tmp_dir
    del dropped
    gc.collect()
    assert not folder.exists()
    given = tmp_path / "given"
    given.mkdir()
    Workspace(tmp_path, tmp_dir=given).close()
    assert given.is_dir()
