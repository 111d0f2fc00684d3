"""Saving the trace beside the session's trajectory, and rebuilding the chat and trace from a
saved session (``frogtui --resume``): plain data in, panes out."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the session's modules are imported with it, after the first paint
    from frogtui.agent.saved import Conversation
    from frogtui.session import Session
    from frogtui.ui.chat import ChatPane
    from frogtui.ui.status import StatusBar
    from frogtui.ui.trace import TracePane

TRACE_FILE = "trace.json"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _same(value: Any) -> Any:
    return value


ROW_FIELDS: dict[str, Callable[[Any], Any]] = {
    "status": _text,
    "decision": _text,
    "by": _text,
    "rule": _text,
    "duration_s": _same,
    "exit_code": _same,
    "observation": _text,
    "reason": _text,
    "edited": bool,
    "repeat": _text,
    "undone": bool,
}
"""The fields of a trace row kept in ``trace.json`` beside step, id, tool and arguments, each with
how a saved value is read back (the file may be hand-edited or truncated)."""


def save_trace(session: Session, trace: TracePane) -> None:
    """Write the trace rows (decision, who, duration, exit code, observation) to the session."""
    from frogtui.agent.trajectory import write_json_atomic

    rows = [
        {
            "step": e.step,
            "id": e.call.id,
            "tool": e.call.name,
            "arguments": e.call.arguments,
            **{name: getattr(e, name) for name in ROW_FIELDS},
        }
        for e in trace.entries.values()
    ]
    write_json_atomic(session.folder / TRACE_FILE, {"calls": rows}, indent=None)  # on the UI thread: json's C encoder


def load_trace(session: Session) -> list[dict[str, Any]]:
    """The saved trace rows, or [] when there are none (or the file is unreadable)."""
    try:
        data = json.loads((session.folder / TRACE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = data.get("calls") if isinstance(data, dict) else None
    return [r for r in rows or [] if isinstance(r, dict) and isinstance(r.get("id"), str)]


def split_rewind_notes(text: str) -> tuple[int, str]:
    """A user message the session core prefixed with what undo rewound: (how many rewinds it
    tells, what the person typed). (0, text) for a message without such a prefix."""
    from frogtui.vcs.checkpoints import REWIND_MESSAGE_START  # git is imported after the first paint

    if not text.startswith(REWIND_MESSAGE_START):
        return 0, text
    notes, _, typed = text.partition("\n\n")
    return notes.count(REWIND_MESSAGE_START), typed


def restore_view(chat: ChatPane, trace: TracePane, status: StatusBar, saved: Conversation, rows: list[dict[str, Any]],
                 notices: list[str] | None = None, earlier: Sequence[Conversation] = ()) -> int:
    """Show a saved conversation (``saved``, read by ``agent.saved``) and its trace ``rows``
    (``load_trace``): the person's messages, the answers (reasoning folded) each followed by the
    lines of its tool calls, and the trace. The ``earlier`` conversations of the session (before
    hand-offs, oldest first) come first. What undo told the model at the start of a message is
    shown as the notice the live session showed (``notices``, ``Session.notices``), not as typed
    text. Returns the number of steps of ``saved``."""
    from frogtui.protocol import ToolCall

    kept = list(notices or [])
    for row in rows:
        call = ToolCall(id=row["id"], name=str(row.get("tool", "")), arguments=dict(row.get("arguments") or {}))
        trace.add_call(int(row.get("step") or 0), call)
        trace.update(call, **{name: read(row.get(name)) for name, read in ROW_FIELDS.items()})
    step = 0
    for number, conversation in enumerate([*earlier, saved]):
        if number:
            chat.add_notice(f"Hand-off: conversation {number + 1} started with the message below.")
        step = _show_messages(chat, trace, conversation, step, kept)
    status.step = saved.last_step
    status.context_used = saved.context_tokens
    status.session_tokens = saved.session_tokens
    return len(saved.steps)


def _show_messages(chat: ChatPane, trace: TracePane, saved: Conversation, step: int, kept: list[str]) -> int:
    """Show one conversation's messages; ``step`` counts the assistant turns shown before; the
    undo notices still to show are taken from ``kept``."""
    for message in saved.messages:
        if message.role == "user":
            rewinds, typed = split_rewind_notes(message.typed)
            for _ in range(rewinds):
                chat.add_notice(kept.pop(0) if kept else "Files were rewound to a checkpoint (undo) before this message.")
            chat.add_user(typed)
        elif message.role == "assistant":
            step += 1
            chat.add_assistant_text(step, message.text, message.reasoning)
            for call in message.calls:
                if call.id in trace.entries:
                    chat.add_call_line(trace.entries[call.id])
    return step
