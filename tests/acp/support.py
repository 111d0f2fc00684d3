"""For the ACP tests: ``frogtui acp`` as a subprocess driven through the SDK's own
``spawn_agent_process``, a scripted person answering permission requests, the full session's
replay turns and rules."""
from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from acp import RequestError, schema, spawn_agent_process

from tests.support import turn, xml_call

Answer = str | None | Callable[[schema.ToolCallUpdate, list[schema.PermissionOption]], Awaitable[schema.RequestPermissionResponse]]


class ScriptedClient:
    """Records every update; answers permission requests from ``answers`` in order (an option id,
    None for a cancelled outcome, or a coroutine function)."""

    def __init__(self, answers: list[Answer] | None = None) -> None:
        self.answers = list(answers or [])
        self.updates: list[Any] = []
        self.permissions: list[tuple[schema.ToolCallUpdate, list[schema.PermissionOption]]] = []
        self.asked = asyncio.Event()
        self.on_update: Callable[[Any], None] | None = None
        self.process: Any = None
        """The agent's process (``acp_agent`` sets it)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if self.on_update is not None:
            self.on_update(update)

    async def request_permission(
        self, session_id: str, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else None
        if callable(answer):
            return await answer(tool_call, options)
        if answer is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=answer))

    async def write_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("fs/read_text_file")

    # what the tests look at ---------------------------------------------------------------
    def of(self, kind: str) -> list[Any]:
        return [u for u in self.updates if u.session_update == kind]

    def text(self, kind: str) -> str:
        return "".join(u.content.text for u in self.of(kind))

    def calls(self) -> dict[str, list[Any]]:
        """Each tool call id with its ``tool_call`` and ``tool_call_update``s, in order."""
        calls: dict[str, list[Any]] = {}
        for u in self.updates:
            if u.session_update in ("tool_call", "tool_call_update"):
                calls.setdefault(u.tool_call_id, []).append(u)
        return calls

    def final_status(self, call_id: str) -> str | None:
        return [u.status for u in self.calls()[call_id] if u.status][-1]


@contextlib.asynccontextmanager
async def acp_agent(
    client: ScriptedClient, *args: str, cwd: Path, stderr: Path, env: dict[str, str] | None = None, process: bool = False,
    **connection: Any,
) -> AsyncIterator[Any]:
    """``frogtui acp ARGS``, initialised: in this process by default (the same agent and JSON-RPC
    over a socket pair, ``env`` and ``cwd`` in force meanwhile, logs on the test's stderr); with
    ``process`` as a subprocess (the test's environment, stderr to a file), for what is about the
    process itself: its standard streams, its exit, a bare environment, one whole session."""
    if not process:
        async with _in_process(client, *args, cwd=cwd, env=env, **connection) as conn:
            yield conn
        return
    with stderr.open("wb") as err:
        async with spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "frogtui",
            "acp",
            *args,
            env=env or dict(os.environ),
            cwd=cwd,
            transport_kwargs={"stderr": err},
            **connection,
        ) as (conn, process_):
            client.process = process_
            init = await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
            assert init.protocol_version == 1
            yield conn


@contextlib.asynccontextmanager
async def _in_process(client: ScriptedClient, *args: str, cwd: Path, env: dict[str, str] | None, **connection: Any) -> AsyncIterator[Any]:
    from acp import run_agent
    from acp.client.connection import ClientSideConnection

    from frogtui.acp.cli import STDIO_LIMIT, build_parser
    from frogtui.acp.server import FrogAgent

    options = build_parser().parse_args(list(args))
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    os.chdir(cwd)
    agent_end, client_end = socket.socketpair()
    served = conn = client_writer = None
    try:
        agent_reader, agent_writer = await asyncio.open_connection(sock=agent_end, limit=STDIO_LIMIT)
        client_reader, client_writer = await asyncio.open_connection(sock=client_end, limit=STDIO_LIMIT)
        agent = FrogAgent(repo=options.repo, model_spec=options.model)

        async def serve() -> None:
            try:
                await run_agent(agent, agent_writer, agent_reader)
            finally:
                await agent.shutdown()

        served = asyncio.create_task(serve())
        conn = ClientSideConnection(client, client_writer, client_reader, **connection)
        init = await asyncio.wait_for(conn.initialize(protocol_version=1), 30)
        assert init.protocol_version == 1
        yield conn
    finally:
        if conn is not None:
            await conn.close()
        if client_writer is not None:
            client_writer.close()  # the editor goes away: the agent reads the end of its input, as on stdin
        else:
            client_end.close()
        if served is not None:
            await asyncio.wait_for(served, 30)
        agent_end.close()
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


DENY_PUSH = '[[rules]]\ntool = "Bash"\nmatch = "git push *"\ndecision = "deny"\n'


def user_rules(text: str) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rules.toml").write_text(text)


def session_folder(session_id: str) -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions" / session_id


def full_session_turns() -> list[str]:
    return [
        turn("Look at calc.py first.", xml_call("Read", file_path="calc.py")),
        turn("add subtracts: fix it.", xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")),
        turn(
            "Add a docstring.",
            xml_call("Edit", file_path="calc.py", old_string="def add(a, b):", new_string='def add(a, b):\n    """Sum."""'),
        ),
        turn(
            "And a comment.", xml_call("Edit", file_path="calc.py", old_string="    return a + b", new_string="    return a + b  # fixed ✓")
        ),
        turn("Publish it.", xml_call("Bash", command="git push origin main", description="Push the fix")),
        turn("Pushing is not allowed; done.", answer="Fixed `add`: it adds now. ✓"),
    ]
