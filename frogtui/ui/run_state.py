"""The app's run state: one plain value (no Textual) that says where the session stands (loading,
ready, running, interrupting, awaiting a hand-off, running attempts, failed, closed) and decides
what each thing that happens does: a message sent, Esc, Ctrl+C, a run's end, the model loaded or
not. Each transition returns the next state and the ``Action`` the app carries out; the app holds
the state in one reactive (``SessionApp.run_state``) and the status bar draws it (``label``).

The state is immutable: a transition is ``state.submitted(text)`` → ``Transition(state, action)``,
and the app assigns ``transition.state`` (the reactive sees the change and redraws).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal

QUIT_WINDOW_S = 2.0
"""A second Ctrl+C within this many seconds quits."""

Failure = Literal["no model", "no policy"]
"""Why nothing can run: the model did not load, or the session's rules are not valid."""
Outcome = Literal["done", "not started", "error"]
"""How the run's worker ended: its loop ran (``RunEnded`` was shown), Esc came before the loop
started, or the worker raised."""


class Phase(Enum):
    LOADING = "loading"
    """The session is being prepared or the model is loading: a message waits for both."""
    READY = "ready"
    RUNNING = "running"
    """The agent's run goes: a message is queued."""
    INTERRUPTING = "interrupting"
    """Esc was pressed during the run (or the attempts): a message sent now goes first, at once."""
    AWAITING_HANDOFF = "awaiting hand-off"
    """The hand-off is being drafted or edited: messages are queued until the person answers."""
    ATTEMPTS = "attempts"
    """``/attempts N TASK`` runs: a message is queued."""
    FAILED = "failed"
    """The model did not load or the rules are not valid (``failure``): nothing can run."""
    CLOSED = "closed"
    """The app has saved the session and is leaving: nothing more is shown or started."""


BUSY = (Phase.RUNNING, Phase.INTERRUPTING, Phase.ATTEMPTS)


# what the app does ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Nothing:
    """Nothing to do."""


@dataclass(frozen=True)
class Start:
    """Start a run with ``text`` (``handoff``: as the fresh conversation of a hand-off)."""

    text: str
    handoff: bool = False


@dataclass(frozen=True)
class Queue:
    """Add ``text`` to the queue (``first``: typed after Esc, it goes first, at once)."""

    text: str
    first: bool = False


@dataclass(frozen=True)
class Hold:
    """The run starts with ``text`` once the model is loaded and the session prepared."""

    text: str


@dataclass(frozen=True)
class Refuse:
    """Nothing can take the message now: it goes back in the prompt, and the person reads ``why``."""

    why: str
    severity: Literal["warning", "error"] = "error"


@dataclass(frozen=True)
class Attempts:
    """Start the attempts the message asks for (the check confirmed first)."""


@dataclass(frozen=True)
class SendNext:
    """Send the next queued message (``after_interrupt``: only one typed after Esc)."""

    after_interrupt: bool = False


@dataclass(frozen=True)
class Interrupt:
    """Stop generation or the running command (and the attempts); a waiting question is denied."""


@dataclass(frozen=True)
class WarnQuit:
    """Say that Ctrl+C again quits."""


@dataclass(frozen=True)
class Quit:
    """Stop the run, save the session, leave."""


@dataclass(frozen=True)
class NotStarted:
    """Esc came before the run's loop started: ``text`` was not sent (back in the prompt or the queue)."""

    text: str


@dataclass(frozen=True)
class ShowError:
    """The run's worker failed: say so, then wait for the person."""


@dataclass(frozen=True)
class OfferHandoff:
    """Draft the hand-off (``ended``: ``max_context_len`` or ``requested``) for the person to edit."""

    ended: str


@dataclass(frozen=True)
class KeepConversation:
    """The person declined the hand-off: say so and send the next queued message."""


Action = (Nothing | Start | Queue | Hold | Refuse | Attempts | SendNext | Interrupt | WarnQuit | Quit | NotStarted | ShowError
          | OfferHandoff | KeepConversation)

NOTHING = Nothing()


@dataclass(frozen=True)
class Transition:
    state: RunState
    action: Action = field(default=NOTHING)


