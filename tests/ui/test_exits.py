"""Every way out of the app ends cleanly: the run stops, the trajectory and the replay are written,
and nothing is raised (no traceback)."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from frogtui.config import Config
from frogtui.models.replay import ReplayModel
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from tests.support import turn, write_replay, xml_call
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for


async def test_ctrl_c_twice_while_asking_quits_cleanly(make_app) -> None:
    app = make_app([turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("never", answer="never")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a file")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app._exception is None
    assert app.session.trajectory_path.is_file() and app.session.replay_path.is_file()
    assert not (Path(app.config.repo) / "new.txt").exists()


async def test_ctrl_c_twice_while_generating_quits_cleanly(py_repo: Path, home: Path) -> None:
    replay = write_replay(home / "slow.jsonl", [turn("".join(f"Think {i} " for i in range(400)), answer="done")])  # no repeat
    config = Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules_file(home))
    app = FrogApp(config, clock=fake_clock(), model_loader=lambda spec, config, report=None: ReplayModel(replay, piece_delay=0.01))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "think")
        await wait_for(pilot, lambda: app.busy and app.status.step >= 1, what="the run to start")
        await pilot.pause(0.2)
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app._exception is None
    assert app.session.trajectory_path.is_file() and app.session.replay_path.is_file()


async def test_escape_then_quit_from_the_palette_quits_cleanly(make_app) -> None:
    app = make_app([turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("never", answer="never")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a file")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("escape")
        await app.run_action("quit")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app._exception is None and app.return_code == 0
    assert app.session.trajectory_path.is_file() and app.session.replay_path.is_file()


def _read_until(fd: int, needle: bytes, seen: bytearray, timeout: float) -> bool:
    """Read the pty into ``seen`` until ``needle`` shows (True) or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # the child closed its end
                return needle in seen
    return needle in seen


@pytest.mark.slow
@pytest.mark.parametrize("way", ["SIGTERM", "SIGHUP", "terminal closed"])
def test_a_signal_while_asking_ends_the_app_with_the_session_saved(py_repo: Path, tmp_path: Path, way: str) -> None:
    """The real app in its own terminal (a pty), a question open; ``kill -TERM`` (timeout, CI),
    ``-HUP``, or the terminal closed (the kernel sends SIGHUP): the app exits with 128+N, the
    session's trajectory and replay written, no traceback (on the terminal while it is open)."""
    replay = write_replay(tmp_path / "replay.jsonl", [turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")),
                                                       turn("never", answer="never")])
    env = {**os.environ, "HOME": str(tmp_path), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    env.update({name: str(tmp_path / name.lower()) for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")})
    (tmp_path / "xdg_config_home" / "frogtui").mkdir(parents=True)
    rules_file(tmp_path).rename(tmp_path / "xdg_config_home" / "frogtui" / "rules.toml")
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "frogtui", "--repo", str(py_repo), "--model", f"replay:{replay}"],
                            stdin=child, stdout=child, stderr=child, env=env, cwd=py_repo, start_new_session=True,
                            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))  # the pty is its terminal
    os.close(child)
    seen = bytearray()
    try:
        assert _read_until(main, b"Model ready", seen, 60), seen[-2000:].decode(errors="replace")
        os.write(main, b"write a file\r")
        assert _read_until(main, b"approve Write?", seen, 30), seen[-2000:].decode(errors="replace")
        if way == "terminal closed":
            os.close(main)
            main = -1
            proc.wait(30)
        else:
            proc.send_signal(getattr(signal, way))
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline:
                _read_until(main, b"\0never", seen, 0.2)
        number = signal.SIGTERM if way == "SIGTERM" else signal.SIGHUP
        assert proc.poll() == 128 + number
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if main >= 0:
            os.close(main)
    text = seen.decode(errors="replace")
    assert "Traceback" not in text and "Error" not in text
    (folder,) = (tmp_path / "xdg_state_home").rglob("trajectory.json")
    saved = json.loads(folder.read_text())
    assert [m["content"] for m in saved["messages"] if m["role"] == "user"] == ["write a file"]
    told = [m["content"] for m in saved["messages"] if m["role"] == "tool"]
    assert told == [f"Interrupted: frogtui was stopped by {signal.Signals(number).name} before it ran (not by the user)"], told
    assert list((tmp_path / "xdg_state_home").rglob("replay.jsonl"))
    assert not (py_repo / "new.txt").exists()


@pytest.mark.parametrize("screen_key", ["ctrl+r", "ctrl+o"])
async def test_ctrl_c_twice_over_another_screen_quits_cleanly(make_app, screen_key: str) -> None:
    """Over the review or the trajectory viewer, Ctrl+C twice still saves the session and quits."""
    app = make_app([turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("Done.", answer="Done.")], approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a file")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
        await pilot.press(screen_key)
        await wait_for(pilot, lambda: len(app.screen_stack) > 1, what="the other screen")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app._exception is None and app.return_code == 0
    assert app.session.trajectory_path.is_file() and (app.session.folder / "trace.json").is_file()
