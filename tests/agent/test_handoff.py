"""The hand-off is drafted from frogtui's own records of a real run: the transcript the loop held,
the repository's real diff, and the outcome of each call."""
from __future__ import annotations

from pathlib import Path

from frogtui.agent.handoff import call_outcomes, call_summary, changed_files, draft_handoff, one_line, said
from frogtui.agent.saved import Conversation
from frogtui.tools.observations import classify
from frogtui.tools.specs import runs_commands
from tests.agent.test_loop import make_agent
from tests.support import git, turn, xml_call


def of(messages: list[dict]) -> Conversation:
    """A transcript as a conversation saved before outcomes were recorded (no step records)."""
    return Conversation.read({"messages": messages})


def observation_outcome(tool: str, observation: str) -> str:
    """How the hand-off says a call ended that only its text tells (``classify``)."""
    return said(classify(observation, command=runs_commands(tool)))


TURNS = [
    turn("Run the tests.", xml_call("Bash", command="python -m pytest -q")),
    turn("Look.", xml_call("Read", file_path="calc.py")),
    turn("Fix.", xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")),
    turn("Missing file.", xml_call("Read", file_path="nope.py")),
    turn("Stop here.", answer="Changed add() to use +; the tests should pass now."),
]


def test_a_real_run_becomes_a_handoff_with_files_calls_and_the_last_message(py_repo: Path, tmp_path: Path) -> None:
    agent, _ = make_agent(py_repo, tmp_path, TURNS)
    result = agent.run("Fix the failing test in calc.py.")
    assert result.exit_reason == "agent"
    text = draft_handoff(Conversation.of(agent.trajectory), patch=git(py_repo, "diff"), ended="max_context_len")
    assert text.startswith("# Hand-off\nThis continues an earlier conversation on the same task, which ended: its context filled up.\n")
    assert "## Task\nFix the failing test in calc.py.\n" in text
    assert "## Files changed so far\n- calc.py (+1 -1)\n" in text
    assert "## Calls made (4)\n" in text
    assert "- step 1: Bash `python -m pytest -q` -> exit 1\n" in text
    assert "- step 2: Read calc.py -> ok\n" in text
    assert "- step 3: Edit calc.py -> ok\n" in text
    assert "- step 4: Read nope.py -> error\n" in text
    assert "## Last message from the assistant\nChanged add() to use +; the tests should pass now.\n" in text
    assert "## What remains\nThe last call failed: Read nope.py -> error.\nThe files above are already changed" in text
    assert "## Follow-up messages" not in text


def test_follow_ups_denials_and_a_handoff_of_a_handoff_keep_the_original_task(py_repo: Path, tmp_path: Path) -> None:
    from frogtui.protocol import Approval
    from tests.agent.test_loop import ScriptedPerson

    person = ScriptedPerson(Approval("deny", by="person", reason="not now"))
    agent, _ = make_agent(
        py_repo, tmp_path, [turn("Try.", xml_call("Bash", command="rm -r build")), turn("ok", answer="")], approver=person
    )
    agent.run("first hand-off text")
    messages = [*agent.messages, {"role": "user", "content": "also update the docs\nplease"}]
    text = draft_handoff(of(messages), ended="requested", task="The real task")
    assert "## Task\nThe real task\n" in text
    assert "## Follow-up messages\n- also update the docs …\n" in text
    assert "- step 1: Bash `rm -r build` -> denied\n" in text
    assert "## Files changed so far\n- none\n" in text
    assert "## What remains\nThe last call failed: Bash `rm -r build` -> denied.\nCheck what is done" in text
    assert "which ended: the person asked for a fresh conversation." in text


def test_outcomes_follow_leafs_observation_strings() -> None:
    assert observation_outcome("Bash", "Exit code: 0\nSTDOUT:\n") == "ok"
    assert observation_outcome("Bash", "Exit code: 2\nSTDOUT:\n") == "exit 2"
    assert observation_outcome("Bash", "Timed out after 3.0s\nSTDOUT:\n") == "timeout"
    assert observation_outcome("Bash", "Interrupted by the user") == "interrupted"
    assert observation_outcome("Write", "PermissionError: writes outside the repository") == "denied"
    assert observation_outcome("Read", "FileNotFoundError: [Errno 2] No such file") == "error"
    assert observation_outcome("Read", "calc.py\n1. ValueError: in a file is not an error") == "ok"
    assert call_summary("Glob", {"pattern": "**/*.py"}) == "Glob **/*.py"
    assert call_summary("Bash", {"command": "a\nb"}) == "Bash `a …`"
    assert one_line("x" * 500, 10) == "x" * 9 + "…"


def test_changed_files_counts_lines_per_file_and_ignores_headers() -> None:
    patch = (
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n-x\n+y\n+z\n"
        "diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n"
    )
    assert changed_files(patch) == [("a.py", 2, 1), ("new.txt", 1, 0)]
    assert changed_files("") == []


def test_malformed_transcript_entries_are_skipped_not_fatal() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": {"name": "Bash", "arguments": "{not json"}}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "b", "function": {"name": "Read", "arguments": "[1]"}}]},
    ]
    calls = call_outcomes(of(messages))
    assert [(c.step, c.summary, c.outcome) for c in calls] == [(1, "Bash ``", "ok"), (2, "Read", "ok")]
    assert "## Task\ntask\n" in draft_handoff(of(messages))


def test_only_the_last_calls_are_listed_in_a_long_conversation() -> None:
    messages: list[dict] = [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}]
    for i in range(100):
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": f"c{i}", "function": {"name": "Read", "arguments": f'{{"file_path": "f{i}.py"}}'}}],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"f{i}.py\n1. x"})
    text = draft_handoff(of(messages))
    assert "## Calls made (last 40 of 100)\n- step 61: Read f60.py -> ok\n" in text
    assert "f59.py" not in text


def test_each_call_ends_as_its_recorded_outcome_says_not_as_its_text_reads(py_repo: Path, tmp_path: Path) -> None:
    # a Glob whose first match is named like a denial: its text alone reads as one
    (py_repo / "PermissionError: notes.java").write_text("class Notes {}\n")
    assert observation_outcome("Glob", "PermissionErrorHandler.java") == "ok"
    turns = [turn("Find.", xml_call("Glob", pattern="*.java")), turn("Done.", answer="found it")]
    agent, _ = make_agent(py_repo, tmp_path, turns)
    agent.run("find the handler")
    assert observation_outcome("Glob", "PermissionError: notes.java") == "denied", "what the text alone says"
    text = draft_handoff(Conversation.of(agent.trajectory))
    assert "- step 1: Glob *.java -> ok\n" in text
    # a transcript saved before outcomes were recorded (or one that does not line up) is read from its text
    assert "- step 1: Glob *.java -> denied\n" in draft_handoff(of(agent.messages))
    misfit = {"step": 1, "observations": [{"tool": "Read", "outcome": "ok"}]}
    assert "- step 1: Glob *.java -> denied\n" in draft_handoff(Conversation.read({"messages": agent.messages, "steps": [misfit]}))
