"""The gate: ``Approver`` answers "may this call run?" for every front end (``protocol.Approver``).

The policy decides (``PolicyEngine.evaluate``), the approval mode applies (``apply_mode``); when
that says "ask a person", the front end's ask function does (the app's modal, the editor's
``session/request_permission``; ``frogtui run`` has none, so it is denied, saying so). The answer
is mapped here once: allow once, always allow (a narrow session rule, or this once when none is
safe), deny with the person's reason, or edited arguments that go round the policy again. The
loop reports each answer (``ApprovalAnswered``); the session log writes its audit line
(``audit_line``), whichever front end asked.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable

from frogtui.approval import proposals
from frogtui.approval.answer import Ask, PersonAnswer, Question
from frogtui.approval.decision import Decision
from frogtui.approval.engine import PolicyEngine
from frogtui.approval.modes import APPROVAL_MODES, ApprovalMode, apply_mode, repeat_denial
from frogtui.approval.policy import decide_commands
from frogtui.protocol import Approval, ApprovalRequest, ToolCall
from frogtui.tools.proposals import Proposal
from frogtui.tools.specs import runs_commands

MAX_EDITS = 10
"""A person who keeps editing one call is answered with a denial after this many questions."""


def audit_line(step: int, call: ToolCall, approval: Approval) -> str:
    """One session-log line for a decision: what, who decided, which rule, why."""
    return (
        f"approval step={step} tool={call.name} decision={approval.decision} by={approval.by} "
        f"rule={approval.rule!r} reason={approval.reason!r}"
    )


class Approver:
    """Implements ``protocol.Approver`` for every front end (on the agent's thread).

    Args:
        engine: The policy (rules, session rules, floor).
        ask: The front end's way to ask a person (it may block); None without a person
            (``frogtui run``): what would be asked is denied, and the mode is named as the
            command line's flag (``--approve all``).
        show: Called with each Write/Edit request that has a preview, before the policy decides
            (the front end shows the change whether or not it asks).
        mode: ``policy``, ``none`` or ``all`` (``approval.apply_mode``); a front end may change it
            between calls.
    """

    def __init__(
        self,
        engine: PolicyEngine,
        *,
        ask: Ask | None = None,
        show: Callable[[ApprovalRequest], object] | None = None,
        mode: ApprovalMode = "policy",
    ) -> None:
        if mode not in APPROVAL_MODES:
            raise ValueError(f"unknown approval mode {mode!r}")
        self.engine = engine
        self.ask = ask
        self.show = show
        self.mode: ApprovalMode = mode

    def approve(self, request: ApprovalRequest) -> Approval:
        if self.show is not None and request.preview is not None:
            self.show(request)
        return self._answer(request)

    def _answer(self, request: ApprovalRequest) -> Approval:
        asked, edited = request, None
        label = "" if self.ask is not None else f"--approve {self.mode}"
        for _ in range(MAX_EDITS):
            decision = self.engine.evaluate(asked)
            if edited is None and self._proposes(request, decision):
                return Approval("allow", f"runs as a proposal ({decision.reason}); what it does is judged before it lands",
                                by="proposal", rule=decision.rule, proposal=True)
            decided = apply_mode(self.mode, decision, asked.call.name, label=label, repeat=request.repeat)
            if decided is not None:
                return decided if edited is None else dataclasses.replace(decided, arguments=edited)
            if self.ask is None:
                return self._unasked(request, decision)
            rules = tuple(rule.text for rule in self.engine.session_rules_for(asked.call))
            answer = self.ask(Question(request=asked, decision=decision, session_rules=rules))
            if answer.choice != "edit" or answer.arguments is None:
                return self._answered(answer, asked.call, decision, edited)
            edited = dict(answer.arguments)
            asked = dataclasses.replace(asked, call=dataclasses.replace(asked.call, arguments=edited))
        return Approval("deny", reason="too many edits of one call", by="person")

    def _proposes(self, request: ApprovalRequest, decision: Decision) -> bool:
        """Whether the command runs as a proposal instead of being asked about: it can, the policy
        would ask (not allow, not deny), it is no repeat, and the mode lets commands run."""
        return (request.proposable and runs_commands(request.call.name) and decision.kind == "ask" and not decision.floor
                and not request.repeat and self.mode != "none" and self.engine.rules.proposals
                and not self._asked_by_a_rule(request, decision))

    def _asked_by_a_rule(self, request: ApprovalRequest, decision: Decision) -> bool:
        """Whether an ask rule someone wrote decides the command (or one of its parts): it is asked
        about before it runs, as the rule says (its output may be what the rule guards)."""
        written = {rule.text for rule in self.engine.rules.rules if runs_commands(rule.tool) and rule.decision == "ask"}
        if not written:
            return False
        if decision.rule in written:
            return True
        return any(part.rule in written for _command, part in decide_commands(self.engine.action(request.call), self.engine.rules))

    def judge_proposal(self, request: ApprovalRequest, proposal: Proposal) -> Approval:
        """Whether ``proposal``'s effects land (``approval.proposals``): all allowed, they do; one
        denied, none does; else the person is asked (without one, none lands). The answer's
        ``accepted`` names the effects to land; its reason, for a denial, lists every effect and
        the rule that decided it (the model is told)."""
        if not proposal.effects.complete:  # what was not read cannot be judged, under every mode
            return proposals.too_large_answer(proposal)
        mode: ApprovalMode = "policy" if self.mode == "edits" else self.mode  # edits: Bash exactly as under policy
        judged = proposals.judge(self.engine, proposal, mode, label="" if self.ask is not None else f"--approve {self.mode}")
        verdict = proposals.overall(judged)
        if verdict == "allow":
            return proposals.allowed_answer(judged)
        if verdict == "deny":
            why = f"{proposal.ran_as}, and none of its changes was applied: one is denied"
            return proposals.denied_answer(judged, by="rule", why=why)
        if self.ask is None:
            why = (f"{proposal.ran_as}, and none of its changes was applied: one needs a person's approval and the run "
                   f"is headless (--approve {self.mode})")
            return proposals.denied_answer(judged, by="mode", why=why)
        decision = proposals.question_decision(judged)
        rules = tuple(rule.text for rule in self.engine.session_rules_for(request.call))
        answer = self.ask(Question(request=request, decision=decision, session_rules=rules, proposal=proposal, judged=tuple(judged)))
        if answer.choice == "run":
            return Approval("allow", "ran as a proposal; the user chose to run it for real", by=answer.by, rule=decision.rule,
                            run_for_real=True)
        if answer.choice in ("once", "always"):
            landed = self._answered(answer, request.call, decision, None)
            accepted = tuple(j.effect.path for j in judged if j.verdict != "skip")
            if answer.accepted is not None:
                accepted = tuple(path for path in accepted if path in set(answer.accepted))
            landing = set(accepted)
            hunks = tuple(choice for choice in answer.hunks if choice.path in landing)
            return dataclasses.replace(landed, accepted=accepted, hunks=hunks, reason=f"ran as a proposal; {landed.reason}")
        if answer.by != "person":  # the front end could not show it (``display``): its own reason
            return proposals.denied_answer(judged, by=answer.by, why=answer.reason)
        said = f" ({answer.reason})" if answer.reason else ""
        why = f"{proposal.ran_as}, and the user rejected its changes{said}; none was applied"
        return proposals.denied_answer(judged, by=answer.by, why=why)

    def _answered(self, answer: PersonAnswer, call: ToolCall, decision: Decision, edited: dict | None) -> Approval:
        """The person's answer (not an edit) as the approval."""
        if answer.choice == "once":
            return Approval("allow", "allowed once", by=answer.by, rule=decision.rule, arguments=edited)
        if answer.choice == "always":
            stored = self.engine.allow_for_session(call)
            if not stored:  # no narrow rule is safe for this call: it is allowed this once
                return Approval("allow", "allowed once (no safe rule to store)", by=answer.by, rule=decision.rule, arguments=edited)
            return Approval("allow", "always allowed for this session", by=answer.by, rule=stored, arguments=edited)
        return Approval("deny", answer.reason, by=answer.by, rule=decision.rule)

    def _unasked(self, request: ApprovalRequest, decision: Decision) -> Approval:
        """The answer without a person (``frogtui run``): denied, saying why."""
        if request.repeat:
            return repeat_denial(request.repeat, decision)
        return Approval(
            "deny",
            f"{decision.reason}; this needs a person's approval and the run is headless (--approve policy denies what it would ask about)",
            by="mode",
            rule=decision.rule,
        )
