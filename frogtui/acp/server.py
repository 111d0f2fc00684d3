"""``FrogAgent``: the ACP agent side (``initialize``, ``session/new``, ``session/load``,
``session/prompt``, ``session/cancel``, modes and the ``mode`` config option). The loop of each
prompt runs on a worker thread; the model is loaded once, on the first prompt, and shared by the
process's sessions (one prompt runs at a time)."""
from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.helpers import update_agent_message_text

from frogtui import __version__
from frogtui.acp.commands import available_commands, command_name, run_command
from frogtui.acp.modes import MODE_TEXT, MODES
from frogtui.acp.outbox import Outbox
from frogtui.acp.replay import prompt_text, replay_updates
from frogtui.acp.updates import end_message, stop_reason, text_content
from frogtui.config import Config, load_config, repo_folder, sessions_dir
from frogtui.errors import FrogtuiError
from frogtui.protocol import Model
from frogtui.session import Session

if TYPE_CHECKING:
    from frogtui.acp.session import AcpSession

T = TypeVar("T")
SESSION_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,99}$")


def _invalid(message: str) -> RequestError:
    return RequestError.invalid_params({"message": message})


class SharedModel:
    """The process's one model, loaded by the first prompt that needs it; every session's core
    gets it through its ``model_loader`` (one prompt runs at a time: ``FrogAgent.run_lock``)."""

    def __init__(self) -> None:
        self.model: Model | None = None
        self._lock = threading.Lock()

    def load(self, spec: str, config: Config, report: Any = None) -> Model:
        with self._lock:
            if self.model is None:
                from frogtui.models import load_model

                self.model = load_model(spec, config, report=report)
            return self.model


