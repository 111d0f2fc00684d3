"""The agent loop with the replay model, real tools and a real git repository."""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from frogtui.agent import events as ev
from frogtui.agent.loop import Agent
from frogtui.config import Limits
from frogtui.errors import ModelError
from frogtui.models.replay import ReplayModel
from frogtui.protocol import Approval, ApprovalRequest, TurnEnd, Usage
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS, ToolRunner, Workspace
from tests.support import turn, write_replay, xml_call


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)

    def of(self, cls: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]


class ScriptedPerson:
    """Answers approval requests like a person would, from a script (the edge of the system)."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else Approval("allow", by="person")


def make_agent(repo: Path, tmp_path: Path, turns: list[str], approver: Any = None, **kwargs: Any) -> tuple[Agent, Recorder]:
    model = ReplayModel(write_replay(tmp_path / "replay.jsonl", turns))
    sink = Recorder()
    agent = Agent(model, ToolRunner(Workspace(repo, tmp_dir=tmp_path / "t")), approver or ScriptedPerson(), sink, **kwargs)
    return agent, sink


FIX_TURNS = [
    turn("Look first.", xml_call("Read", file_path="calc.py")),
    turn("Minus should be plus.", xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")),
    turn("Validate.", xml_call("Bash", command="python -m pytest -q")),
    turn("Done.", answer="Fixed add(): it now returns a + b."),
]


@pytest.mark.slow
def test_full_run_fixes_the_bug(py_repo: Path, tmp_path: Path) -> None:
    agent, sink = make_agent(py_repo, tmp_path, FIX_TURNS)
    result = agent.run("Fix the failing test.")
    assert result.exit_reason == "agent"
    assert result.final_message == "Fixed add(): it now returns a + b."
    assert (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    finished = sink.of(ev.ToolFinished)
    assert [f.call.name for f in finished] == ["Read", "Edit", "Bash"]
    assert finished[0].observation == "calc.py\n1. def add(a, b):\n2.     return a - b"
    assert finished[1].observation == "Edited calc.py (1 replacement)."
    assert finished[2].exit_code == 0 and finished[2].observation.startswith("Exit code: 0\nSTDOUT:\n")
    msgs = result.trajectory["messages"]
    assert msgs[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert msgs[1] == {"role": "user", "content": "Fix the failing test."}
    assert msgs[2]["role"] == "assistant" and msgs[2]["reasoning_content"] == "Look first."
    assert json.loads(msgs[2]["tool_calls"][0]["function"]["arguments"]) == {"file_path": "calc.py"}
    assert msgs[3] == {"role": "tool", "tool_call_id": "call_1_1", "content": finished[0].observation}
    assert result.trajectory["tools"] == TOOL_SCHEMAS
    assert result.trajectory["n_steps"] == 4
    assert [s["observations"][0]["tool"] for s in result.trajectory["steps"][:3]] == ["Read", "Edit", "Bash"]


def test_events_come_in_order(py_repo: Path, tmp_path: Path) -> None:
    agent, sink = make_agent(py_repo, tmp_path, FIX_TURNS[:1])
    agent.run("look")
    kinds = [type(e).__name__ for e in sink.events]
    assert kinds[:2] == ["RunStarted", "StepStarted"]
    i = kinds.index("ToolCallProposed")
    assert kinds.index("ReasoningDelta") < i < kinds.index("ApprovalAnswered") < kinds.index("ToolStarted") < kinds.index("ToolFinished")
    assert kinds[-1] == "RunEnded"
    assert "".join(e.text for e in sink.of(ev.ReasoningDelta)).rstrip() == "Look first."


def test_bash_output_is_passed_on_before_the_call_finishes(py_repo: Path, tmp_path: Path) -> None:
    agent, sink = make_agent(py_repo, tmp_path, [turn("Run.", xml_call("Bash", command="echo first; sleep 0.3; echo second"))])
    threads: list[threading.Thread] = []
    record = sink.emit
    sink.emit = lambda event: (threads.append(threading.current_thread()), record(event))  # type: ignore[method-assign]
    agent.run("go")
    kinds = [type(e).__name__ for e in sink.events if isinstance(e, (ev.ToolStarted, ev.ToolOutput, ev.ToolFinished))]
    assert kinds[0] == "ToolStarted" and kinds[-1] == "ToolFinished" and "ToolOutput" in kinds
    streamed = "".join(e.text for e in sink.of(ev.ToolOutput))
    assert "first\nsecond\n" in streamed and "second" in sink.of(ev.ToolFinished)[0].observation
    assert set(threads) == {threading.current_thread()}  # events come on the loop's thread, as the sink expects


def test_denial_reason_becomes_the_observation(py_repo: Path, tmp_path: Path) -> None:
    person = ScriptedPerson(Approval("deny", reason="use pytest -x instead", by="person"))
    agent, sink = make_agent(py_repo, tmp_path, [turn("", xml_call("Bash", command="rm -rf build"))], person)
    result = agent.run("clean")
    obs = result.trajectory["steps"][0]["observations"][0]["observation"]
    assert obs == "The user denied this tool call. Reason: use pytest -x instead"
    assert result.trajectory["steps"][0]["approvals"] == [
        {"tool": "Bash", "decision": "deny", "reason": "use pytest -x instead", "by": "person", "rule": ""}
    ]
    assert not sink.of(ev.ToolStarted)


def test_denied_write_changes_nothing(py_repo: Path, tmp_path: Path) -> None:
    before = (py_repo / "calc.py").read_bytes()
    person = ScriptedPerson(Approval("deny", by="rule", rule="Write: ask", reason="needs a person"))
    agent, _ = make_agent(py_repo, tmp_path, [turn("", xml_call("Write", file_path="calc.py", content="boom"))], person)
    result = agent.run("x")
    assert (py_repo / "calc.py").read_bytes() == before
    assert result.trajectory["steps"][0]["observations"][0]["observation"] == "PermissionError: needs a person"
    assert person.requests[0].preview.before == before.decode()
    assert person.requests[0].preview.after == "boom"


def test_edited_command_runs_and_model_is_told(py_repo: Path, tmp_path: Path) -> None:
    person = ScriptedPerson(Approval("allow", by="person", arguments={"command": "echo edited"}))
    agent, sink = make_agent(py_repo, tmp_path, [turn("", xml_call("Bash", command="echo original"))], person)
    agent.run("x")
    obs = sink.of(ev.ToolFinished)[0].observation
    assert obs.startswith(
        'Note: the user edited this call before it ran; it ran with {"command": "echo edited"}\nExit code: 0\nSTDOUT:\nedited\n'
    )


def test_invalid_calls_are_observations_and_loop_goes_on(py_repo: Path, tmp_path: Path) -> None:
    turns = [
        turn("", xml_call("Frobnicate", x=1), xml_call("Read", file_path="calc.py", offset="x"), "<tool_call>\nnonsense\n</tool_call>"),
        turn("", answer="ok"),
    ]
    person = ScriptedPerson()
    agent, _ = make_agent(py_repo, tmp_path, turns, person)
    result = agent.run("x")
    obs = [o["observation"] for o in result.trajectory["steps"][0]["observations"]]
    assert obs == [
        "Unknown tool: Frobnicate",
        "ValueError: parameter 'offset' of Read expects an integer, got 'x'",
        "ValueError: could not parse the tool call: expected <function=NAME> or a JSON object",
    ]
    assert person.requests == [], "invalid calls must not be offered for approval"
    assert result.exit_reason == "agent" and result.final_message == "ok"


def test_max_steps(py_repo: Path, tmp_path: Path) -> None:
    turns = [turn("", xml_call("Glob", pattern="*.py"))] * 5
    agent, _ = make_agent(py_repo, tmp_path, turns, limits=Limits(max_steps=3))
    result = agent.run("loop forever")
    assert result.exit_reason == "max_turns" and result.trajectory["n_steps"] == 3


def test_turn_cut_by_length_limit(py_repo: Path, tmp_path: Path) -> None:
    agent, _ = make_agent(py_repo, tmp_path, ["word " * 50], limits=Limits(max_tokens_per_turn=10))
    assert agent.run("x").exit_reason == "max_tokens_per_turn"


def test_replay_runs_out_ends_with_agent(py_repo: Path, tmp_path: Path) -> None:
    agent, _ = make_agent(py_repo, tmp_path, [turn("", xml_call("Glob", pattern="*.py"))])
    assert agent.run("x").exit_reason == "agent"


class ScriptedModel:
    """A model edge double that reports fixed usage or fails, for the limits the replay can't reach."""

    name = "scripted"
    context_size = None
    opens_reasoning = True

    def __init__(self, prompt_tokens: int = 10, fail: bool = False, context_size: int | None = None) -> None:
        self.prompt_tokens, self.fail, self.context_size = prompt_tokens, fail, context_size

    def stream_turn(self, messages, tools, *, max_tokens, cancel):  # type: ignore[no-untyped-def]
        if self.fail:
            raise ModelError("server said 500")
        yield turn("", xml_call("Glob", pattern="*"))
        yield TurnEnd("stop", Usage(prompt_tokens=self.prompt_tokens, generated_tokens=20))

    def close(self) -> None:
        pass


