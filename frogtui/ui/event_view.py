"""The loop's events on the panes: what each ``agent.events`` event changes in the chat, the trace
and the status bar. Receives the panes it changes, never the app. The status bar's new values are
collected in a dict and set once (``set_status``) per burst of events: each set of one of its reactive
fields redraws the bar, and a step changes them four to six times."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from frogtui.agent import events as ev
from frogtui.ui.chat import ChatPane
from frogtui.ui.status import StatusBar
from frogtui.ui.trace import TracePane, finished_state

TOOL = "tool"
"""The key of ``changes`` that holds the running call's tool (the run state's, not a field of the bar)."""
WRITTEN = "written"
"""The key of ``changes`` that holds the characters the model wrote since the step's last usage:
the context meter moves with them during a turn (about four characters a token), and the step's
``StepUsage`` sets the exact count."""
EVENTS_SLICE_S = 1 / 30
"""The longest the app shows a burst of agent events without letting the screen refresh."""


def changes_files(tool: str) -> bool:
    """Whether the status bar's git state is read again (off the UI thread) after a call of ``tool``
    (its spec mutates)."""
    from frogtui.tools.specs import tool_spec  # the tools come with the first call, after the first paint

    spec = tool_spec(tool)
    return spec is not None and spec.mutates


async def show_events(
    events: list[ev.AgentEvent], chat: ChatPane, trace: TracePane, status: StatusBar, *,
    refresh_git: Callable[[], object], run_ended: Callable[[ev.RunEnded], object], tool: Callable[[str | None], object],
) -> None:
    """Show a burst of the loop's events in order, letting the screen and the timers run at least
    every ``EVENTS_SLICE_S``; ``refresh_git`` after a call that may have changed files (a Read or a
    Glob changes nothing: no git status after it), ``run_ended`` for the end of the run, ``tool``
    with the tool a call runs (None once it finished; the app's run state)."""
    changes: dict[str, object] = {}
    yield_at = time.monotonic() + EVENTS_SLICE_S

    def set_changes() -> None:
        if TOOL in changes:
            tool(changes.pop(TOOL))
        set_status(status, changes)

    for event in events:
        await show_event(event, chat, trace, changes)
        if time.monotonic() > yield_at:
            set_changes()
            await asyncio.sleep(0)
            yield_at = time.monotonic() + EVENTS_SLICE_S
        if isinstance(event, ev.ToolFinished) and event.ran and changes_files(event.call.name):
            refresh_git()
        elif isinstance(event, ev.RunEnded):
            set_changes()
            run_ended(event)
    set_changes()


def show_run_end(chat: ChatPane, event: ev.RunEnded) -> None:
    """The notice below a run that did not end with the model's answer."""
    detail = f": {event.error}" if event.error else ""
    if event.exit_reason == "agent" and not event.final_message.strip():
        chat.add_notice("The model ended without a message (its last turn had no answer and no tool call).", "warning")
    elif event.exit_reason == "cancelled":
        chat.add_notice("Interrupted. Send a message to continue.", "warning")
    elif event.exit_reason == "max_context_len":
        chat.add_notice(f"The conversation is full (max_context_len){detail}. Drafting a hand-off to a fresh one…", "warning")
    elif event.exit_reason != "agent":
        chat.add_notice(f"The run ended ({event.exit_reason}){detail}", "error")


def set_status(status: StatusBar, changes: dict[str, object]) -> None:
    """Set each field of the status bar that ``changes`` names once (the bar redraws once), and
    empty ``changes``."""
    written = changes.pop(WRITTEN, 0)
    for name, value in changes.items():
        setattr(status, name, value)
    if isinstance(written, int) and written:
        status.written_chars += written
    changes.clear()


def _reasoning(event: ev.ReasoningDelta, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    chat.reasoning_delta(event.step, event.text)
    _written(event, changes)


def _answer(event: ev.AnswerDelta, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    chat.answer_delta(event.step, event.text)
    _written(event, changes)


def _written(event: ev.TextDelta, changes: dict[str, object]) -> None:
    written = changes.get(WRITTEN, 0)
    changes[WRITTEN] = (written if isinstance(written, int) else 0) + len(event.text)


def _step_started(event: ev.StepStarted, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    changes["step"], changes["max_steps"] = event.step, event.max_steps
    trace.start_step(event.step)


def _proposed(event: ev.ToolCallProposed, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    trace.add_call(event.step, event.call)


def _answered(event: ev.ApprovalAnswered, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    a = event.approval
    edited = a.arguments is not None and a.arguments != event.call.arguments
    trace.update(
        event.call, decision=a.decision, by=a.by, rule=a.rule, status="allowed" if a.allowed else "denied",
        edited=edited, reason=a.reason, repeat=event.repeat,
    )


def _started(event: ev.ToolStarted, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    trace.update(event.call, status="running")
    changes[TOOL] = event.call.name


def _finished(event: ev.ToolFinished, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    trace.update(
        event.call, status=finished_state(event), duration_s=event.duration_s if event.ran else None,
        exit_code=event.exit_code, observation=event.observation,
    )
    changes[TOOL] = None


def _usage(event: ev.StepUsage, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    changes.pop(WRITTEN, None)
    changes["written_chars"] = 0
    changes["context_used"], changes["session_tokens"] = event.context_tokens, event.session_tokens
    if event.budget:
        changes["context_size"] = event.budget
    if event.usage.generated_tokens:
        changes["tok_s"] = event.usage.gen_tok_s


def _handed_off(event: ev.HandedOff, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    changes["context_used"], changes["written_chars"] = 0, 0
    chat.add_notice("Hand-off: a fresh conversation starts with the message below (the session, its checkpoints and review go on).")
    chat.add_user(event.text)


def _repeated(event: ev.TextRepeated, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    chat.add_notice(f"The turn was ended: its text kept repeating. The model is told: {event.note}", "warning")


SHOW: dict[type, Callable[..., None]] = {
    ev.ReasoningDelta: _reasoning, ev.AnswerDelta: _answer, ev.StepStarted: _step_started, ev.ToolCallProposed: _proposed,
    ev.ApprovalAnswered: _answered, ev.ToolStarted: _started, ev.ToolFinished: _finished, ev.StepUsage: _usage,
    ev.HandedOff: _handed_off, ev.TextRepeated: _repeated,
}
"""What each kind of event changes (by its exact class: one look-up, not a chain of isinstance)."""
ENDS_TURN = (ev.AssistantTurnEnded, ev.RunEnded)
"""A turn the model never ended (its server failed) shows its text, reasoning folded, above the notice of the run's end."""


async def show_event(event: ev.AgentEvent, chat: ChatPane, trace: TracePane, changes: dict[str, object]) -> None:
    """Show ``event`` (``RunEnded`` is the app's: it ends the run; here the step's text is shown);
    the status bar's new values go into ``changes`` (``set_status`` shows them)."""
    show = SHOW.get(type(event))
    if show is not None:
        show(event, chat, trace, changes)
    elif isinstance(event, ENDS_TURN):
        await chat.end_turn()
    if isinstance(event, ev.CallEvent):  # the call's line in the chat
        await chat.show_call(trace.entries[event.call.id])