class FrogAgent:
    """The ACP agent (the SDK's ``Agent`` protocol).

    Args:
        repo: Pins the repository (``--repo``); None: each session's ``cwd``.
        model_spec: ``--model``; None: the config's.
    """

    def __init__(self, repo: str | None = None, model_spec: str | None = None) -> None:
        self.repo = repo
        self.model_spec = model_spec
        self.conn: Any = None
        self.sessions: dict[str, AcpSession] = {}
        self.shared = SharedModel()
        self.run_lock = asyncio.Lock()
        self.workers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="frogtui-acp")
        """Where the blocking work runs (the loop, git, the model load); ``shutdown`` waits for it."""
        self._loads = 0

    async def _blocking(self, func: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.workers, func, *args)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> schema.InitializeResponse:
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=False, audio=False, embedded_context=True),
            ),
            agent_info=schema.Implementation(name="frogtui", title="frogtui (FrogNano-4B, Leaf harness)", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> schema.AuthenticateResponse:
        return schema.AuthenticateResponse()

    # sessions ---------------------------------------------------------------------------
    def _config(self, cwd: str) -> Config:
        try:
            return load_config(repo=repo_folder(self.repo or cwd), model_spec=self.model_spec)
        except FrogtuiError as err:
            raise _invalid(str(err)) from None

    async def _open(self, config: Config, resume: Session | None = None) -> AcpSession:
        from frogtui.acp.session import AcpSession  # the policy, git and the loop come with the first session
        from frogtui.session.core import SessionCore

        core = SessionCore(config, resume=resume, model_loader=self.shared.load)
        if resume is not None and core.saved is None:
            raise _invalid(f"session {resume.id} has no saved conversation")
        outbox = Outbox(self.conn, core.session.id)
        try:
            notes = await self._blocking(core.prepare)
        except FrogtuiError as err:
            await outbox.close()
            raise _invalid(str(err)) from None
        notes += [note.text for note in core.notes if note.topic == "instructions"]  # AGENTS.md given with the first prompt, or why not
        acp_session = AcpSession(core, outbox, notes)
        self.sessions[acp_session.id] = acp_session
        outbox.send(available_commands())
        return acp_session

    def _modes(self, acp_session: AcpSession) -> dict[str, Any]:
        current = acp_session.approver.mode
        return {
            "modes": schema.SessionModeState(
                current_mode_id=current,
                available_modes=[schema.SessionMode(id=m, name=MODE_TEXT[m][0], description=MODE_TEXT[m][1]) for m in MODES],
            ),
            "config_options": self._options(acp_session),
        }

    def _options(self, acp_session: AcpSession) -> list[Any]:
        return [
            schema.SessionConfigOptionSelect(
                id="mode",
                name="Approval mode",
                description="What frogtui asks you about (the floor and your deny rules hold in every mode)",
                category="mode",
                type="select",
                current_value=acp_session.approver.mode,
                options=[schema.SessionConfigSelectOption(value=m, name=MODE_TEXT[m][0], description=MODE_TEXT[m][1]) for m in MODES],
            )
        ]

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> schema.NewSessionResponse:
        acp_session = await self._open(self._config(cwd))
        return schema.NewSessionResponse(session_id=acp_session.id, **self._modes(acp_session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any) -> schema.LoadSessionResponse:
        config = self._config(cwd)
        session = find_session(session_id, config.repo)
        if session_id in self.sessions:
            raise _invalid(f"session {session_id} is already open")
        acp_session = await self._open(config, resume=session)
        chain = acp_session.core.chain  # several conversations after hand-offs, oldest first
        for n, saved in enumerate(chain, 1):
            for update in replay_updates(saved, str(config.repo), id_prefix="" if n == len(chain) else f"run{n}-"):
                acp_session.outbox.send(update)
        await acp_session.outbox.flush()
        return schema.LoadSessionResponse(**self._modes(acp_session))

    def _session(self, session_id: str) -> AcpSession:
        acp_session = self.sessions.get(session_id)
        if acp_session is None:
            raise _invalid(f"unknown session {session_id}")
        return acp_session

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> schema.SetSessionModeResponse:
        self._set_mode(self._session(session_id), mode_id)
        return schema.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        acp_session = self._session(session_id)
        if config_id != "mode":
            raise _invalid(f"unknown config option {config_id!r}")
        self._set_mode(acp_session, str(value))
        return schema.SetSessionConfigOptionResponse(config_options=self._options(acp_session))

    def _set_mode(self, acp_session: AcpSession, mode: str) -> None:
        if mode not in MODES:
            raise _invalid(f"unknown approval mode {mode!r}: use {', '.join(MODES)}")
        acp_session.approver.mode = mode
        acp_session.core.mode_changed(mode)
        if mode == "all":
            acp_session.unshown.append(f"approval mode all: {MODE_TEXT['all'][1]}.")

    # prompts ----------------------------------------------------------------------------
    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        acp_session = self._session(session_id)
        if acp_session.busy:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        acp_session.busy = True
        acp_session.cancelled.clear()
        acp_session.outbox.reset()
        try:
            return schema.PromptResponse(stop_reason=await self._answer(acp_session, prompt_text(prompt)))
        finally:
            await acp_session.outbox.flush()
            acp_session.busy = False

    async def _answer(self, acp_session: AcpSession, text: str) -> schema.StopReason:
        say = acp_session.outbox.send
        if acp_session.unshown:
            say(update_agent_message_text("".join(f"> frogtui: {line}\n\n" for line in acp_session.unshown)))
            acp_session.unshown.clear()
        name = command_name(text)
        if name is not None:
            say(update_agent_message_text(await self._blocking(run_command, name, acp_session)))
            return "end_turn"
        if not text.strip():
            say(update_agent_message_text("frogtui: the prompt has no text."))
            return "end_turn"
        cancelled = acp_session.cancelled
        async with self.run_lock:
            if cancelled.is_set():
                return "cancelled"
            try:
                await self._load_model(acp_session)
            except FrogtuiError as err:
                say(update_agent_message_text(f"frogtui: {err}"))
                return "end_turn"
            if cancelled.is_set():
                return "cancelled"
            result = await self._blocking(acp_session.run, text)
        note = end_message(result.exit_reason, result.error)
        if note:
            say(update_agent_message_text(note))
        return stop_reason(result.exit_reason)

    async def _load_model(self, acp_session: AcpSession) -> Model:
        """The process's model for ``acp_session``'s core; the first load shows as a ``tool_call``
        of kind ``other`` with its progress lines."""
        core = acp_session.core
        if self.shared.model is not None:
            return core.load_model()
        self._loads += 1
        call_id = f"frogtui-load-model-{self._loads}"
        outbox = acp_session.outbox
        lines: list[str] = []

        def progress(status: Any = None, text: str | None = None) -> schema.ToolCallProgress:
            content = [text_content(text)] if text else None
            return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status=status, content=content)

        def report(line: str) -> None:
            lines.append(line)
            del lines[:-20]
            outbox.send(progress(text="\n".join(lines)))

        title = f"Loading model {core.config.model_spec}"
        outbox.send(schema.ToolCallStart(session_update="tool_call", tool_call_id=call_id, title=title, kind="other", status="in_progress"))
        try:
            model = await self._blocking(core.load_model, report)
        except FrogtuiError as err:
            outbox.send(progress("failed", str(err)))
            raise
        outbox.send(progress("completed"))
        return model

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        acp_session = self.sessions.get(session_id)
        if acp_session is not None:
            acp_session.core.record("cancelled by the editor")
            acp_session.cancel()
            acp_session.outbox.cancel_pending()

    async def shutdown(self) -> None:
        """The client went away: stop every run, deny what waits, wait for the workers (a run
        cancelled with the connection still holds the model), then release the model."""
        for acp_session in self.sessions.values():
            acp_session.cancel()
            await acp_session.outbox.close()
        await asyncio.to_thread(self.workers.shutdown, True)
        if self.shared.model is not None:
            self.shared.model.close()


def find_session(session_id: str, repo: Path) -> Session:
    """The saved session ``session_id`` of ``repo``.

    Raises:
        RequestError: a malformed id, no such session, or one of another repository.
    """
    if not SESSION_ID.match(session_id) or session_id in (".", ".."):
        raise _invalid(f"not a frogtui session id: {session_id[:100]!r}")
    folder = sessions_dir() / session_id
    meta_path = folder / "meta.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise _invalid(f"no saved session {session_id}") from None
    saved_repo = str(meta.get("repo", "")) if isinstance(meta, dict) else ""
    if os.path.realpath(saved_repo) != os.path.realpath(repo):
        raise _invalid(f"session {session_id} belongs to {saved_repo}, not {repo}")
    return Session(id=session_id, folder=folder, repo=repo)


async def serve(pipes: Any, *, repo: str | None, model_spec: str | None, limit: int) -> None:
    """Answer ACP on the protected descriptors until the client closes the stream."""
    from acp import run_agent

    from frogtui.acp.stdio import open_streams

    reader, writer = await open_streams(pipes, limit)
    agent = FrogAgent(repo=repo, model_spec=model_spec)
    try:
        await run_agent(agent, writer, reader)
    finally:
        await agent.shutdown()