# the state -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunState:
    """Where the app's session stands; every field is read by the transitions below."""

    phase: Phase = Phase.LOADING
    model_ready: bool = False
    """The model is loaded (it stays loaded across new tasks)."""
    wired: bool = False
    """The session is prepared (policy, sandbox, checkpoints): a run may start."""
    failure: Failure | None = None
    error: str = ""
    """With ``failure``: the one-line reason."""
    pending: str | None = None
    """A task sent before the model was ready; it starts when the model and the session are."""
    run_text: str = ""
    """The message the current (or last) run was started with."""
    tool: str | None = None
    """The tool the run's current call runs (None between calls)."""
    asking: bool = False
    """A question of the run waits for the person."""
    last_exit_reason: str | None = None
    """How the last run ended (``agent``, ``cancelled``, ``max_context_len``...), None while one runs."""
    last_ctrl_c: float = -1e9
    """When Ctrl+C was last pressed."""

    # what the status bar and the app read ----------------------------------------------------
    @property
    def busy(self) -> bool:
        """A run (or the attempts) goes."""
        return self.phase in BUSY

    @property
    def interrupting(self) -> bool:
        return self.phase is Phase.INTERRUPTING

    @property
    def closed(self) -> bool:
        return self.phase is Phase.CLOSED

    @property
    def label(self) -> str:
        """The status bar's word for the state."""
        if self.phase is Phase.FAILED:
            return self.failure or "failed"
        if self.phase is Phase.RUNNING:
            return "waiting for you" if self.asking else f"running {self.tool}" if self.tool else "working"
        if self.phase is Phase.ATTEMPTS:
            return "working"
        if self.phase in (Phase.READY, Phase.AWAITING_HANDOFF):
            return "ready"
        return self.phase.value

    def _to(self, phase: Phase, action: Action = NOTHING, **changes: object) -> Transition:
        return Transition(replace(self, phase=phase, **changes), action)  # type: ignore[arg-type]

    def _stay(self, action: Action = NOTHING, **changes: object) -> Transition:
        return Transition(replace(self, **changes), action)  # type: ignore[arg-type]

    # the session and the model -----------------------------------------------------------------
    def preparing(self) -> Transition:
        """The session is (re)prepared (a new task): nothing wired, nothing pending, no run yet. A
        model that did not load still did not: nothing runs (``loading`` loads it again)."""
        if self.busy or self.closed:
            return self._stay()
        if self.phase is Phase.FAILED:
            return self._stay(wired=False, pending=None, last_exit_reason=None)
        return self._to(Phase.LOADING, wired=False, pending=None, last_exit_reason=None)

    def switching_model(self) -> Transition:
        """``/model SPEC``: a new session on another model: nothing wired, no model, loading again
        (from ready or a failure; not while a run goes)."""
        if self.busy or self.closed:
            return self._stay()
        return self._to(Phase.LOADING, wired=False, model_ready=False, pending=None, last_exit_reason=None, failure=None, error="")

    def session_wired(self) -> Transition:
        return self._replace_ready(wired=True)

    def model_loaded(self) -> Transition:
        return self._replace_ready(model_ready=True)

    def _replace_ready(self, **changes: object) -> Transition:
        state = replace(self, **changes)  # type: ignore[arg-type]
        if state.phase is not Phase.LOADING or not (state.model_ready and state.wired):
            return Transition(state)
        if state.pending is not None:
            return state._start(state.pending)
        return Transition(replace(state, phase=Phase.READY))

    def setup_failed(self, error: str) -> Transition:
        """The session could not be prepared (its rules): nothing will run."""
        return self._to(Phase.FAILED, failure="no policy", error=error, pending=None)

    def load_failed(self, error: str) -> Transition:
        """The model could not be loaded: nothing will run."""
        return self._to(Phase.FAILED, failure="no model", error=error, pending=None, model_ready=False)

    def loading(self) -> Transition:
        """The model is loaded again after it failed (the session stays prepared)."""
        if self.phase is not Phase.FAILED or self.failure != "no model":
            return self._stay()
        return self._to(Phase.LOADING, failure=None, error="")

    # the person ----------------------------------------------------------------------------------
    def submitted(self, text: str, *, attempts: bool = False) -> Transition:
        """The person sent ``text`` ('' for Enter on the empty prompt); ``attempts``: it is an
        ``/attempts`` command."""
        if self.busy or self.phase is Phase.AWAITING_HANDOFF:
            return self._stay(Queue(text, first=self.interrupting) if text else NOTHING)
        if self.phase is Phase.CLOSED:
            return self._stay()
        if not text:
            return self._stay(SendNext() if self.phase is Phase.READY else NOTHING)
        if attempts:
            if self.phase is Phase.READY:
                return self._stay(Attempts())
            return self._stay(Refuse("The model is not ready yet.", "warning"))
        if self.phase is Phase.FAILED:
            return self._stay(Refuse("Nothing can run; see the message above."))
        if self.phase is Phase.LOADING:
            if self.pending is not None:  # the second waits in the queue, after the first's run
                return self._stay(Queue(text))
            return self._stay(Hold(text), pending=text)
        return self._start(text)

    def start(self, text: str, *, handoff: bool = False) -> Transition:
        """Start a run with ``text`` (a queued message, the hand-off), when none goes."""
        if self.phase not in (Phase.READY, Phase.AWAITING_HANDOFF):
            return self._stay()
        return self._start(text, handoff=handoff)

    def _start(self, text: str, *, handoff: bool = False) -> Transition:
        return self._to(Phase.RUNNING, Start(text, handoff), run_text=text, pending=None, tool=None, asking=False,
                        last_exit_reason=None)

    def interrupt(self) -> Transition:
        """Esc: stop the run or the attempts (again while interrupting: a question asked meanwhile is denied too)."""
        if not self.busy:
            return self._stay()
        return self._to(Phase.INTERRUPTING, Interrupt(), asking=False)

    def ctrl_c(self, now: float) -> Transition:
        """Ctrl+C: twice within ``QUIT_WINDOW_S`` quits."""
        if now - self.last_ctrl_c > QUIT_WINDOW_S:
            return self._stay(WarnQuit(), last_ctrl_c=now)
        return self._stay(Quit(), last_ctrl_c=now)

    # the run -----------------------------------------------------------------------------------
    def tool_started(self, name: str) -> Transition:
        return self._stay(tool=name)

    def tool_finished(self) -> Transition:
        return self._stay(tool=None)

    def asked(self, asking: bool) -> Transition:
        """A question of the run waits for the person (``asking``), or was answered."""
        return self._stay(asking=asking and self.phase is Phase.RUNNING)

    def run_ended(self, exit_reason: str) -> Transition:
        """The run's end was shown (its worker may still save it)."""
        return self._stay(last_exit_reason=exit_reason, tool=None, asking=False)

    def worker_ended(self, outcome: Outcome) -> Transition:
        """The run's worker ended: what comes next (the queue, the hand-off, the error)."""
        if self.phase not in (Phase.RUNNING, Phase.INTERRUPTING):
            return self._stay()
        done = {"tool": None, "asking": False}
        if outcome == "not started":
            return self._to(Phase.READY, NotStarted(self.run_text), last_exit_reason="cancelled", **done)
        if outcome == "error":
            return self._to(Phase.READY, ShowError(), **done)
        if self.last_exit_reason == "max_context_len":  # the queue waits until the person has answered
            return self._to(Phase.AWAITING_HANDOFF, OfferHandoff("max_context_len"), **done)
        return self._to(Phase.READY, SendNext(after_interrupt=self.last_exit_reason == "cancelled"), **done)

    def handoff_requested(self) -> Transition:
        """The palette's Hand off, between runs: draft it for the person."""
        if self.phase is not Phase.READY:
            return self._stay()
        return self._to(Phase.AWAITING_HANDOFF, OfferHandoff("requested"))

    def handoff_answered(self, text: str | None) -> Transition:
        """The person edited the hand-off (``text``: start it) or kept the conversation (None)."""
        if self.phase is not Phase.AWAITING_HANDOFF:
            return self._stay()
        if text is None:
            return self._to(Phase.READY, KeepConversation())
        return self._start(text, handoff=True)

    def attempts_started(self) -> Transition:
        if self.phase is not Phase.READY:
            return self._stay()
        return self._to(Phase.ATTEMPTS, tool=None, asking=False)

    def attempts_finished(self) -> Transition:
        if self.phase not in (Phase.ATTEMPTS, Phase.INTERRUPTING):
            return self._stay()
        return self._to(Phase.READY)

    def closing(self) -> Transition:
        """The session is saved and the app leaves: nothing more is shown or started."""
        return self._to(Phase.CLOSED, tool=None, asking=False)
