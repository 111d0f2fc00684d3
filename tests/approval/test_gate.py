"""The gate (``approval.Approver``): the policy, the approval mode, the person's answer mapped once,
the session rule and the audit line, whatever front end asks. A front end brings only its way to ask
a person: here a plain function with scripted answers (the edge fake a fourth front end would be)."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.agent.outcomes import denial_observation
from frogtui.approval import Approver, PersonAnswer, PolicyEngine, Question, audit_line
from frogtui.protocol import ApprovalRequest, Preview, ToolCall
from frogtui.tools.workspace import Workspace


class ScriptedPerson:
    """A front end's ask function: answers from a script, keeps every question."""

    def __init__(self, *answers: PersonAnswer) -> None:
        self.answers = list(answers)
        self.questions: list[Question] = []

    def __call__(self, question: Question) -> PersonAnswer:
        self.questions.append(question)
        return self.answers.pop(0)


def audited(approver: Approver) -> list[str]:
    """The audit lines of the gate's answers, as the session log writes them (``session/log.py``:
    one per ``ApprovalAnswered``, the one event the loop emits for each call's answer)."""
    log: list[str] = []
    answer = approver.approve

    def approve(request: ApprovalRequest):  # type: ignore[no-untyped-def]
        approval = answer(request)
        log.append(audit_line(request.step, request.call, approval))
        return approval

    approver.approve = approve  # type: ignore[method-assign]
    return log


def gate(tmp_path: Path, *answers: PersonAnswer, mode: str = "policy") -> tuple[Approver, ScriptedPerson, list[str]]:
    engine = PolicyEngine(Workspace(tmp_path, tmp_dir=tmp_path / ".tmp"))
    person = ScriptedPerson(*answers)
    approver = Approver(engine, ask=person, mode=mode)  # type: ignore[arg-type]
    return approver, person, audited(approver)


def bash(command: str, step: int = 1, call_id: str = "c1") -> ApprovalRequest:
    return ApprovalRequest(ToolCall(call_id, "Bash", {"command": command}), step=step, root="/repo")


def test_allow_once_allows_this_call_and_asks_again_next_time(tmp_path: Path) -> None:
    approver, person, log = gate(tmp_path, PersonAnswer("once"), PersonAnswer("once"))
    first = approver.approve(bash("make test"))
    assert (first.decision, first.reason, first.by, first.arguments) == ("allow", "allowed once", "person", None)
    (question,) = person.questions
    assert question.session_rule == "Bash: make test"
    assert question.decision.kind == "ask" and question.request.call.arguments == {"command": "make test"}
    approver.approve(bash("make test", step=2))
    assert len(person.questions) == 2, "once is not a rule"
    assert len(log) == 2
    assert log[0] == f"approval step=1 tool=Bash decision=allow by=person rule={first.rule!r} reason='allowed once'"


def test_always_allow_stores_the_session_rule_and_the_next_identical_call_is_not_asked(tmp_path: Path) -> None:
    approver, person, log = gate(tmp_path, PersonAnswer("always"))
    first = approver.approve(bash("make test"))
    assert (first.decision, first.reason, first.by, first.rule) == ("allow", "always allowed for this session", "person", "Bash: make test")
    assert [rule.text for rule in approver.engine.session_rules] == ["Bash: make test"]
    second = approver.approve(bash("make test", step=2, call_id="c2"))
    assert (second.decision, second.by, second.rule) == ("allow", "rule", "Bash: make test")
    assert len(person.questions) == 1
    assert len(log) == 2 and log[0].startswith("approval step=1 tool=Bash decision=allow by=person rule='Bash: make test'")


def test_always_allow_without_a_safe_rule_allows_this_once(tmp_path: Path) -> None:
    command = "eval \"$SCRIPT\""  # opaque: no narrow rule is safe (a part that is, like $(cat script), would get its own)
    approver, person, _ = gate(tmp_path, PersonAnswer("always"), PersonAnswer("once"))
    first = approver.approve(bash(command))
    assert person.questions[0].session_rule == ""
    assert (first.decision, first.reason, first.by) == ("allow", "allowed once (no safe rule to store)", "person")
    assert first.rule == person.questions[0].decision.rule
    assert approver.engine.session_rules == []
    approver.approve(bash(command, step=2))
    assert len(person.questions) == 2


def test_deny_with_a_reason_is_the_observation_the_model_gets(tmp_path: Path) -> None:
    approver, _, log = gate(tmp_path, PersonAnswer("deny", reason="use the Makefile's lint target"), PersonAnswer("deny"))
    denied = approver.approve(bash("rm -rf build"))
    assert (denied.decision, denied.by) == ("deny", "person")
    assert denial_observation(denied) == "The user denied this tool call. Reason: use the Makefile's lint target"
    silent = approver.approve(bash("rm -rf build", step=2))
    assert denial_observation(silent) == "The user denied this tool call."
    assert log[0] == (
        f"approval step=1 tool=Bash decision=deny by=person rule={denied.rule!r} reason=\"use the Makefile's lint target\""
    )


