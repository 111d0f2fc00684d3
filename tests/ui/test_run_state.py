"""The app's run state (``ui/run_state.py``) on its own, without Textual: every transition and what
it tells the app to do."""
from __future__ import annotations

from frogtui.ui.run_state import (
    QUIT_WINDOW_S,
    Attempts,
    Hold,
    Interrupt,
    KeepConversation,
    Nothing,
    NotStarted,
    OfferHandoff,
    Phase,
    Queue,
    Quit,
    Refuse,
    RunState,
    SendNext,
    ShowError,
    Start,
    WarnQuit,
)


def ready() -> RunState:
    return RunState().session_wired().state.model_loaded().state


def running(text: str = "fix it") -> RunState:
    return ready().submitted(text).state


def test_the_module_needs_no_textual() -> None:
    import frogtui.ui.run_state as run_state

    with open(run_state.__file__, encoding="utf-8") as file:
        source = file.read()
    assert "import textual" not in source and "from textual" not in source


def test_loading_until_both_the_session_and_the_model_are_ready_in_either_order() -> None:
    state = RunState()
    assert (state.phase, state.label, state.busy) == (Phase.LOADING, "loading", False)
    wired = state.session_wired().state
    assert wired.phase is Phase.LOADING
    assert wired.model_loaded().state.phase is Phase.READY
    loaded = state.model_loaded().state
    assert loaded.phase is Phase.LOADING
    assert loaded.session_wired().state.phase is Phase.READY
    assert loaded.session_wired().state.label == "ready"


def test_a_message_before_the_model_is_ready_waits_then_starts() -> None:
    step = RunState().session_wired().state.submitted("fix it")
    assert step.action == Hold("fix it") and step.state.pending == "fix it" and step.state.phase is Phase.LOADING
    second = step.state.submitted("and then this")
    assert second.action == Queue("and then this") and second.state.pending == "fix it"
    started = second.state.model_loaded()
    assert started.action == Start("fix it") and started.state.phase is Phase.RUNNING
    assert started.state.pending is None and started.state.run_text == "fix it" and started.state.busy


def test_a_message_when_ready_starts_a_run_and_enter_on_the_empty_prompt_sends_the_queue() -> None:
    step = ready().submitted("fix it")
    assert step.action == Start("fix it") and step.state.label == "working"
    assert ready().submitted("").action == SendNext(after_interrupt=False)
    assert RunState().submitted("").action == Nothing()


def test_a_message_while_running_is_queued_and_while_interrupting_goes_first() -> None:
    state = running()
    assert state.submitted("also this") == state.submitted("also this")  # no change of state
    step = state.submitted("also this")
    assert step.action == Queue("also this", first=False) and step.state == state
    assert state.submitted("").action == Nothing()
    stopping = state.interrupt().state
    assert stopping.submitted("do this instead").action == Queue("do this instead", first=True)


def test_esc_stops_a_run_and_again_while_interrupting_and_does_nothing_when_idle() -> None:
    step = running().tool_started("Bash").state.asked(True).state.interrupt()
    assert step.action == Interrupt() and step.state.phase is Phase.INTERRUPTING
    assert step.state.label == "interrupting" and step.state.interrupting and step.state.busy and not step.state.asking
    again = step.state.interrupt()
    assert again.action == Interrupt() and again.state.phase is Phase.INTERRUPTING
    assert ready().interrupt().action == Nothing() and RunState().interrupt().action == Nothing()


def test_ctrl_c_twice_within_the_window_quits() -> None:
    first = ready().ctrl_c(100.0)
    assert first.action == WarnQuit()
    assert first.state.ctrl_c(100.0 + QUIT_WINDOW_S / 2).action == Quit()
    late = first.state.ctrl_c(100.0 + QUIT_WINDOW_S + 0.1)
    assert late.action == WarnQuit()
    assert late.state.ctrl_c(100.0 + QUIT_WINDOW_S + 0.2).action == Quit()
    assert running().ctrl_c(5.0).state.phase is Phase.RUNNING  # the run goes on until the second


def test_the_status_label_follows_the_run() -> None:
    state = running()
    assert state.tool_started("Bash").state.label == "running Bash"
    assert state.tool_started("Bash").state.tool_finished().state.label == "working"
    assert state.asked(True).state.label == "waiting for you"
    assert state.asked(True).state.asked(False).state.label == "working"
    assert ready().asked(True).state.label == "ready"


def test_a_run_that_ends_sends_the_next_queued_message() -> None:
    state = running().run_ended("agent").state
    assert state.last_exit_reason == "agent" and state.busy
    step = state.worker_ended("done")
    assert step.action == SendNext(after_interrupt=False) and step.state.phase is Phase.READY
    stopped = running().interrupt().state.run_ended("cancelled").state.worker_ended("done")
    assert stopped.action == SendNext(after_interrupt=True) and stopped.state.label == "ready"