def test_context_budget_and_model_errors(py_repo: Path, tmp_path: Path) -> None:
    agent = Agent(
        ScriptedModel(prompt_tokens=990),
        ToolRunner(Workspace(py_repo)),
        ScriptedPerson(),
        Recorder(),
        limits=Limits(max_context_tokens=1000),
    )
    result = agent.run("x")
    assert result.exit_reason == "max_context_len" and result.trajectory["n_steps"] == 1
    agent = Agent(ScriptedModel(fail=True), ToolRunner(Workspace(py_repo)), ScriptedPerson(), Recorder())
    result = agent.run("x")
    assert (result.exit_reason, result.error) == ("llm_query_error", "server said 500")


def test_interrupt_during_long_command(py_repo: Path, tmp_path: Path) -> None:
    agent, sink = make_agent(py_repo, tmp_path, [turn("", xml_call("Bash", command="sleep 30")), turn("", answer="never")])
    threading.Timer(0.5, agent.interrupt).start()
    result = agent.run("x")
    assert result.exit_reason == "cancelled"
    assert sink.of(ev.ToolFinished)[0].observation.startswith("Interrupted by the user")
    # the conversation goes on: the model sees the interruption in the transcript
    assert agent.messages[-1]["role"] == "tool" and "Interrupted" in agent.messages[-1]["content"]
    follow = agent.send("carry on")
    assert follow.exit_reason == "agent" and follow.final_message == "never"


