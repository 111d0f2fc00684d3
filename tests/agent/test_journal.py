"""The trajectory saved step by step: what each save appends does not grow with the session, and
the journal gives back exactly the Leaf trajectory, the replay file and what ``--resume`` needs."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frogtui.agent.journal import rebuild
from frogtui.agent.loop import Agent
from frogtui.agent.trajectory import Trajectory, replay_lines
from frogtui.config import Limits
from frogtui.models.replay import ReplayModel
from frogtui.session import Session
from frogtui.tools import ToolRunner, Workspace
from tests.agent.test_loop import Recorder, ScriptedPerson
from tests.support import turn, write_replay, xml_call


def session_in(tmp_path: Path, repo: Path) -> Session:
    folder = tmp_path / "session"
    folder.mkdir(exist_ok=True)
    return Session(id="s1", folder=folder, repo=repo)


def agent_for(tmp_path: Path, repo: Path, turns: list[str], on_step_end: Any, name: str = "replay.jsonl", max_steps: int = 100) -> Agent:
    model = ReplayModel(write_replay(tmp_path / name, turns))
    runner = ToolRunner(Workspace(repo, tmp_dir=tmp_path / "t"))
    return Agent(model, runner, ScriptedPerson(), Recorder(), limits=Limits(max_steps=max_steps), on_step_end=on_step_end)


def reads(n: int) -> list[str]:
    """``n`` Read steps, alternating between two files (no call repeats the one before it)."""
    return [turn(f"Step {i}.", xml_call("Read", file_path=("calc.py", "test_calc.py")[i % 2])) for i in range(n)]


def test_each_save_appends_the_same_amount_at_step_200_as_at_step_2(py_repo: Path, tmp_path: Path) -> None:
    session = session_in(tmp_path, py_repo)
    grown: list[int] = []

    def save(trajectory: Trajectory) -> None:
        before = session.journal_path.stat().st_size if session.journal_path.exists() else 0
        session.save_trajectory(trajectory)
        grown.append(session.journal_path.stat().st_size - before)

    agent = agent_for(tmp_path, py_repo, [*reads(200), turn("Done.", answer="ok")], save, max_steps=300)
    result = agent.run("read it 200 times")
    assert result.exit_reason == "agent" and len(grown) == 202
    assert max(grown[1:200]) <= max(grown[1:3]) + 64  # step 200's save appends what steps 2-3 did (digits aside)
    assert rebuild(session.journal_path) == result.trajectory
    assert json.loads(session.trajectory_path.read_text()) == result.trajectory
    assert session.replay_path.read_text() == replay_lines(result.trajectory)


def test_mid_run_the_journal_holds_every_step_saved_and_resume_continues_from_it(py_repo: Path, tmp_path: Path) -> None:
    session = session_in(tmp_path, py_repo)
    agent = agent_for(tmp_path, py_repo, reads(3), session.save_trajectory, max_steps=3)
    first = agent.run("look")  # ends with max_turns
    assert first.exit_reason == "max_turns"
    # a crash during step 4's save: half a line at the end
    with session.journal_path.open("a") as handle:
        handle.write('{"message":{"role":"assist')
    saved = Session(id=session.id, folder=session.folder, repo=py_repo).load_trajectory()
    assert saved is not None and saved.data == first.trajectory
    resumed_session = Session(id=session.id, folder=session.folder, repo=py_repo)
    resumed = agent_for(tmp_path, py_repo, [turn("Done.", answer="It adds.")], resumed_session.save_trajectory, name="follow.jsonl")
    resumed.restore(saved)
    second = resumed.send("and?")
    assert second.exit_reason == "agent"
    again = resumed_session.load_trajectory()
    assert again is not None and again.data == second.trajectory == json.loads(session.trajectory_path.read_text())
    assert again.user_messages() == ["look", "and?"]
    assert len(again.steps) == 4 and again.data["trajectory_format"] == "leaf-function-calling"
    assert session.replay_path.read_text() == replay_lines(again.data)
    assert len(session.replay_path.read_text().splitlines()) == 4


def test_a_step_record_that_changes_after_it_was_saved_is_saved_again(tmp_path: Path) -> None:
    session = session_in(tmp_path, tmp_path)
    trajectory = Trajectory(model="m", tools=[{"name": "Read"}], messages=[{"role": "system", "content": "s"}])
    record: Any = trajectory.step(1)
    record.raw_output = "first"
    session.save_trajectory(trajectory)
    record.usage = {"prompt_tokens": 3}
    trajectory.messages.append({"role": "user", "content": "u"})
    trajectory.partial = False
    session.save_trajectory(trajectory)
    assert rebuild(session.journal_path) == trajectory.as_dict()
    assert session.load_trajectory().data == trajectory.as_dict()


def test_a_saved_dict_replaces_the_journal(tmp_path: Path) -> None:
    session = session_in(tmp_path, tmp_path)
    trajectory = Trajectory(model="m", tools=[], messages=[{"role": "system", "content": "s"}])
    session.save_trajectory(trajectory)
    data = {**trajectory.as_dict(), "final_message": "edited"}
    session.save_trajectory(data)
    assert session.load_trajectory().data == data


def test_after_a_hand_off_each_run_has_its_journal_and_the_chain_reads_the_one_still_running(tmp_path: Path) -> None:
    session = session_in(tmp_path, tmp_path)
    first = Trajectory(model="m", tools=[], messages=[{"role": "system", "content": "s"}], next_trajectory="trajectory-2.json")
    first.step(1).raw_output = "one"
    first.partial = False
    session.save_trajectory(first)
    second = Trajectory(model="m", tools=[], messages=[{"role": "system", "content": "s"}], run=2, previous_trajectory="trajectory.json")
    second.step(1).raw_output = "two"
    session.save_trajectory(second, replay_before=replay_lines(first.as_dict()))  # mid-run: only its journal
    assert not session.run_path(2).exists() and session.run_journal_path(2).exists()
    chain = Session(id=session.id, folder=session.folder, repo=tmp_path).load_chain()
    assert [c.data for c in chain] == [first.as_dict(), second.as_dict()]
    assert session.replay_path.read_text() == replay_lines(first.as_dict()) + replay_lines(second.as_dict())