def test_a_run_that_fills_its_context_offers_the_hand_off_and_the_queue_waits() -> None:
    step = running().run_ended("max_context_len").state.worker_ended("done")
    assert step.action == OfferHandoff("max_context_len") and step.state.phase is Phase.AWAITING_HANDOFF
    assert step.state.label == "ready" and not step.state.busy
    waiting = step.state.submitted("next thing")
    assert waiting.action == Queue("next thing") and waiting.state.phase is Phase.AWAITING_HANDOFF
    handed = step.state.handoff_answered("the hand-off text")
    assert handed.action == Start("the hand-off text", handoff=True) and handed.state.phase is Phase.RUNNING
    assert handed.state.last_exit_reason is None
    kept = step.state.handoff_answered(None)
    assert kept.action == KeepConversation() and kept.state.phase is Phase.READY


def test_the_palettes_hand_off_only_between_runs() -> None:
    step = ready().handoff_requested()
    assert step.action == OfferHandoff("requested") and step.state.phase is Phase.AWAITING_HANDOFF
    assert running().handoff_requested().action == Nothing()


def test_esc_before_the_loop_started_gives_the_message_back() -> None:
    step = running("hello there").interrupt().state.worker_ended("not started")
    assert step.action == NotStarted("hello there") and step.state.phase is Phase.READY
    assert step.state.last_exit_reason == "cancelled"


def test_a_worker_error_is_shown_and_the_app_waits() -> None:
    step = running().worker_ended("error")
    assert step.action == ShowError() and step.state.phase is Phase.READY


def test_load_failure_refuses_messages_then_a_retry_loads() -> None:
    failed = RunState().session_wired().state.submitted("fix it").state.load_failed("no such file")
    state = failed.state
    assert (state.phase, state.label, state.error, state.pending) == (Phase.FAILED, "no model", "no such file", None)
    assert state.submitted("fix it").action == Refuse("Nothing can run; see the message above.")
    assert state.submitted("/attempts 2 x", attempts=True).action == Refuse("The model is not ready yet.", "warning")
    assert state.interrupt().action == Nothing()
    retry = state.loading().state
    assert retry.phase is Phase.LOADING and retry.failure is None and retry.label == "loading"
    assert retry.submitted("fix it").action == Hold("fix it")
    assert retry.submitted("fix it").state.model_loaded().action == Start("fix it")


def test_a_setup_failure_is_not_retried_as_a_load() -> None:
    state = RunState().setup_failed("bad rules").state
    assert (state.phase, state.label, state.error) == (Phase.FAILED, "no policy", "bad rules")
    assert state.loading().state == state
    assert state.model_loaded().state.phase is Phase.FAILED  # the model loads; nothing runs


def test_attempts_start_only_when_ready_and_busy_the_app_until_they_end() -> None:
    assert ready().submitted("/attempts 2 x", attempts=True).action == Attempts()
    state = ready().attempts_started().state
    assert state.busy and state.label == "working"
    assert state.submitted("later").action == Queue("later")
    stopping = state.interrupt()
    assert stopping.action == Interrupt() and stopping.state.label == "interrupting"
    assert stopping.state.attempts_finished().state.phase is Phase.READY
    assert state.attempts_finished().state.phase is Phase.READY
    assert running().attempts_started().state.phase is Phase.RUNNING


def test_a_new_task_prepares_again_keeping_the_model() -> None:
    state = running().run_ended("agent").state.worker_ended("done").state.preparing().state
    assert state.phase is Phase.LOADING and not state.wired and state.model_ready and state.last_exit_reason is None
    assert state.session_wired().state.phase is Phase.READY
    assert running().preparing().state.phase is Phase.RUNNING  # never while a run goes
    failed = RunState().session_wired().state.load_failed("no such file").state.preparing().state
    assert failed.phase is Phase.FAILED and failed.label == "no model" and not failed.wired
    assert failed.submitted("fix it").action == Refuse("Nothing can run; see the message above.")


def test_closed_shows_and_starts_nothing() -> None:
    state = running().closing().state
    assert state.closed and not state.busy
    assert state.worker_ended("done").action == Nothing()
    assert state.submitted("x").action == Nothing()
    assert state.start("x").action == Nothing()


def test_start_only_between_runs() -> None:
    assert ready().start("queued one").action == Start("queued one")
    assert running().start("queued one").action == Nothing()
    assert RunState().start("queued one").action == Nothing()
