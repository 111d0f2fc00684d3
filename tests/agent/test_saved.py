"""The one reader of saved conversations (``agent.saved``): a real run's trajectory read back into
typed objects, how each call ended decided once (as recorded, else read from the text of a session
saved before outcomes were), hand-edited files read without failing, and no other module walking
a saved session's dicts."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from frogtui.agent.saved import Conversation
from frogtui.agent.trajectory import KEY_ORDER, StepRecord, Trajectory
from tests.agent.test_loop import make_agent
from tests.support import turn, xml_call

ROOT = Path(__file__).resolve().parents[2] / "frogtui"

READER = {"agent/saved.py"}
"""The reader."""
EXEMPT = {
    "agent/trajectory.py": "the writer of the format (and replay_lines over what it wrote)",
    "agent/journal.py": "the writer's journal, rebuilt into the writer's dict",
    "models/": "the live transcript turned into the model's prompt and the wire to the model's process, never a saved session",
}

ELSEWHERE = {("eval/batch.py", "steps"): "an eval result's own record (results.jsonl) counts steps too"}
"""A key read in a module from a record that is not a saved conversation."""

SAVED_KEYS = sorted(
    ({*KEY_ORDER, *(f.name for f in dataclasses.fields(StepRecord)), *(f.name for f in dataclasses.fields(Trajectory))}
     | {"observation", "outcome", "tool_calls", "tool_call_id", "reasoning_content"})
    - {"tools", "model", "error", "step", "assistant", "usage", "exit_code"}  # words other records use too
)
"""The keys only a saved conversation has (the trajectory's, a step's, an observation's, a message's)."""

KEYS = "|".join(SAVED_KEYS)
READ = re.compile(rf"""(?:\.get\(\s*|(?<=[\w)\]])\[\s*)["'](?P<key>{KEYS})["']\s*(?:\](?!\s*=[^=])|[,)])""")


def test_no_module_but_the_reader_reads_a_saved_sessions_keys() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in READER or any(name == e or (e.endswith("/") and name.startswith(e)) for e in EXEMPT):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in READ.finditer(line):
                if (name, match.group("key")) in ELSEWHERE:
                    continue
                found.append(f"{name}:{number}: {match.group('key')}: {line.strip()}")
    assert found == [], "read a saved conversation through frogtui.agent.saved:\n" + "\n".join(found)


def test_the_pattern_finds_the_reads_it_is_for() -> None:
    reads = ['saved.get("steps") or []', 'step["observations"]', "m.get('tool_calls')", 'x.get("next_trajectory", None)']
    assert all(READ.search(text) for text in reads)
    assert not any(READ.search(t) for t in ['message["tool_calls"] = []', 'a == ["run"]', 'changes["a"], changes["session_tokens"] = 1, 2'])
    assert {"steps", "observations", "outcome", "next_trajectory", "raw_output", "partial"} <= set(SAVED_KEYS)


def test_every_field_of_a_step_is_read_back(py_repo: Path, tmp_path: Path) -> None:
    agent, _ = make_agent(py_repo, tmp_path, [turn("Run.", xml_call("Bash", command="python -m pytest -q")), turn("", answer="done")])
    result = agent.run("run the tests")
    read = Conversation.read(result.trajectory)
    assert list(read.steps) == agent.trajectory.steps
    assert read.transcript == agent.messages and read.data == result.trajectory
    assert (read.exit_reason, read.final_message, read.run, read.previous, read.next) == ("agent", "done", 1, None, None)
    assert not read.partial
    assert read.context_tokens == agent.context_tokens > 0 and read.session_tokens == agent.session_tokens
    assert read.task == "run the tests" and read.last_answer() == "done" and read.last_step == 2
    (call,) = read.calls
    assert (call.tool, call.arguments, call.turn) == ("Bash", {"command": "python -m pytest -q"}, 1)
    assert (call.ended.kind, call.ended.exit_code) == ("exit", 1)
    assert call.observation is not None and call.observation.startswith("Exit code: 1")
    evaluated, generated = read.tokens()
    assert evaluated == sum(s.usage["evaluated_tokens"] for s in agent.trajectory.steps) and generated > 0
    assert read.changing_tools({"Bash", "Write", "Edit"}) == {1: ["Bash"], 2: []}


def test_how_a_call_ended_is_as_recorded_and_only_an_old_session_is_read_from_its_text(py_repo: Path, tmp_path: Path) -> None:
    # a Glob whose first match is named like a denial: its text alone reads as one
    (py_repo / "PermissionError: notes.java").write_text("class Notes {}\n")
    agent, _ = make_agent(py_repo, tmp_path, [turn("Find.", xml_call("Glob", pattern="*.java")), turn("Done.", answer="found it")])
    data = agent.run("find the handler").trajectory
    assert [c.ended.kind for c in Conversation.read(data).calls] == ["ok"]
    old = {**data, "steps": [{**s, "observations": [{"tool": o["tool"], "observation": o["observation"]} for o in s["observations"]]}
                             for s in data["steps"]]}
    assert [c.ended.kind for c in Conversation.read(old).calls] == ["denied"], "saved before outcomes were: its text"
    misfit = {**data, "steps": [{"step": 1, "observations": [{"tool": "Read", "outcome": "ok"}]}]}
    assert [c.ended.kind for c in Conversation.read(misfit).calls] == ["denied"], "records that do not line up: its text"


def test_a_hand_edited_conversation_is_read_as_far_as_it_makes_sense() -> None:
    data = {
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": None},
            {"role": "assistant", "content": 3, "reasoning_content": ["x"],
             "tool_calls": [{"id": "a", "function": {"name": "Bash", "arguments": "{not json"}}, "junk", {"id": 7, "function": "x"},
                            {"function": {"arguments": "[1]"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "Exit code: 0\nSTDOUT:\n"},
            {"role": "martian", "content": "?"},
        ],
        "steps": [{"step": "1"}, {"step": 2, "observations": "no", "usage": {"evaluated_tokens": "9"}, "raw_output": 5}, "x"],
        "run": -3, "next_trajectory": 4, "context_tokens": "many", "elapsed_sec": True, "partial": "yes",
    }
    read = Conversation.read(data)
    assert [m.role for m in read.messages] == ["system", "user", "assistant", "tool"]
    assert [(c.id, c.tool, c.arguments, c.ended.kind) for c in read.calls] == [("a", "Bash", {}, "ok"), ("", "?", {}, "ok")]
    assert read.steps == (StepRecord(step=2, usage={"evaluated_tokens": "9"}),) and read.tokens() == (0, 0)
    assert (read.run, read.next, read.context_tokens, read.elapsed_sec, read.partial) == (1, None, 0, 0.0, False)
    for bad in ({}, {"messages": "x"}, {"messages": [{"content": "no role"}]}, [], "text"):
        with pytest.raises(ValueError):
            Conversation.read(bad)


def test_a_proposals_hunk_choice_round_trips_and_an_old_or_odd_record_reads_without_one() -> None:
    from frogtui.protocol import Approval, FileHunks, ToolCall

    chosen = (FileHunks("src/a.py", accepted=((1, 2, 1, 2), (4, 4, 4, 6)), rejected=((9, 11, 11, 11),)),
              FileHunks("new.txt", accepted=(), rejected=((0, 0, 0, 3),)))
    trajectory = Trajectory(model="m", tools=[])
    call = ToolCall("c1", "Bash", {"command": "sed -i s/a/b/ src/a.py"})
    trajectory.record_approval(1, call, Approval("allow", "ran as a proposal; allowed once", by="person", accepted=("src/a.py",),
                                                 hunks=chosen))
    trajectory.record_approval(1, call, Approval("deny", "no"))
    data = json.loads(json.dumps({**trajectory.as_dict(), "messages": []}))  # as saved on disk
    (taken, denied) = Conversation.read(data).approvals()
    assert taken.hunks == chosen and (taken.decision, taken.by) == ("allow", "person")
    assert denied.hunks == () and "hunks" not in data["steps"][0]["approvals"][1], "nothing recorded when nothing was taken in part"
    odd = [{"path": "a", "accepted": [[1, 2, 3]], "rejected": []}, {"path": 3, "accepted": [], "rejected": []}, "x",
           {"path": "b", "accepted": [[-1, 0, 0, 0]], "rejected": []},
           {"path": "c", "accepted": [[0, 1, 0, 1]], "rejected": [[2, 3, 2, True]]},
           {"path": "ok", "accepted": [[0, 1, 0, 1]], "rejected": []}]
    data["steps"][0]["approvals"][0]["hunks"] = odd
    assert Conversation.read(data).approvals()[0].hunks == (FileHunks("ok", ((0, 1, 0, 1),), ()),), "what has another shape is left out"
    del data["steps"][0]["approvals"][0]["hunks"]  # a session saved before hunks were recorded
    assert Conversation.read(data).approvals()[0].hunks == ()
