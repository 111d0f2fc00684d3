"""The app's way to ask a person, for the gate (``approval.Approver``'s ``ask`` and ``show``): a modal.

``ModalAsk.ask`` runs on the agent's worker thread. It posts an ``ApprovalRequested`` message
carrying a ``Future`` and blocks on it; the app shows the modal and sets the result.
``cancel_pending`` (interrupt, quit) answers every waiting future with a denial.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from frogtui.tools.effects import BIG, Effect
from frogtui.tools.observations import INTERRUPTED
from frogtui.ui.messages import ApprovalRequested, CallPreviewed

if TYPE_CHECKING:  # the policy is imported with the session, after the first paint
    from frogtui.approval import PersonAnswer, Question
    from frogtui.protocol import ApprovalRequest, Preview
    from frogtui.ui.diffmodel import FileDiff
    from frogtui.vcs.hunks import FileChange



class ModalAsk:
    """Asks the person with the approval modal (one agent thread at a time).

    Args:
        post: posts a Textual message to the app (thread-safe ``App.post_message``).
        sandboxed: whether Bash runs in the sandbox (shown in the modal).
    """

    def __init__(self, post: Callable[[Any], Any], *, sandboxed: bool = False) -> None:
        self.post = post
        self.sandboxed = sandboxed
        self._shown: tuple[Preview, FileDiff] | None = None
        """The last Write/Edit change shown (its diff goes with the question about it)."""
        self._pending: set[Future[PersonAnswer]] = set()
        self._lock = threading.Lock()

    def show(self, request: ApprovalRequest) -> None:
        """Show a Write/Edit call's change in the trace, whether or not the person is asked."""
        assert request.preview is not None
        from frogtui.ui.diffmodel import FileDiff  # pygments, on the agent's thread

        diff = FileDiff(request.preview.path, request.preview.before, request.preview.after)
        self._shown = (request.preview, diff)
        self.post(CallPreviewed(request.call, diff))

    def ask(self, question: Question) -> PersonAnswer:
        """Post the question and wait for the modal's answer (or ``cancel_pending``)."""
        request = question.request
        diff = self._shown[1] if self._shown is not None and request.preview is self._shown[0] else None
        effects, output, unlisted = proposal_view(question)
        future: Future[PersonAnswer] = Future()
        with self._lock:
            self._pending.add(future)
        try:
            self.post(ApprovalRequested(request, question.decision, question.session_rule, self.sandboxed, future, diff, effects, output,
                                        unlisted))
            return future.result()
        finally:
            with self._lock:
                self._pending.discard(future)

    def cancel_pending(self, reason: str = INTERRUPTED) -> int:
        """Answer every waiting question with a denial (thread-safe). Returns how many there were."""
        with self._lock:
            pending = list(self._pending)
        if pending:
            from frogtui.approval import PersonAnswer  # loaded: a question was asked

            for future in pending:
                if not future.done():
                    future.set_result(PersonAnswer("deny", reason=reason))
        return len(pending)


def by_hunks(effect: Effect) -> bool:
    """Whether a person can take ``effect`` hunk by hunk: a new or changed text file (a binary, a
    big file, a deletion, a rename, a mode change or a link is taken whole)."""
    after, before = effect.after, effect.before
    return (effect.kind in ("modified", "added") and after is not None and after.kind == "file" and not effect.binary
            and not effect.big and (before is None or (before.kind == "file" and before.size < BIG)))


MODAL_EFFECTS = 200
"""Effects the modal shows one by one (with their diffs) at most; the rest are counted."""


def proposal_view(question: Question) -> tuple[tuple[tuple[str, str, FileDiff | FileChange | None], ...], str, tuple[str, ...]]:
    """A proposal's effects for the modal (each line, and a text file's diff: built here, on the
    agent's thread; a new or changed text file's as the review's hunks, to take one by one
    (``proposal_hunks``); ignored paths that run nothing later grouped by folder with counts; past
    ``MODAL_EFFECTS``, counted), the command's output, and the paths shown only in a group line;
    nothing for another question."""
    proposal = question.proposal
    if proposal is None:
        return (), "", ()
    from frogtui.approval.proposals import for_a_person
    from frogtui.terminal_text import name_drawn
    from frogtui.tools.proposals import effect_texts
    from frogtui.ui.diffmodel import FileDiff
    from frogtui.ui.proposal_hunks import hunk_change

    effects: list[tuple[str, str, FileDiff | FileChange | None]] = []
    shown, groups, unlisted = for_a_person(question.judged, MODAL_EFFECTS)
    for judged in shown:
        effect = judged.effect
        texts = effect_texts(proposal, effect.path, effect.source) if effect.kind not in ("mode", "special") and not effect.is_dir else None
        diff: FileDiff | FileChange | None = None
        if texts is not None and texts != (None, None) and (effect.after is None or effect.after.kind == "file"):
            before, after = texts
            if after is not None and by_hunks(effect):
                diff = hunk_change(effect.path, before, after)
            if diff is None:
                diff = FileDiff(name_drawn(effect.path), before, after or "")  # the header draws the name on one line
        effects.append((effect.path, judged.line(), diff))
    effects.extend(("", line, None) for line in groups)
    return tuple(effects), proposal.result.observation, tuple(unlisted)
