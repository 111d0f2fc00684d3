"""``session/load``: a saved conversation (the trajectory the app and ``frogtui run`` write) as
the session updates that show it again: the person's messages, reasoning, answers, and each tool
call with its observation."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from acp import schema
from acp.helpers import update_agent_message_text, update_agent_thought_text, update_user_message_text

from frogtui.acp.limits import CHUNK_BYTES, cap_text
from frogtui.acp.updates import ToolCallView
from frogtui.agent.saved import Conversation, SavedCall
from frogtui.protocol import ToolCall

FAILED_KINDS = frozenset({"denied", "interrupted", "error", "not_run"})
"""How a saved call ended when the editor shows it as failed; a command that exited non-zero or
timed out ran, and shows its output as completed."""


def replay_updates(saved: Conversation, root: str, id_prefix: str = "") -> Iterator[Any]:
    """The updates that show ``saved`` (read by ``agent.saved``) again, in order; tool call ids
    get ``id_prefix`` (an earlier conversation of a handed-off session reuses ids)."""
    views: dict[str, tuple[ToolCallView, SavedCall]] = {}
    for message in saved.messages:
        if message.role == "user":
            text = message.typed  # what the person wrote; AGENTS.md was a note
            if text:
                yield update_user_message_text(cap_text(text, CHUNK_BYTES, "message"))
        elif message.role == "assistant":
            if message.reasoning:
                yield update_agent_thought_text(cap_text(message.reasoning, CHUNK_BYTES, "reasoning") + "\n")
            if message.text:
                yield update_agent_message_text(cap_text(message.text, CHUNK_BYTES, "answer") + "\n")
            for call in message.calls:
                if call.id:
                    view = ToolCallView(ToolCall(id_prefix + call.id, call.tool, call.arguments), root)
                    views[call.id] = (view, call)
                    yield view.start()
        elif message.role == "tool":
            shown = views.pop(message.call_id, None)
            if shown is not None:
                view, call = shown
                view.set_output(message.text)
                yield view.progress("failed" if call.ended.kind in FAILED_KINDS else "completed")


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
