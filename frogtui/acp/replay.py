"""``session/load``: a saved conversation (the trajectory the app and ``frogtui run`` write) as
the session updates that show it again: the person's messages, reasoning, answers, and each tool
call with its observation."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from acp import schema
from acp.helpers import update_agent_message_text, update_agent_thought_text, update_user_message_text

from frogtui.acp.limits import CHUNK_BYTES, cap_text
from frogtui.acp.updates import ToolCallView
from frogtui.agent.project_instructions import without_instructions
from frogtui.protocol import ToolCall
from frogtui.tools.observations import Reading, classify, recorded_readings
from frogtui.tools.specs import runs_commands

FAILED_KINDS = frozenset({"denied", "interrupted", "error", "not_run"})
"""How a saved call ended when the editor shows it as failed; a command that exited non-zero or
timed out ran, and shows its output as completed."""


def replay_updates(saved: dict[str, Any], root: str, id_prefix: str = "") -> Iterator[Any]:
    """The updates that show ``saved`` (a trajectory dict) again, in order; tool call ids get
    ``id_prefix`` (an earlier conversation of a handed-off session reuses ids)."""
    views: dict[str, ToolCallView] = {}
    recorded = _recorded(saved, id_prefix)
    for message in saved.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "user":
            text = without_instructions(text)  # what the person wrote; AGENTS.md was a note
        if role == "user" and text:
            yield update_user_message_text(cap_text(text, CHUNK_BYTES, "message"))
        elif role == "assistant":
            reasoning = message.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                yield update_agent_thought_text(cap_text(reasoning, CHUNK_BYTES, "reasoning") + "\n")
            if text:
                yield update_agent_message_text(cap_text(text, CHUNK_BYTES, "answer") + "\n")
            for call in saved_calls(message, id_prefix):
                views[call.id] = view = ToolCallView(call, root)
                yield view.start()
        elif role == "tool":
            view = views.pop(id_prefix + str(message.get("tool_call_id")), None)
            if view is not None:
                view.set_output(text)
                reading = recorded.get(view.call.id) or classify(text, command=runs_commands(view.call.name))
                yield view.progress("failed" if reading.kind in FAILED_KINDS else "completed")


def _recorded(saved: dict[str, Any], id_prefix: str) -> dict[str, Reading]:
    """How each saved call ended, by call id, as the trajectory recorded it (``{}`` for a session
    saved before outcomes were, or whose records do not line up with its calls)."""
    records = [
        o for step in saved.get("steps") or [] if isinstance(step, dict)
        for o in step.get("observations") or [] if isinstance(o, dict)
    ]
    answers = [m for m in saved.get("messages") or [] if isinstance(m, dict) and m.get("role") == "assistant"]
    calls = [c for m in answers for c in saved_calls(m, id_prefix)]
    readings = recorded_readings(records, [c.name for c in calls])
    return {c.id: r for c, r in zip(calls, readings, strict=True)} if readings is not None else {}


def saved_calls(message: dict[str, Any], id_prefix: str = "") -> list[ToolCall]:
    """The tool calls of a saved assistant message (arguments as JSON strings, OpenAI style)."""
    calls = []
    for item in message.get("tool_calls") or []:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or not isinstance(item.get("id"), str):
            continue
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = {}
        calls.append(ToolCall(id_prefix + item["id"], str(function.get("name", "")), arguments if isinstance(arguments, dict) else {}))
    return calls


def prompt_text(blocks: list[Any]) -> str:
    """A prompt's text: text blocks as they are, files the person mentions as ``@path``, embedded
    text resources as fenced blocks after their path (images and audio are not supported)."""
    parts = []
    for block in blocks:
        if isinstance(block, schema.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, schema.ResourceContentBlock):
            parts.append(f"@{uri_path(block.uri)}")
        elif isinstance(block, schema.EmbeddedResourceContentBlock) and isinstance(block.resource, schema.TextResourceContents):
            parts.append(f"@{uri_path(block.resource.uri)}:\n```\n{block.resource.text}\n```")
    return "\n".join(parts)


def uri_path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