def test_file_changed_after_preview_is_asked_again(py_repo: Path, tmp_path: Path) -> None:
    class ChangesFileFirstTime(ScriptedPerson):
        def approve(self, request: ApprovalRequest) -> Approval:
            if not self.requests:
                (py_repo / "calc.py").write_text("def add(a, b):\n    return a - b  # touched\n")
            return super().approve(request)

    person = ChangesFileFirstTime()
    call = xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")
    agent, _ = make_agent(py_repo, tmp_path, [turn("", call)], person)
    agent.run("x")
    assert len(person.requests) == 2
    assert person.requests[1].preview.before.endswith("# touched\n")
    assert (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b  # touched\n"


@pytest.mark.slow
def test_before_action_hook_runs_for_mutating_tools_only(py_repo: Path, tmp_path: Path) -> None:
    seen: list[tuple[int, str]] = []
    agent, _ = make_agent(py_repo, tmp_path, FIX_TURNS, before_action=lambda step, call: seen.append((step, call.name)))
    agent.run("x")
    assert seen == [(2, "Edit"), (3, "Bash")]


@pytest.mark.parametrize("sandboxed", [True, False], ids=["read-only sandbox", "no sandbox"])
def test_no_checkpoint_before_a_bash_command_proven_read_only_unless_the_person_edited_it(
    py_repo: Path, tmp_path: Path, sandboxed: bool
) -> None:
    """Only where the read-only sandbox backs the proof: without one, a checkpoint as for any command."""
    if sandboxed and not _bwrap_works():
        pytest.skip("bubblewrap is not usable here")
    seen: list[str] = []
    person = ScriptedPerson(
        Approval("allow", by="rule", read_only=True),
        Approval("allow", by="rule"),
        Approval("allow", by="person", arguments={"command": "ls -la"}, read_only=True),
    )
    turns = [turn("", xml_call("Bash", command=command)) for command in ("ls", "touch x", "ls")] + [turn("Done.", answer="ok")]
    agent, _ = make_agent(py_repo, tmp_path, turns, person, before_action=lambda step, call: seen.append(call.arguments["command"]))
    if sandboxed:
        from frogtui.approval import SandboxSettings, make_sandbox

        agent.runner.workspace.tmp_dir.mkdir(parents=True, exist_ok=True)
        agent.runner = ToolRunner(agent.runner.workspace, wrap=make_sandbox(agent.runner.workspace, SandboxSettings()).wrap)
    agent.run("x")
    assert seen == (["touch x", "ls -la"] if sandboxed else ["ls", "touch x", "ls -la"])
    assert (py_repo / "x").exists()


def _bwrap_works() -> bool:
    import shutil

    from frogtui.approval.sandbox import probe_bwrap

    return shutil.which("bwrap") is not None and probe_bwrap(shutil.which("bwrap") or "") is None


def test_a_model_context_smaller_than_the_budget_is_the_budget(py_repo: Path) -> None:
    agent = Agent(ScriptedModel(prompt_tokens=490, context_size=500), ToolRunner(Workspace(py_repo)), ScriptedPerson(), Recorder())
    assert agent.context_budget == 500
    result = agent.run("x")
    assert (result.exit_reason, result.trajectory["n_steps"]) == ("max_context_len", 1)
    assert result.error == "context budget of 500 tokens used up"


class StructuredServer:
    """A server-like model edge double: no reasoning prompt, structured tool calls."""

    name = "server"
    context_size = None
    opens_reasoning = False

    def __init__(self) -> None:
        self.turns = 0

    def stream_turn(self, messages, tools, *, max_tokens, cancel):  # type: ignore[no-untyped-def]
        from frogtui.protocol import ToolCall

        self.turns += 1
        if self.turns == 1:
            yield "<think>plan</think>Looking."
            yield ToolCall("srv-1", "Read", {"file_path": "calc.py", "offset": "1"})
        else:
            yield "All good."
        yield TurnEnd("stop", Usage(prompt_tokens=5, generated_tokens=5))

    def close(self) -> None:
        pass


def test_raw_output_of_any_model_replays_to_the_same_messages(py_repo: Path, tmp_path: Path) -> None:
    from frogtui.agent.trajectory import replay_lines

    live = Agent(StructuredServer(), ToolRunner(Workspace(py_repo)), ScriptedPerson(), Recorder())
    first = live.run("look")
    path = tmp_path / "recorded.jsonl"
    path.write_text(replay_lines(first.trajectory))
    again, _ = make_agent(py_repo, tmp_path, [json.loads(line)["content"] for line in path.read_text().splitlines()])
    second = again.run("look")

    def comparable(messages: list[dict]) -> list[dict]:
        return [{k: v for k, v in m.items() if k not in ("tool_call_id", "tool_calls")} for m in messages] + [
            [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in m.get("tool_calls", [])] for m in messages
        ]

    assert comparable(first.trajectory["messages"]) == comparable(second.trajectory["messages"])
    assert first.trajectory["messages"][2]["reasoning_content"] == "plan"


def test_a_repeated_call_is_asked_about_as_such_and_marked_in_the_trajectory(py_repo: Path, tmp_path: Path) -> None:
    ls = xml_call("Bash", command="ls")
    agent, sink = make_agent(py_repo, tmp_path, [turn("a", ls), turn("b", ls), turn("c", ls), turn("", answer="done")],
                             limits=Limits(repeat_threshold=3))
    person = ScriptedPerson()
    agent.approver = person
    agent.run("list")
    assert [r.repeat for r in person.requests] == ["", "", "this exact call ran twice already in a row, with the same result"]
    answered = sink.of(ev.ApprovalAnswered)
    assert answered[2].repeat == person.requests[2].repeat and not answered[0].repeat
    marks = [a.get("repeat") for s in agent.trajectory.steps for a in s.approvals]
    assert marks == [None, None, person.requests[2].repeat]


def test_hand_off_starts_a_fresh_conversation_linked_to_the_earlier_one(py_repo: Path, tmp_path: Path) -> None:
    read = xml_call("Read", file_path="calc.py")
    turns = [turn("a", read), turn("b", read), turn("", answer="first"), turn("c", read), turn("", answer="second")]
    saved: list[dict[str, Any]] = []
    agent, sink = make_agent(py_repo, tmp_path, turns, on_step_end=lambda t: saved.append(t.as_dict()))
    assert agent.run("read it").final_message == "first"
    first_id, tokens = agent.trajectory.trajectory_id, agent.session_tokens
    result = agent.hand_off("# Hand-off\ncarry on")
    assert (result.exit_reason, result.final_message) == ("agent", "second")
    assert agent.messages[:2] == [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "# Hand-off\ncarry on"}]
    (handed,) = sink.of(ev.HandedOff)
    assert (handed.previous_id, handed.trajectory_id) == (first_id, agent.trajectory.trajectory_id)
    data = result.trajectory
    assert (data["run"], data["previous_trajectory"], data["next_trajectory"]) == (2, "trajectory.json", None)
    assert [s["step"] for s in data["steps"]] == [4, 5]
    earlier = [d for d in saved if d["trajectory_id"] == first_id][-1]
    assert earlier["next_trajectory"] == "trajectory-2.json" and earlier["final_message"] == "first"
    assert agent.session_tokens > tokens and agent.session_tokens == tokens + agent.context_tokens
    usage = sink.of(ev.StepUsage)[-1]
    assert (usage.session_tokens, usage.budget) == (agent.session_tokens, agent.context_budget)
    # the repeat history starts again with the new conversation: the third Read is no repeat
    assert agent.repeats.check("Read", {"file_path": "calc.py"}) is None