def test_edited_arguments_go_round_the_policy_again(tmp_path: Path) -> None:
    approver, person, log = gate(tmp_path, PersonAnswer("edit", arguments={"command": "make check"}), PersonAnswer("once"))
    approval = approver.approve(bash("make test"))
    assert (approval.decision, approval.by, approval.arguments) == ("allow", "person", {"command": "make check"})
    assert [q.request.call.arguments["command"] for q in person.questions] == ["make test", "make check"]
    assert [q.session_rule for q in person.questions] == ["Bash: make test", "Bash: make check"]
    assert len(log) == 1 and "tool=Bash decision=allow by=person" in log[0], "one audit line for the call, edits and all"


def test_edited_arguments_the_policy_allows_are_not_asked_about_again(tmp_path: Path) -> None:
    approver, person, _ = gate(tmp_path, PersonAnswer("edit", arguments={"command": "ls"}))
    approval = approver.approve(bash("make test"))
    assert (approval.decision, approval.by, approval.arguments) == ("allow", "rule", {"command": "ls"})
    assert len(person.questions) == 1


def test_an_edit_without_arguments_is_a_denial_and_endless_edits_stop(tmp_path: Path) -> None:
    approver, _, _ = gate(tmp_path, PersonAnswer("edit", reason="no"))
    denied = approver.approve(bash("make test"))
    assert (denied.decision, denied.reason, denied.by) == ("deny", "no", "person")
    edits = [PersonAnswer("edit", arguments={"command": f"make t{n}"}) for n in range(20)]
    approver, person, _ = gate(tmp_path, *edits)
    approval = approver.approve(bash("make test"))
    assert (approval.decision, approval.reason, approval.by) == ("deny", "too many edits of one call", "person")
    assert len(person.questions) == 10


@pytest.mark.parametrize(
    ("mode", "decision", "by", "rule"),
    [("all", "allow", "mode", "mode: all"), ("none", "deny", "mode", "mode: none")],
)
def test_modes_answer_without_asking(tmp_path: Path, mode: str, decision: str, by: str, rule: str) -> None:
    approver, person, log = gate(tmp_path, mode=mode)
    approval = approver.approve(bash("make test"))
    assert (approval.decision, approval.by, approval.rule) == (decision, by, rule)
    assert person.questions == [] and len(log) == 1


def test_the_read_only_default_allows_without_asking(tmp_path: Path) -> None:
    approver, person, _ = gate(tmp_path)
    approval = approver.approve(bash("ls -la"))
    assert (approval.decision, approval.by, approval.read_only) == ("allow", "rule", True)
    read = approver.approve(ApprovalRequest(ToolCall("c2", "Read", {"file_path": "x"}), step=1, root="/repo"))
    assert read.allowed and read.by == "rule"
    assert person.questions == []


@pytest.mark.parametrize("mode", ["policy", "all"])
def test_the_floor_is_never_asked_about(tmp_path: Path, mode: str) -> None:
    approver, person, log = gate(tmp_path, PersonAnswer("once"), mode=mode)
    call = ToolCall("c1", "Write", {"file_path": str(tmp_path / ".git" / "config"), "content": "x"})
    approval = approver.approve(ApprovalRequest(call, step=3, root=str(tmp_path)))
    assert (approval.decision, approval.by) == ("deny", "floor")
    assert person.questions == []
    assert log == [f"approval step=3 tool=Write decision=deny by=floor rule={approval.rule!r} reason={approval.reason!r}"]


def test_a_repeat_is_asked_about_even_when_a_rule_allows_it(tmp_path: Path) -> None:
    approver, person, _ = gate(tmp_path, PersonAnswer("once"))
    repeat = "this exact call ran twice already in a row, with the same result"
    request = ApprovalRequest(ToolCall("c1", "Bash", {"command": "ls"}), step=4, root="/repo", repeat=repeat)
    assert approver.approve(request).by == "person"
    assert person.questions[0].request.repeat == repeat


def test_without_a_person_what_would_be_asked_is_denied_saying_so(tmp_path: Path) -> None:
    approver = Approver(PolicyEngine(Workspace(tmp_path, tmp_dir=tmp_path / ".tmp")))
    log = audited(approver)
    denied = approver.approve(bash("make test"))
    assert (denied.decision, denied.by) == ("deny", "mode")
    headless = "this needs a person's approval and the run is headless (--approve policy denies what it would ask about)"
    assert denied.reason.endswith(headless)
    allowed = Approver(approver.engine, mode="all").approve(bash("make test"))
    assert allowed.rule == "--approve all", "headless, the mode is named as the command line's flag"
    assert len(log) == 1


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown approval mode"):
        Approver(PolicyEngine(Workspace(tmp_path, tmp_dir=tmp_path / ".tmp")), mode="sometimes")  # type: ignore[arg-type]


def test_a_change_is_shown_before_the_policy_decides_whether_or_not_it_asks(tmp_path: Path) -> None:
    shown: list[ApprovalRequest] = []
    engine = PolicyEngine(Workspace(tmp_path, tmp_dir=tmp_path / ".tmp"))
    approver = Approver(engine, ask=ScriptedPerson(), show=shown.append, mode="all")
    preview = Preview(path="new.txt", abs_path=str(tmp_path / "new.txt"), before=None, after="hello\n", before_hash=None)
    call = ToolCall("c1", "Write", {"file_path": "new.txt", "content": "hello\n"})
    write = ApprovalRequest(call, step=1, root=str(tmp_path), preview=preview)
    assert approver.approve(write).allowed
    assert shown == [write]
    approver.approve(bash("ls"))
    assert shown == [write], "only a call with a preview is shown"
