"""From the agent's worker thread to the client, in order: updates and permission requests go
through one queue that a task on the event loop empties (consecutive reasoning or answer deltas
are merged into one chunk). ``ask`` blocks the worker until the client answers, the prompt is
cancelled, or the connection ends; the last two are ``None`` (a denial)."""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import logging
from dataclasses import dataclass
from typing import Any

from acp import schema
from acp.helpers import text_block, tool_content

from frogtui.acp.limits import CHUNK_BYTES, MAX_MESSAGE_BYTES

log = logging.getLogger(__name__)
Chunk = (schema.AgentThoughtChunk, schema.AgentMessageChunk)


@dataclass
class _Ask:
    tool_call: schema.ToolCallUpdate
    options: list[schema.PermissionOption]
    answer: concurrent.futures.Future[schema.RequestPermissionResponse | None]


@dataclass
class _Flush:
    done: asyncio.Future[None]


def within_limit(update: Any) -> Any:
    """``update`` itself, or, when its JSON would exceed ``MAX_MESSAGE_BYTES`` (the caps on each
    part make that rare), a copy whose content is a note and whose raw input is dropped."""
    if update.content is None and update.raw_input is None:
        return update
    size = len(update.model_dump_json(by_alias=True, exclude_none=True))
    if size <= MAX_MESSAGE_BYTES:
        return update
    note = f"[frogtui: this tool call's content ({size:,} bytes) is too large to send; it is in the session's trajectory]"
    return update.model_copy(update={"content": [tool_content(text_block(note))], "raw_input": None})


class Outbox:
    """One session's ordered way out.

    Args:
        conn: The SDK's agent-side connection (``session_update``, ``request_permission``).
        session_id: The ACP session id.
    """

    def __init__(self, conn: Any, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id
        self.loop = asyncio.get_running_loop()
        self._items: collections.deque[Any] = collections.deque()
        self._wake = asyncio.Event()
        self._asking: asyncio.Future[Any] | None = None
        self.cancelled = False
        self.closed = False
        self._task = self.loop.create_task(self._pump(), name=f"frogtui.acp.outbox.{session_id}")

    # any thread ------------------------------------------------------------------------
    def send(self, update: Any) -> None:
        """Queue a session update (thread-safe)."""
        self.loop.call_soon_threadsafe(self._push, update)

    def ask(self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> schema.RequestPermissionResponse | None:
        """Ask the client for permission and wait (call from the worker thread, never the loop)."""
        answer: concurrent.futures.Future[schema.RequestPermissionResponse | None] = concurrent.futures.Future()
        self.loop.call_soon_threadsafe(self._push, _Ask(tool_call, options, answer))
        return answer.result()

    # event loop ------------------------------------------------------------------------
    def cancel_pending(self) -> None:
        """The prompt was cancelled: the waiting permission request (and any queued) is a denial."""
        self.cancelled = True
        if self._asking is not None:
            self._asking.cancel()

    def reset(self) -> None:
        """A new prompt starts: permission requests are sent again."""
        self.cancelled = False

    async def flush(self) -> None:
        """Wait until everything queued so far has been written."""
        done = self.loop.create_future()
        self.loop.call_soon(self._push, _Flush(done))  # behind every ``send`` made before, from any thread
        await done

    async def close(self) -> None:
        self.closed = True
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        for item in self._items:
            self._settle(item)
        self._items.clear()

    def _push(self, item: Any) -> None:
        if self.closed:
            self._settle(item)
            return
        self._items.append(item)
        self._wake.set()

    @staticmethod
    def _settle(item: Any) -> None:
        if isinstance(item, _Ask) and not item.answer.done():
            item.answer.set_result(None)
        elif isinstance(item, _Flush) and not item.done.done():
            item.done.set_result(None)

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._items:
                item = self._items.popleft()
                try:
                    await self._deliver(item)
                except ConnectionError:
                    self.closed = True
                    self._settle(item)

    async def _deliver(self, item: Any) -> None:
        if isinstance(item, _Flush):
            self._settle(item)
        elif isinstance(item, _Ask):
            item.answer.set_result(await self._request(item))
        elif self.closed:
            return
        else:
            if isinstance(item, Chunk):
                item = self._merge(item)
            elif isinstance(item, (schema.ToolCallStart, schema.ToolCallProgress)):
                item = within_limit(item)
            await self.conn.session_update(session_id=self.session_id, update=item)

    def _merge(self, first: Any) -> Any:
        """``first`` with the text of the same kind of chunks queued right behind it."""
        kind = type(first)
        texts = [first.content.text]
        size = len(texts[0])
        while self._items and type(self._items[0]) is kind and size < CHUNK_BYTES // 12:
            text = self._items.popleft().content.text
            texts.append(text)
            size += len(text)
        return first if len(texts) == 1 else kind(session_update=first.session_update, content=text_block("".join(texts)))

    async def _request(self, item: _Ask) -> schema.RequestPermissionResponse | None:
        if self.cancelled or self.closed:
            return None
        item.tool_call = within_limit(item.tool_call)
        self._asking = asyncio.ensure_future(
            self.conn.request_permission(session_id=self.session_id, tool_call=item.tool_call, options=item.options)
        )
        try:
            await asyncio.wait([self._asking])
        finally:
            asking, self._asking = self._asking, None
        if asking.cancelled():
            return None
        error = asking.exception()
        if error is not None:
            log.warning("permission request failed (a denial): %s", error)
            return None
        return asking.result()