def test_the_handoff_margin_ends_a_conversation_early_only_when_set(py_repo: Path, tmp_path: Path) -> None:
    read = xml_call("Read", file_path="calc.py")
    turns = [turn("a", read), turn("", answer="done")]
    limits = Limits(max_context_tokens=120, handoff_margin=100)
    early, _ = make_agent(py_repo, tmp_path, turns, limits=limits, handoff_margin=limits.handoff_margin)
    result = early.run("read it")
    # the margin is capped at half the budget (60): the first step left less than that
    assert result.exit_reason == "max_context_len" and "under the hand-off margin of 60" in str(result.error)
    assert [s.step for s in early.trajectory.steps] == [1]
    late, _ = make_agent(py_repo, tmp_path, turns, limits=limits)
    assert late.run("read it").exit_reason == "agent"


def test_identical_runs_whose_timing_differs_are_the_same_result(py_repo: Path, tmp_path: Path) -> None:
    timed = xml_call("Bash", command="python -c \"import time; print(f'4 passed in {time.perf_counter_ns() % 997 / 100:.2f}s')\"")
    agent, _ = make_agent(py_repo, tmp_path, [turn("", timed)] * 4 + [turn("", answer="done")], limits=Limits(repeat_threshold=4))
    person = ScriptedPerson()
    agent.approver = person
    agent.run("test")
    outputs = {m["content"] for m in agent.messages if m["role"] == "tool"}
    assert len(outputs) > 1  # the timing line did differ
    assert person.requests[3].repeat == "this exact call ran 3 times already in a row, with the same result"


