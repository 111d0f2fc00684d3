"""Saving the trace beside the session's trajectory, and rebuilding the chat and trace from a
saved session (``frogtui --resume``)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from frogtui.agent.trajectory import write_json_atomic
from frogtui.protocol import ToolCall
from frogtui.session import Session

if TYPE_CHECKING:
    from frogtui.ui.app import FrogApp
    from frogtui.ui.trace import TracePane

TRACE_FILE = "trace.json"


def save_trace(session: Session, trace: TracePane) -> None:
    """Write the trace rows (decision, who, duration, exit code, observation) to the session."""
    rows = [
        {
            "step": e.step,
            "id": e.call.id,
            "tool": e.call.name,
            "arguments": e.call.arguments,
            "status": e.status,
            "decision": e.decision,
            "by": e.by,
            "rule": e.rule,
            "duration_s": e.duration_s,
            "exit_code": e.exit_code,
            "observation": e.observation,
            "reason": e.reason,
            "edited": e.edited,
        }
        for e in trace.entries.values()
    ]
    write_json_atomic(session.folder / TRACE_FILE, {"calls": rows})


def load_trace(session: Session) -> list[dict[str, Any]]:
    """The saved trace rows, or [] when there are none (or the file is unreadable)."""
    try:
        data = json.loads((session.folder / TRACE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = data.get("calls") if isinstance(data, dict) else None
    return [r for r in rows or [] if isinstance(r, dict) and isinstance(r.get("id"), str)]


def saved_call_ids(message: dict[str, Any]) -> list[str]:
    """The ids of the tool calls of a saved assistant message (``tool_calls[].id``)."""
    calls = message.get("tool_calls")
    return [c["id"] for c in calls if isinstance(c, dict) and isinstance(c.get("id"), str)] if isinstance(calls, list) else []


def restore_view(app: FrogApp, saved: dict[str, Any]) -> None:
    """Show a saved conversation: the person's messages, the answers (reasoning folded) each
    followed by the lines of its tool calls, and the trace."""
    chat, trace = app.chat, app.trace
    for row in load_trace(app.session):
        call = ToolCall(id=row["id"], name=str(row.get("tool", "")), arguments=dict(row.get("arguments") or {}))
        trace.add_call(int(row.get("step") or 0), call)
        trace.update(
            call,
            status=str(row.get("status", "")),
            decision=str(row.get("decision", "")),
            by=str(row.get("by", "")),
            rule=str(row.get("rule", "")),
            duration_s=row.get("duration_s"),
            exit_code=row.get("exit_code"),
            observation=str(row.get("observation", "")),
            reason=str(row.get("reason", "")),
            edited=bool(row.get("edited", False)),
        )
    step = 0
    for message in saved.get("messages") or []:
        role = message.get("role") if isinstance(message, dict) else None
        if role == "user":
            chat.add_user(str(message.get("content") or ""))
        elif role == "assistant":
            step += 1
            chat.add_assistant_text(step, str(message.get("content") or ""), str(message.get("reasoning_content") or ""))
            for call_id in saved_call_ids(message):
                if call_id in trace.entries:
                    chat.add_call_line(trace.entries[call_id])
    steps = [s.get("step") for s in saved.get("steps") or [] if isinstance(s, dict) and isinstance(s.get("step"), int)]
    app.status.step = max(steps, default=0)
    app.status.context_used = int(saved.get("context_tokens") or 0)
    chat.add_notice(f"Resumed session {app.session.id} ({len(steps)} steps). Send a message to continue.")
