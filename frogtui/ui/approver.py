"""The app's approver: the policy decides under the approval mode (``approval.apply_mode``), and
when the answer is "ask a person", the person does.

``UiApprover.approve`` runs on the agent's worker thread. For an ``ask`` it posts an
``ApprovalRequested`` message carrying a ``Future`` and blocks on it; the app shows the modal and
sets the result. ``cancel_pending`` (interrupt, quit) answers every waiting future with a denial.
"""
from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from frogtui.ui.messages import ApprovalRequested, CallPreviewed, PersonAnswer

if TYPE_CHECKING:  # the policy is imported with the session, after the first paint
    from frogtui.approval import ApprovalMode, Decision, PolicyEngine
    from frogtui.protocol import Approval, ApprovalRequest
    from frogtui.ui.diffmodel import FileDiff

MAX_EDITS = 10
INTERRUPTED = "Interrupted by the user"


class UiApprover:
    """Implements ``protocol.Approver`` for the app.

    Args:
        post: posts a Textual message to the app (thread-safe ``App.post_message``).
        engine: the session's policy (``SessionCore.engine``); set before the first call.
        sandboxed: whether Bash runs in the sandbox (shown in the modal).
        mode: ``policy``, ``all`` or ``none`` (``approval.APPROVAL_MODES``).
    """

    def __init__(
        self, post: Callable[[Any], Any], engine: PolicyEngine | None = None, *, sandboxed: bool = False, mode: ApprovalMode = "policy"
    ) -> None:
        self.engine = engine
        self.post = post
        self.sandboxed = sandboxed
        self.mode = mode
        self._pending: set[Future[PersonAnswer]] = set()
        self._lock = threading.Lock()

    def approve(self, request: ApprovalRequest) -> Approval:
        from frogtui.protocol import Approval  # on the agent's thread (the loop imported it)

        call = request.call
        edited: dict[str, Any] | None = None
        diff = None
        if request.preview is not None:
            from frogtui.ui.diffmodel import FileDiff  # pygments, on the agent's thread

            diff = FileDiff(request.preview.path, request.preview.before, request.preview.after)
            self.post(CallPreviewed(call, diff))
        for _ in range(MAX_EDITS):
            asked = dataclasses.replace(request, call=call)
            assert self.engine is not None, "the session is prepared before the agent runs"
            decision = self.engine.evaluate(asked)
            from frogtui.approval import apply_mode

            decided = apply_mode(self.mode, decision, call.name, repeat=request.repeat)
            if decided is not None:
                return dataclasses.replace(decided, arguments=edited)
            answer = self._ask(asked, decision, diff)
            if answer.choice == "once":
                return Approval("allow", reason="allowed once", by="person", rule=decision.rule, arguments=edited)
            if answer.choice == "always":
                rule = self.engine.allow_for_session(call)
                if not rule:  # no narrow rule is safe for this call: it is allowed this once
                    return Approval(
                        "allow", reason="allowed once (no safe rule to store)", by="person", rule=decision.rule, arguments=edited
                    )
                return Approval("allow", reason="always allowed for this session", by="person", rule=rule, arguments=edited)
            if answer.choice == "deny" or answer.arguments is None:
                return Approval("deny", reason=answer.reason, by="person", rule=decision.rule)
            edited = dict(answer.arguments)
            call = dataclasses.replace(call, arguments=edited)
        return Approval("deny", reason="too many edits of one call", by="person")

    def _ask(self, request: ApprovalRequest, decision: Decision, diff: FileDiff | None) -> PersonAnswer:
        future: Future[PersonAnswer] = Future()
        with self._lock:
            self._pending.add(future)
        try:
            assert self.engine is not None
            session_rule = "; ".join(rule.text for rule in self.engine.session_rules_for(request.call))
            self.post(ApprovalRequested(request, decision, session_rule, self.sandboxed, future, diff))
            return future.result()
        finally:
            with self._lock:
                self._pending.discard(future)

    def cancel_pending(self, reason: str = INTERRUPTED) -> int:
        """Answer every waiting question with a denial (thread-safe). Returns how many there were."""
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            if not future.done():
                future.set_result(PersonAnswer("deny", reason=reason))
        return len(pending)
