"""The app's approver: the policy decides, and when it says ``ask`` the person does.

``UiApprover.approve`` runs on the agent's worker thread. For an ``ask`` it posts an
``ApprovalRequested`` message carrying a ``Future`` and blocks on it; the app shows the modal and
sets the result. ``cancel_pending`` (interrupt, quit) answers every waiting future with a denial.
"""
from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from frogtui.protocol import Approval, ApprovalRequest, ToolCall
from frogtui.ui.diffmodel import FileDiff
from frogtui.ui.messages import (
    ApprovalRequested,
    CallPreviewed,
    PersonAnswer,
    PolicyVerdict,
)

APPROVAL_MODES = ("policy", "all", "none")
"""``policy``: ask when the policy says ask; ``all``: allow what the policy does not deny;
``none``: deny what the policy would ask about."""

MAX_EDITS = 10
INTERRUPTED = "Interrupted by the user"


class UiPolicy(Protocol):
    """What the app needs from the approval policy."""

    def verdict(self, request: ApprovalRequest) -> PolicyVerdict:
        """Allow, ask or deny ``request``, with the rule that decided."""
        ...

    def session_rule(self, call: ToolCall) -> str:
        """The narrow rule "always allow" would store for ``call`` (shown before it is chosen)."""
        ...

    def allow_for_session(self, call: ToolCall) -> str:
        """Store the narrow rule for ``call`` for the rest of the session; return its text."""
        ...


READ_ONLY = frozenset({"Read", "Glob"})


def exact_rule(call: ToolCall) -> str:
    """The narrowest rule for a call: the exact command, or the exact file."""
    if call.name == "Bash":
        return f"Bash: {call.arguments.get('command', '')}"
    if call.name in ("Write", "Edit"):
        return f"{call.name}: {call.arguments.get('file_path', '')}"
    return f"{call.name}: allow"


class BuiltinPolicy:
    """The policy used when the approval engine is not available: read-only tools are allowed,
    Write, Edit and Bash are asked about, and "always allow" remembers the exact call."""

    def __init__(self) -> None:
        self._session_rules: set[str] = set()
        self._lock = threading.Lock()

    def verdict(self, request: ApprovalRequest) -> PolicyVerdict:
        call = request.call
        if call.name in READ_ONLY:
            return PolicyVerdict("allow", f"{call.name}: allow", f"{call.name} only reads")
        rule = exact_rule(call)
        with self._lock:
            if rule in self._session_rules:
                return PolicyVerdict("allow", rule, "allowed for this session")
        return PolicyVerdict("ask", f"{call.name}: ask", f"{call.name} changes files or runs commands")

    def session_rule(self, call: ToolCall) -> str:
        return exact_rule(call)

    def allow_for_session(self, call: ToolCall) -> str:
        rule = exact_rule(call)
        with self._lock:
            self._session_rules.add(rule)
        return rule


class UiApprover:
    """Implements ``protocol.Approver`` for the app.

    Args:
        policy: decides allow/ask/deny.
        post: posts a Textual message to the app (thread-safe ``App.post_message``).
        sandboxed: whether Bash runs in the sandbox (shown in the modal).
        mode: one of ``APPROVAL_MODES``.
    """

    def __init__(self, policy: UiPolicy, post: Callable[[Any], Any], *, sandboxed: bool = False, mode: str = "policy") -> None:
        self.policy = policy
        self.post = post
        self.sandboxed = sandboxed
        self.mode = mode
        self._pending: set[Future[PersonAnswer]] = set()
        self._lock = threading.Lock()

    def approve(self, request: ApprovalRequest) -> Approval:
        call = request.call
        edited: dict[str, Any] | None = None
        diff = None
        if request.preview is not None:
            diff = FileDiff(request.preview.path, request.preview.before, request.preview.after)
            self.post(CallPreviewed(call, diff))
        for _ in range(MAX_EDITS):
            asked = dataclasses.replace(request, call=call)
            verdict = self.policy.verdict(asked)
            if verdict.kind == "deny":
                by = "floor" if verdict.floor else "rule"
                return Approval("deny", reason=verdict.reason, by=by, rule=verdict.rule, arguments=edited)
            if verdict.kind == "allow":
                return Approval("allow", reason=verdict.reason, by="rule", rule=verdict.rule, arguments=edited)
            if self.mode == "all":
                return Approval("allow", reason="approval mode: all", by="mode", rule="mode: all", arguments=edited)
            if self.mode == "none":
                return Approval("deny", reason=f"{call.name} is not allowed in approval mode 'none'", by="mode", rule="mode: none")
            answer = self._ask(asked, verdict, diff)
            if answer.choice == "once":
                return Approval("allow", reason="allowed once", by="person", rule=verdict.rule, arguments=edited)
            if answer.choice == "always":
                rule = self.policy.allow_for_session(call)
                if not rule:  # no narrow rule is safe for this call: it is allowed this once
                    return Approval("allow", reason="allowed once (no safe rule to store)", by="person", rule=verdict.rule, arguments=edited)
                return Approval("allow", reason="always allowed for this session", by="person", rule=rule, arguments=edited)
            if answer.choice == "deny" or answer.arguments is None:
                return Approval("deny", reason=answer.reason, by="person", rule=verdict.rule)
            edited = dict(answer.arguments)
            call = dataclasses.replace(call, arguments=edited)
        return Approval("deny", reason="too many edits of one call", by="person")

    def _ask(self, request: ApprovalRequest, verdict: PolicyVerdict, diff: FileDiff | None) -> PersonAnswer:
        future: Future[PersonAnswer] = Future()
        with self._lock:
            self._pending.add(future)
        try:
            self.post(ApprovalRequested(request, verdict, self.policy.session_rule(request.call), self.sandboxed, future, diff))
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