def test_a_failure_is_counted_from_the_outcome_not_from_the_text(py_repo: Path, tmp_path: Path) -> None:
    failing, fixed = xml_call("Bash", command="false"), {"command": "exit 3"}
    other = xml_call("Read", file_path="calc.py")
    turns = [turn("", failing), turn("", other), turn("", failing), turn("", other), turn("", failing), turn("", answer="done")]
    agent, _ = make_agent(py_repo, tmp_path, turns)
    person = ScriptedPerson(Approval("allow", by="person", arguments=fixed))  # the first run is edited: its text starts with a note
    agent.approver = person
    agent.run("fail")
    assert agent.messages[3]["content"].startswith("Note: the user edited this call")
    bash = [r for r in person.requests if r.call.name == "Bash"]
    assert bash[2].repeat == "this exact call already failed twice in this conversation"


def test_a_refused_repeat_is_not_counted_as_a_run_with_a_different_result(py_repo: Path, tmp_path: Path) -> None:
    """Two identical failing runs, the third refused as a repeat, a fourth try: the refusal did not
    run, so it is no "different result"; the runs before it gave the same one."""
    tests = xml_call("Bash", command="false")
    agent, _ = make_agent(py_repo, tmp_path, [turn("", tests)] * 4 + [turn("", answer="done")], limits=Limits(repeat_threshold=3))
    person = ScriptedPerson(Approval("allow", by="person"), Approval("allow", by="person"), Approval("deny", by="person"))
    agent.approver = person
    agent.run("test")
    assert person.requests[2].repeat == "this exact call ran twice already in a row, with the same result"
    assert person.requests[3].repeat == "this exact call came twice already in a row, 1 of them refused"


