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
CHUNK_CHARS = CHUNK_BYTES // 12
"""Pieces are merged up to this many characters (12 JSON bytes at most each)."""


@dataclass(slots=True)
class _Text:
    kind: str
    """``thought`` or ``message``."""
    text: str


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


def _resolve(done: asyncio.Future[None]) -> None:
    if not done.done():
        done.set_result(None)


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
        self._woken = False
        self._asking: asyncio.Future[Any] | None = None
        self.cancelled = False
        self.closed = False
        self._task = self.loop.create_task(self._pump(), name=f"frogtui.acp.outbox.{session_id}")

    # any thread ------------------------------------------------------------------------
    def send(self, update: Any) -> None:
        """Queue a session update (thread-safe)."""
        self._push(update)

    def text(self, kind: str, text: str) -> None:
        """Queue a piece of reasoning (``thought``) or answer (``message``); pieces of one kind that
        wait together go out as one chunk (thread-safe)."""
        self._push(_Text(kind, text))

    def ask(self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> schema.RequestPermissionResponse | None:
        """Ask the client for permission and wait (call from the worker thread, never the loop)."""
        answer: concurrent.futures.Future[schema.RequestPermissionResponse | None] = concurrent.futures.Future()
        self._push(_Ask(tool_call, options, answer))
        return answer.result()

    def _push(self, item: Any) -> None:
        if self.closed:
            self._settle(item)
            return
        self._items.append(item)  # deque.append is atomic; one wake-up serves every item behind it
        if not self._woken:
            self._woken = True
            self.loop.call_soon_threadsafe(self._wake.set)

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
        """Wait until everything queued so far (from any thread) has been written."""
        done = self.loop.create_future()
        self._push(_Flush(done))
        await done

    async def close(self) -> None:
        self.closed = True
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        while self._items:
            self._settle(self._items.popleft())

    @staticmethod
    def _settle(item: Any) -> None:
        if isinstance(item, _Ask) and not item.answer.done():
            item.answer.set_result(None)
        elif isinstance(item, _Flush) and not item.done.done():
            item.done.get_loop().call_soon_threadsafe(_resolve, item.done)

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            self._woken = False
            while self._items:
                item = self._items.popleft()
                try:
                    await self._deliver(item)
                except ConnectionError:
                    self.closed = True
                    self._settle(item)

    async def _deliver(self, item: Any) -> None:
        if isinstance(item, _Flush):
            _resolve(item.done)
        elif isinstance(item, _Ask):
            item.answer.set_result(await self._request(item))
        elif self.closed:
            return
        else:
            if isinstance(item, _Text):
                item = self._merge(item)
            elif isinstance(item, (schema.ToolCallStart, schema.ToolCallProgress)):
                item = within_limit(self._latest(item))
            await self.conn.session_update(session_id=self.session_id, update=item)

    def _latest(self, update: Any) -> Any:
        """``update``, or the newer content updates of the same call queued right behind it, which
        replace it (a command's output arrives faster than a slow client reads it)."""
        while (
            isinstance(update, schema.ToolCallProgress)
            and update.status is None
            and self._items
            and isinstance(self._items[0], schema.ToolCallProgress)
            and self._items[0].tool_call_id == update.tool_call_id
            and self._items[0].content is not None
        ):
            update = self._items.popleft()
        return update

    def _merge(self, first: _Text) -> Any:
        """One chunk: ``first`` and the pieces of the same kind queued right behind it."""
        texts = [first.text]
        size = len(first.text)
        while self._items and isinstance(self._items[0], _Text) and self._items[0].kind == first.kind and size < CHUNK_CHARS:
            text = self._items.popleft().text
            texts.append(text)
            size += len(text)
        block = text_block("".join(texts))
        if first.kind == "thought":
            return schema.AgentThoughtChunk(session_update="agent_thought_chunk", content=block)
        return schema.AgentMessageChunk(session_update="agent_message_chunk", content=block)

    async def _request(self, item: _Ask) -> schema.RequestPermissionResponse | None:
        if self.cancelled or self.closed:
            return None
        if within_limit(item.tool_call) is not item.tool_call:  # never ask about what the request cannot show
            log.warning("a permission request too large to send whole was not sent (a denial); the approver checks first")
            return None
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
