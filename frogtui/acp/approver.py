"""``AcpApprover``: the policy decides; what it would ask a person about becomes a
``session/request_permission`` carrying the whole call (title, kind, diff or command, why the
policy asks). Allow once, always allow (naming the narrow session rule it stores, as the app's
``a`` does) or reject; a cancelled prompt, an unknown option or no answer is a denial. A call the
request could not show whole (``ToolCallView.unshowable``) is refused without asking."""
from __future__ import annotations

import threading
from collections.abc import Callable

from acp import schema

from frogtui.acp.sink import AcpSink
from frogtui.acp.updates import diff_content
from frogtui.approval import ApprovalMode, Decision, PolicyEngine, apply_mode, audit_line
from frogtui.protocol import Approval, ApprovalRequest

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"
OPTION_NAME_MAX = 120
"""The longest "Always allow" option name (editors draw it as a button); longer rules are listed
in the request's text instead."""


class AcpApprover:
    """Implements ``protocol.Approver`` for an ACP session (runs on the agent's worker thread).

    Args:
        engine: The policy (rules, session rules, floor).
        sink: The session's sink (its tool call views; its outbox asks the client).
        mode: The approval mode (``approval.apply_mode``: the same meaning as in the app).
        log: Called with one audit line per decision (the session log).
    """

    def __init__(
        self, engine: PolicyEngine, sink: AcpSink, *, mode: ApprovalMode = "policy", log: Callable[[str], None] | None = None
    ) -> None:
        self.engine = engine
        self.sink = sink
        self.mode: ApprovalMode = mode
        self.log = log
        self.cancelled = threading.Event()
        """Set when the prompt is cancelled (cleared when the next starts): nothing more is asked."""

    def approve(self, request: ApprovalRequest) -> Approval:
        view = self.sink.view(request.call)
        if request.preview is not None:
            view.diff, view.diff_complete = diff_content(request.preview)
            self.sink.outbox.send(view.progress())
        decision = self.engine.evaluate(request)
        approval = apply_mode(self.mode, decision, request.call.name, repeat=request.repeat) or self._ask(request, decision)
        if self.log is not None:
            self.log(audit_line(request.step, request.call, approval))
        return approval

    def _ask(self, request: ApprovalRequest, decision: Decision) -> Approval:
        call = request.call
        if self.cancelled.is_set():
            return Approval("deny", "the prompt was cancelled", by="person", rule=decision.rule)
        rules = [r.text for r in self.engine.session_rules_for(call)]
        rule = "; ".join(rules)
        always = f"Always allow for this session: {rule}"
        listed = len(always) > OPTION_NAME_MAX  # an editor's button: the rules go into the request instead
        if listed:
            always = f"Always allow for this session: the {len(rules)} rules listed in the request"
        options = [schema.PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
        if rule:
            options.append(schema.PermissionOption(option_id=ALLOW_ALWAYS, name=always, kind="allow_always"))
        options.append(schema.PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
        why = f"frogtui asks because of `{decision.rule}`: {decision.reason}"
        if request.repeat:
            why = f"frogtui asks because {request.repeat}"
        if rule and listed:
            why += "\n\nAlways allow for this session stores:\n" + "\n".join(f"- `{text}`" for text in rules)
        view = self.sink.view(call)
        problem = view.unshowable(why)
        if problem:  # the person would allow what they cannot see: never asked
            return Approval("deny", problem, by="display", rule=decision.rule)
        response = self.sink.outbox.ask(view.permission_call(why), options)
        outcome = response.outcome if response is not None else None
        if not isinstance(outcome, schema.AllowedOutcome):
            reason = "the prompt was cancelled" if outcome is not None or self.cancelled.is_set() else "the editor gave no answer"
            return Approval("deny", reason, by="person", rule=decision.rule)
        if outcome.option_id == ALLOW_ONCE:
            return Approval("allow", "allowed once", by="person", rule=decision.rule)
        if outcome.option_id == ALLOW_ALWAYS and rule:
            stored = self.engine.allow_for_session(call)
            if stored:
                return Approval("allow", "always allowed for this session", by="person", rule=stored)
            return Approval("allow", "allowed once (no safe rule to store)", by="person", rule=decision.rule)
        if outcome.option_id == REJECT:
            return Approval("deny", "", by="person", rule=decision.rule)
        return Approval("deny", f"the editor answered with an unknown option {outcome.option_id[:80]!r}", by="person", rule=decision.rule)
