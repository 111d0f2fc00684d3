"""The loop's events on the panes: what each ``agent.events`` event changes in the chat, the trace
and the status bar. Receives the panes it changes, never the app."""
from __future__ import annotations

from frogtui.agent import events as ev
from frogtui.ui.chat import ChatPane
from frogtui.ui.status import StatusBar
from frogtui.ui.trace import TracePane, finished_state


async def show_event(event: ev.AgentEvent, chat: ChatPane, trace: TracePane, status: StatusBar) -> None:
    """Show ``event`` (``RunEnded`` is the app's: it ends the run; here the step's text is shown)."""
    if isinstance(event, ev.ReasoningDelta):
        chat.reasoning_delta(event.step, event.text)
    elif isinstance(event, ev.AnswerDelta):
        chat.answer_delta(event.step, event.text)
    elif isinstance(event, ev.StepStarted):
        status.step, status.max_steps = event.step, event.max_steps
        trace.start_step(event.step)
    elif isinstance(event, ev.ToolCallProposed):
        trace.add_call(event.step, event.call)
    elif isinstance(event, ev.ApprovalAnswered):
        a = event.approval
        edited = a.arguments is not None and a.arguments != event.call.arguments
        trace.update(
            event.call,
            decision=a.decision,
            by=a.by,
            rule=a.rule,
            status="allowed" if a.allowed else "denied",
            edited=edited,
            reason=a.reason,
            repeat=event.repeat,
        )
    elif isinstance(event, ev.ToolStarted):
        trace.update(event.call, status="running")
        status.state = f"running {event.call.name}"
    elif isinstance(event, ev.ToolFinished):
        trace.update(
            event.call,
            status=finished_state(event),
            duration_s=event.duration_s if event.ran else None,
            exit_code=event.exit_code,
            observation=event.observation,
        )
        status.state = "working"
    elif isinstance(event, ev.StepUsage):
        status.context_used, status.session_tokens = event.context_tokens, event.session_tokens
        if event.budget:
            status.context_size = event.budget
        if event.usage.generated_tokens:
            status.tok_s = event.usage.gen_tok_s
    elif isinstance(event, ev.HandedOff):
        status.context_used = 0
        chat.add_notice("Hand-off: a fresh conversation starts with the message below (the session, its checkpoints and review go on).")
        chat.add_user(event.text)
    elif isinstance(event, (ev.AssistantTurnEnded, ev.RunEnded)):  # a turn the model never ended (its server
        await chat.end_turn()  # failed) shows its text, reasoning folded, above the notice of the run's end
    if isinstance(event, ev.CallEvent):  # the call's line in the chat
        await chat.show_call(trace.entries[event.call.id])
