"""The ACP agent's way to ask a person, for the gate (``approval.Approver``'s ``ask`` and
``show``): a ``session/request_permission`` carrying the whole call (title, kind, diff or command,
why the policy asks). Allow once, always allow (naming the narrow session rule it stores, as the
app's ``a`` does) or reject; a cancelled prompt, an unknown option or no answer is a denial. A
call the request could not show whole (``ToolCallView.unshowable``) is refused without asking."""
from __future__ import annotations

import threading

from acp import schema

from frogtui.acp.sink import AcpSink
from frogtui.acp.updates import diff_content, proposal_content
from frogtui.approval import PersonAnswer, Question
from frogtui.protocol import ApprovalRequest

ALLOW_ONCE, ALLOW_ALWAYS, REJECT, RUN_FOR_REAL = "allow_once", "allow_always", "reject_once", "run_for_real"
OPTION_NAME_MAX = 120
"""The longest "Always allow" option name (editors draw it as a button); longer rules are listed
in the request's text instead."""


class PermissionAsk:
    """Asks the editor's person (on the agent's worker thread, which blocks on the answer).

    Args:
        sink: The session's sink (its tool call views; its outbox asks the client).
        cancelled: Set while the prompt is cancelled: nothing more is asked.
    """

    def __init__(self, sink: AcpSink, cancelled: threading.Event) -> None:
        self.sink = sink
        self.cancelled = cancelled

    def show(self, request: ApprovalRequest) -> None:
        """The Write/Edit call's diff on its tool call, whether or not the person is asked."""
        assert request.preview is not None
        view = self.sink.view(request.call)
        view.diff, view.diff_complete = diff_content(request.preview)
        self.sink.outbox.send(view.progress())

    def ask(self, question: Question) -> PersonAnswer:
        """A ``session/request_permission`` for the question, its answer as the person's."""
        if self.cancelled.is_set():
            return PersonAnswer("deny", "the prompt was cancelled")
        request, rules, rule = question.request, question.session_rules, question.session_rule
        always = f"Always allow for this session: {rule}"
        listed = len(always) > OPTION_NAME_MAX  # an editor's button: the rules go into the request instead
        if listed:
            always = f"Always allow for this session: the {len(rules)} rules listed in the request"
        landing = question.proposal is not None
        options = [schema.PermissionOption(option_id=ALLOW_ONCE, name="Apply its changes" if landing else "Allow once", kind="allow_once")]
        if rule:
            options.append(schema.PermissionOption(option_id=ALLOW_ALWAYS, name=always, kind="allow_always"))
        options.append(schema.PermissionOption(option_id=REJECT, name="Reject its changes" if landing else "Reject", kind="reject_once"))
        if landing:
            options.append(schema.PermissionOption(option_id=RUN_FOR_REAL, name="Run it for real instead (network as configured)",
                                                   kind="allow_once"))
        why = f"frogtui asks because of `{question.decision.rule}`: {question.decision.reason}"
        if request.repeat:
            why = f"frogtui asks because {request.repeat}"
        if question.decision.justification:
            why += f"\nwhy: {question.decision.justification}"  # the rule's justification, as the app's modal shows it
        if rule and listed:
            why += "\n\nAlways allow for this session stores:\n" + "\n".join(f"- `{text}`" for text in rules)
        view = self.sink.view(request.call)
        if question.proposal is not None:  # what the command did, as diffs: the question is whether it lands
            view.diff, view.diff_complete = proposal_content(question.proposal, question.judged)
            why = f"frogtui asks whether the command's effects land: {question.decision.rule}"
        problem = view.unshowable(why)
        if problem:  # the person would allow what they cannot see: never asked
            return PersonAnswer("deny", problem, by="display")
        response = self.sink.outbox.ask(view.permission_call(why), options)
        outcome = response.outcome if response is not None else None
        if not isinstance(outcome, schema.AllowedOutcome):
            reason = "the prompt was cancelled" if outcome is not None or self.cancelled.is_set() else "the editor gave no answer"
            return PersonAnswer("deny", reason)
        if outcome.option_id == ALLOW_ONCE:
            return PersonAnswer("once")
        if outcome.option_id == ALLOW_ALWAYS and rule:
            return PersonAnswer("always")
        if outcome.option_id == REJECT:
            return PersonAnswer("deny")
        if outcome.option_id == RUN_FOR_REAL and landing:
            return PersonAnswer("run")
        return PersonAnswer("deny", f"the editor answered with an unknown option {outcome.option_id[:80]!r}")