# issue 22 item 5: a call's outcome travels as data in the events and the trajectory ---------------
def test_each_finished_event_carries_its_outcome_as_data(py_repo: Path, tmp_path: Path) -> None:
    turns = [
        turn("", xml_call("Bash", command="exit 3"), xml_call("Read", file_path="missing.py"), xml_call("Bash", command="git push")),
        turn("", answer="done"),
    ]
    person = ScriptedPerson(Approval("allow", by="person"), Approval("allow", by="person"), Approval("deny", "no pushing", by="person"))
    agent, sink = make_agent(py_repo, tmp_path, turns, approver=person)
    result = agent.run("x")
    failed, missing, denied = sink.of(ev.ToolFinished)
    assert (failed.outcome.kind, failed.outcome.exit_code, failed.outcome.ok, failed.outcome.ran) == ("exit", 3, False, True)
    assert failed.exit_code == 3 and failed.observation is failed.outcome.observation
    assert (missing.outcome.kind, missing.outcome.error) == ("error", "FileNotFoundError")
    assert (denied.outcome.kind, denied.outcome.ran, denied.outcome.denied) == ("denied", False, True)
    assert denied.observation == "The user denied this tool call. Reason: no pushing"
    recorded = result.trajectory["steps"][0]["observations"]
    assert [(o["tool"], o["outcome"], o["exit_code"]) for o in recorded] == [
        ("Bash", "exit", 3), ("Read", "error", None), ("Bash", "denied", None),
    ]


def test_an_interrupted_command_is_interrupted_in_its_outcome_not_only_its_text(py_repo: Path, tmp_path: Path) -> None:
    agent, sink = make_agent(py_repo, tmp_path, [turn("", xml_call("Bash", command="sleep 30")), turn("", answer="never")])
    threading.Timer(0.5, agent.interrupt).start()
    agent.run("x")
    outcome = sink.of(ev.ToolFinished)[0].outcome
    assert (outcome.kind, outcome.cancelled, outcome.exit_code, outcome.ran) == ("interrupted", True, None, True)
