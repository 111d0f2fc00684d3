"""``AcpSink``: the loop's events as ACP session updates (reasoning → ``agent_thought_chunk``,
answer → ``agent_message_chunk``, each call → ``tool_call`` then ``tool_call_update``s (Bash
output as it arrives), usage →
``usage_update``). Runs on the agent's worker thread; the ``Outbox`` carries the updates."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp import schema

from frogtui.acp.outbox import Outbox
from frogtui.acp.updates import ToolCallView, decision_note
from frogtui.agent import events as ev
from frogtui.protocol import ToolCall


class AcpSink:
    """Implements ``protocol.EventSink`` for one ACP session.

    Args:
        outbox: Where updates go.
        root: The repository root (tool call locations are absolute).
        context_size: The context budget in tokens (for ``usage_update``).
    """

    def __init__(self, outbox: Outbox, root: str, context_size: Callable[[], int]) -> None:
        self.outbox = outbox
        self.root = root
        self.context_size = context_size
        self.views: dict[str, ToolCallView] = {}

    def view(self, call: ToolCall) -> ToolCallView:
        """The client's view of ``call`` (made when the call is first seen)."""
        view = self.views.get(call.id)
        if view is None:
            view = self.views[call.id] = ToolCallView(call, self.root)
        return view

    def emit(self, event: Any) -> None:
        send = self.outbox.send
        if isinstance(event, ev.ReasoningDelta):
            self.outbox.text("thought", event.text)
        elif isinstance(event, ev.AnswerDelta):
            self.outbox.text("message", event.text)
        elif isinstance(event, ev.ToolCallProposed):
            send(self.view(event.call).start())
        elif isinstance(event, ev.ApprovalAnswered):
            view = self.view(event.call)
            view.notes.append(decision_note(event.approval))
            send(view.progress())
        elif isinstance(event, ev.ToolStarted):
            send(self.view(event.call).progress("in_progress", with_content=False))
        elif isinstance(event, ev.ToolOutput):
            view = self.view(event.call)
            view.stream(event.text)
            send(view.progress())
        elif isinstance(event, ev.TextRepeated):  # the turn was ended: the editor's person sees why too
            self.outbox.text("message", f"\n\n[frogtui ended this turn: its text kept repeating. {event.note}]\n\n")
        elif isinstance(event, ev.ToolFinished):
            view = self.view(event.call)
            view.set_output(event.observation)
            send(view.progress("completed" if event.ok and event.ran else "failed"))
        elif isinstance(event, ev.StepUsage):
            size = max(self.context_size(), event.context_tokens)
            send(schema.UsageUpdate(session_update="usage_update", used=max(event.context_tokens, 0), size=size))
