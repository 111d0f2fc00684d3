"""One session log: the same task, replayed in the same folder (not a git repository) through
``frogtui run``, the app (Pilot) and ``frogtui acp`` (a subprocess), leaves the same lines in each
session's ``session.log`` (the time stamps and the calls' durations aside): the start-up notes
(the "not a git repository" warning included, which ``frogtui run`` prints too), each decision,
each call, the run's end and its summary."""
from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

from acp.helpers import text_block

from frogtui.config import Config
from frogtui.models import load_model
from frogtui.session import Session
from frogtui.ui.app import FrogApp
from tests.acp.support import ScriptedClient, acp_agent, user_rules
from tests.support import turn, write_replay, xml_call
from tests.ui.conftest import SIZE, fake_clock, submit, wait_for

TURNS = [
    turn("Look at calc.py.", xml_call("Read", file_path="calc.py")),
    turn("Look for tests.", xml_call("Glob", pattern="*.py")),
    turn("Done.", answer="add subtracts."),
]


def lines(folder: Path) -> list[str]:
    """The newest session's log for ``folder``, without time stamps and durations."""
    session = Session.latest(folder)
    assert session is not None
    text = session.log_path.read_text(encoding="utf-8")
    return [re.sub(r"\(\d+\.\d\ds", "(Ns", line.split(" ", 1)[1]) for line in text.splitlines()]


async def test_every_front_end_writes_the_same_session_log(tmp_path: Path) -> None:
    from frogtui.headless import run_task

    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    user_rules('[sandbox]\nbash = "none"\n')  # the same rules for all three: the user's file
    replay = write_replay(tmp_path / "replay.jsonl", TURNS)
    config = Config(repo=folder, model_spec=f"replay:{replay}", theme="frog-dark")

    stderr = io.StringIO()
    assert run_task("what does add do?", config, load_model(config.model_spec, config), stderr=stderr, stdout=io.StringIO()) == 0
    headless = lines(folder)
    assert f"frogtui: warning: {folder} is not in a git repository" in stderr.getvalue()

    app = FrogApp(config, clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "what does add do?")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run to end")
    in_app = lines(folder)

    client = ScriptedClient()
    async with acp_agent(client, "--model", f"replay:{replay}", cwd=folder, stderr=tmp_path / "stderr") as conn:
        new = await conn.new_session(cwd=str(folder))
        await asyncio.wait_for(conn.prompt(session_id=new.session_id, prompt=[text_block("what does add do?")]), 60)
    in_editor = lines(folder)

    assert headless == in_app == in_editor
    assert any(line.startswith(f"warning: {folder} is not in a git repository") for line in headless)
    assert [line.split(" ", 3)[:3] for line in headless if line.startswith("approval ")] == [
        ["approval", "step=1", "tool=Read"], ["approval", "step=2", "tool=Glob"]]
    assert "[1] Read calc.py (Ns) -> calc.py" in headless and "[2] Glob *.py (Ns) -> calc.py" in headless
    assert headless[-2:] == ["exit_reason=agent steps=3",
                             "frogtui: agent · 3 steps · 2 calls: 2 allowed, 0 denied · 0 files changed"
                             " · tokens 205 evaluated, 64 generated"]
