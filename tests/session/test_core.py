"""The session core on its own, as a third front end would use it: a real git repository, the real
policy, a replay model, an approver and a sink of its own."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogtui.agent import events as ev
from frogtui.approval import Approver
from frogtui.config import Config
from frogtui.models.replay import ReplayModel
from frogtui.protocol import Model
from frogtui.session.core import UNSUPERVISED, SessionCore
from tests.support import turn, write_replay, xml_call

FIX = xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")


class ListSink:
    def __init__(self) -> None:
        self.events: list[ev.AgentEvent] = []

    def emit(self, event: ev.AgentEvent) -> None:
        self.events.append(event)


def replay_config(repo: Path, folder: Path, turns: list[str]) -> Config:
    rules = folder / "rules.toml"
    rules.write_text('[sandbox]\nbash = "none"\n')
    return Config(repo=repo, model_spec=f"replay:{write_replay(folder / 'replay.jsonl', turns)}", approve="all", rules_file=rules)


def started(core: SessionCore) -> ListSink:
    """Prepare, load and start ``core`` the way a front end does; returns the sink."""
    core.prepare()
    core.load_model()
    sink = ListSink()
    core.start(core.gate(), sink)
    return sink


def test_the_model_loads_once_lazily_with_its_progress(py_repo: Path, tmp_path: Path) -> None:
    loads: list[str] = []

    def loader(spec: str, config: Config, report: object = None) -> Model:
        assert callable(report)
        report(f"loading {spec}")
        loads.append(spec)
        return ReplayModel(spec.removeprefix("replay:"))

    config = replay_config(py_repo, tmp_path, [turn("", answer="hi")])
    core = SessionCore(config, model_loader=loader)
    assert core.model is None and loads == []
    lines: list[str] = []
    first = core.load_model(report=lines.append)
    assert core.load_model() is first and loads == [config.model_spec]
    assert lines == [f"loading {config.model_spec}"]


def test_start_needs_prepare_and_a_model(py_repo: Path, tmp_path: Path) -> None:
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("", answer="hi")]))
    with pytest.raises(RuntimeError):
        core.start(Approver.__new__(Approver), ListSink())
    with pytest.raises(RuntimeError):
        core.send("hi")


def test_send_starts_the_task_then_continues_it_and_the_patch_is_the_sessions(py_repo: Path, tmp_path: Path) -> None:
    (py_repo / "mine.txt").write_text("the person's own change\n")
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("fix", FIX), turn("", answer="Fixed."), turn("", answer="Yes.")]))
    sink = started(core)
    assert core.repo_state is not None and core.checkpoints is not None and not core.sandboxed
    first = core.send("fix add")
    second = core.send("are you sure?")
    assert (first.exit_reason, second.exit_reason) == ("agent", "agent")
    assert [type(e) for e in sink.events if isinstance(e, (ev.RunStarted, ev.UserMessageAdded))] == [ev.RunStarted, ev.UserMessageAdded]
    assert [c.tool for c in core.checkpoints.taken] == ["Edit"]
    patch = core.patch()
    assert "+    return a + b" in patch and "mine.txt" not in patch
    assert core.git_state() is not None and core.session.trajectory_path.exists()


def test_undo_is_told_to_the_model_with_the_next_message(py_repo: Path, tmp_path: Path) -> None:
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("fix", FIX), turn("", answer="Fixed."), turn("", answer="Ok.")]))
    started(core)
    core.send("fix add")
    checkpoint = core.next_undo()
    assert checkpoint is not None and checkpoint.tool == "Edit"
    result = core.undo(checkpoint)
    assert "a - b" in (py_repo / "calc.py").read_text()
    assert core.next_undo() is None and core.rewind_note == result.message
    core.send("why?")
    assert core.agent is not None
    assert [m["content"] for m in core.agent.messages if m["role"] == "user"][-1] == f"{result.message}\n\nwhy?"
    assert core.rewind_note == ""


def test_a_resumed_session_continues_its_conversation(py_repo: Path, tmp_path: Path) -> None:
    config = replay_config(py_repo, tmp_path, [turn("", answer="It is in calc.py."), turn("", answer="Done.")])
    first = SessionCore(config)
    started(first)
    first.send("where is the bug?")
    resumed = SessionCore(config, resume=first.session)
    assert resumed.saved is not None
    started(resumed)
    assert resumed.agent is not None and resumed.agent.started
    resumed.send("fix it")
    assert [m["content"] for m in resumed.agent.messages if m["role"] == "user"] == ["where is the bug?", "fix it"]


def test_git_init_turns_on_checkpoints_for_a_running_agent(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    write = xml_call("Write", file_path="made.txt", content="hi\n")
    core = SessionCore(replay_config(plain, tmp_path, [turn("", answer="hello"), turn("", write), turn("", answer="done")]))
    started(core)
    assert core.repo_state is None and core.checkpoints is None and core.review_session() is None
    core.send("hello")
    core.enable_git()
    assert core.review_session() is not None
    result = core.send("make a file")
    assert [c.tool for c in core.checkpoints.taken] == ["Write"]  # type: ignore[union-attr]
    assert "made.txt" in result.trajectory["output_patch"]


def test_a_new_session_forgets_the_conversation_and_keeps_the_model(py_repo: Path, tmp_path: Path) -> None:
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("", answer="one"), turn("", answer="two")]))
    started(core)
    core.send("first")
    model, old = core.model, core.session
    core = core.next_session()
    assert core.agent is None and not core.notes and core.session != old and core.model is model
    started(core)
    core.send("second")
    assert core.agent is not None and [m["content"] for m in core.agent.messages if m["role"] == "user"] == ["second"]
    assert old.load_trajectory() is not None, "the old session's conversation is left as it was"


def test_a_handoff_is_a_new_run_of_the_session_and_resume_continues_the_last(py_repo: Path, tmp_path: Path) -> None:
    turns = [turn("fix", FIX), turn("", answer="Fixed."), turn("", answer="Checked."), turn("", answer="Still fine.")]
    config = replay_config(py_repo, tmp_path, turns)
    core = SessionCore(config, handoff=True)
    sink = started(core)
    core.send("fix add")
    draft = core.draft_handoff("requested")
    assert "## Task\nfix add\n" in draft and "- calc.py (+1 -1)" in draft and "the person asked for a fresh conversation" in draft
    result = core.hand_off(draft + "\nCheck it.")
    assert result.exit_reason == "agent" and result.trajectory["run"] == 2
    assert [type(e) for e in sink.events].count(ev.HandedOff) == 1
    # the draft of the second conversation keeps the original task, not the hand-off
    assert "## Task\nfix add\n" in core.draft_handoff("requested")
    assert "+    return a + b" in result.trajectory["output_patch"]
    resumed = SessionCore(config, resume=core.session)
    assert [c.run for c in resumed.chain] == [1, 2] and resumed.saved == resumed.chain[-1]
    started(resumed)
    assert resumed.agent is not None and resumed.agent.messages[1]["content"] == draft + "\nCheck it."
    resumed.model.position = 3  # the replay goes on where the first core stopped
    assert resumed.send("still fine?").final_message == "Still fine."
    recorded = [json.loads(line)["content"] for line in core.session.replay_path.read_text().splitlines()]
    assert recorded == turns


def test_a_resumed_session_can_undo_what_it_did_before_the_restart(py_repo: Path, tmp_path: Path) -> None:
    """The checkpoints a session took are found again from its verified record when it is resumed
    (undo said "nothing to undo" after a restart)."""
    touch = xml_call("Bash", command="echo note > notes.txt")
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("fix", FIX), turn("note", touch), turn("", answer="Fixed.")]))
    started(core)
    core.send("fix add")
    assert [(c.step, c.tool) for c in core.checkpoints.taken] == [(1, "Edit"), (2, "Bash")]
    core.close()
    resumed = SessionCore(replay_config(py_repo, tmp_path, [turn("", answer="ok")]), resume=core.session)
    resumed.prepare()
    assert resumed.checkpoints is not None
    assert [(c.step, c.action, c.tool) for c in resumed.checkpoints.taken] == [(1, 1, "Edit"), (2, 1, "Bash")]
    checkpoint = resumed.next_undo()
    assert checkpoint is not None and (checkpoint.step, checkpoint.tool) == (2, "Bash")
    resumed.undo(checkpoint)
    assert not (py_repo / "notes.txt").exists()
    checkpoint = resumed.next_undo()
    assert checkpoint is not None and checkpoint.step == 1
    resumed.undo(checkpoint)
    assert "a - b" in (py_repo / "calc.py").read_text()
    assert resumed.next_undo() is None


def test_the_review_commits_with_the_name_of_the_model_that_ran(py_repo: Path, tmp_path: Path) -> None:
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("", answer="hello")]))
    core.prepare()
    before = core.review_session()
    assert before is not None and before.trailer == f"Assisted-by: {core.config.model_spec} via frogtui"  # none loaded yet
    core.load_model()
    review = core.review_session()
    assert review is not None and review.trailer == "Assisted-by: replay:replay.jsonl via frogtui"


def test_a_session_nobody_watches_is_told_every_start_up_note_and_the_log_keeps_them(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "AGENTS.md").write_text("Be brief.\n")
    core = SessionCore(replay_config(plain, tmp_path, [turn("", xml_call("Read", file_path="AGENTS.md")), turn("", answer="ok")]))
    core.load_model()
    said: list[str] = []
    core.start_unattended(ListSink(), said.append)
    assert not core.has_git and core.next_step(4) == 5
    topics = [note.topic for note in core.notes]
    assert topics[-2:] == ["python", "instructions"] and set(topics[:-2]) == {"warning"}
    not_git = next(note.text for note in core.notes if "is not in a git repository" in note.text)
    assert said[0] == core.python_line and said[-1].startswith("AGENTS.md")  # python first, the instructions last
    assert said[1] == f"warning: {UNSUPERVISED}" and f"warning: {not_git}" in said  # approve = "all"
    core.send("read it")
    log = [line.split(" ", 1)[1] for line in core.session.log_path.read_text().splitlines()]
    assert f"warning: {not_git}" in log and f"warning: {UNSUPERVISED}" in log
    assert any(line.startswith("approval step=1 tool=Read decision=allow by=") for line in log)
    assert log[-2:] == ["exit_reason=agent steps=2", f"frogtui: {core.run_summary}"]
    assert core.run_summary == "agent · 2 steps · 1 call: 1 allowed, 0 denied · 0 files changed · tokens 165 evaluated, 28 generated"
    assert json.loads(core.trajectory_file().read_text())["exit_reason"] == "agent"


def test_cores_that_share_session_rules_see_each_others_always_allow(py_repo: Path, tmp_path: Path) -> None:
    from frogtui.protocol import ToolCall

    config = replay_config(py_repo, tmp_path, [turn("", answer="hi")])
    first, second = SessionCore(config), SessionCore(config)
    shared: list = []
    for core in (first, second):
        core.prepare()
        core.share_session_rules(shared)
    call = ToolCall("c1", "Bash", {"command": "make test"})
    assert second.policy.evaluate(call).kind == "ask"
    assert first.policy.allow_for_session(call) == "Bash: make test"
    assert second.policy.evaluate(call).kind == "allow", "one answer holds for every attempt"


def test_no_front_end_assigns_into_the_cores_parts() -> None:
    import re

    import frogtui

    package = Path(frogtui.__file__).parent
    assigning = re.compile(r"\bcore\.(?:policy|engine|agent|checkpoints|sandbox|workspace|session)\.\w+\s*(?:\+|-)?=(?!=)")
    found = [f"{path.relative_to(package)}: {line.strip()}" for path in package.rglob("*.py") if path.parent.name != "session"
             for line in path.read_text(encoding="utf-8").splitlines() if assigning.search(line)]
    assert found == [], "give the core a method"
