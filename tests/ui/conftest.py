"""Fixtures for the app tests: a replay model over a real git repository, a fake clock, and a
HOME that makes displayed paths short and stable (``~/repo``)."""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.strip import Strip

from frogtui.config import Config
from frogtui.ui.app import FrogApp
from frogtui.ui.steplog import StepLog
from tests.support import write_replay

SIZE = (120, 40)


def fake_clock(step: float = 0.5) -> Callable[[], float]:
    """A monotonic clock that moves ``step`` seconds per reading (stable durations)."""
    return partial(next, itertools.count(1000.0, step))


def rules_file(folder: Path) -> Path:
    """A user rules file that turns the sandbox off, so the screens do not depend on whether
    bubblewrap works on the machine running the tests, and the read-only default off, so that
    every command (``ls`` too) shows the approval screen the tests drive."""
    path = folder / "rules.toml"
    path.write_text('[sandbox]\nbash = "none"\n\n[bash]\nread_only = false\n')
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
def make_app(py_repo: Path, home: Path) -> Callable[..., FrogApp]:
    """Build the app for ``py_repo`` with a replay of ``turns`` (raw model turns)."""

    def build(turns: list[str], *, replay_name: str = "replay.jsonl", prompt: str = "", **changes: object) -> FrogApp:
        replay = write_replay(home / replay_name, turns)
        config = Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules_file(home)).replace(**changes)
        return FrogApp(config, clock=fake_clock(), prompt=prompt)

    return build


async def wait_for(pilot: Pilot, predicate: Callable[[], object], timeout: float = 15.0, what: str = "") -> None:
    """Let the app run until ``predicate()`` is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.05)


async def submit(pilot: Pilot, text: str) -> None:
    """Type a message into the prompt and send it."""
    app = pilot.app
    await wait_for(pilot, lambda: app.model is not None, what="the model to load")
    prompt = app.query_one("#prompt")
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")


def drawn(app: FrogApp, item: object) -> list[Strip]:
    """The lines of a step's item (reasoning or a call's line) as the chat draws them."""
    for log in app.chat.query(StepLog):
        if any(candidate is item for candidate in log.items):
            return log.drawn(item)  # type: ignore[arg-type]
    raise AssertionError(f"{item!r} is not in the chat")


def call_texts(app: FrogApp) -> list[str]:
    """Every call's line in the chat, as drawn (trailing blanks dropped)."""
    return [drawn(app, line)[0].text.rstrip() for line in app.chat.call_lines]


def last_json_line(code: str, folder: Path) -> object:
    """Run ``code`` in a fresh interpreter (XDG folders under ``folder``, its working folder) and
    return the JSON of the last line it printed; it must exit 0."""
    env = {**os.environ, **{name: str(folder / name.lower()) for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=folder, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])
