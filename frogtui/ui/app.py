"""The Textual app: chat, trace and status around the agent loop.

Threads: the model loads and the agent runs in ``@work(thread=True)`` workers; they reach the UI
only through messages (``UiSink``, ``UiApprover``). Approvals block the worker on a ``Future``
that the approval modal resolves, so nothing runs while the modal is open.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.worker import Worker, WorkerFailed, WorkerState

from frogtui.agent import events as ev
from frogtui.agent.loop import Agent
from frogtui.config import Config
from frogtui.errors import FrogtuiError
from frogtui.models import load_model
from frogtui.protocol import Model
from frogtui.session import Session
from frogtui.tools import ToolRunner
from frogtui.ui import session_view
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.approver import BuiltinPolicy, UiApprover
from frogtui.ui.chat import ChatPane, PromptInput
from frogtui.ui.commands import AppCommands
from frogtui.ui.footer import FittingFooter
from frogtui.ui.integration import SessionWiring, wire_session
from frogtui.ui.messages import (
    AgentEventPosted,
    ApprovalRequested,
    CallPreviewed,
    ModelLoaded,
    ModelLoadProgress,
    ModelLoadFailed,
    SessionWired,
    SetupFailed,
    TaskSubmitted,
    UiSink,
)
from frogtui.ui.status import StatusBar
from frogtui.vcs.repository import read_git_state
from frogtui.ui.themes import (
    DEFAULT_THEME,
    VARIABLE_DEFAULTS,
    ThemeCatalog,
    load_themes,
)
from frogtui.ui.trace import TracePane, finished_state

QUIT_WINDOW_S = 2.0
"""A second Ctrl+C within this many seconds quits."""
LOAD_HELP = (
    "Start again with another model: frogtui --model replay:FILE, --model PATH.gguf, "
    "--model hf:REPO:QUANT or --model http://HOST:PORT/v1; `frogtui doctor` checks the setup."
)
ModelLoader = Callable[..., Model]
"""Called as ``loader(spec, config, report=callable)`` (``frogtui.models.load_model``)."""


class FrogApp(AppCommands, App[int]):
    """The frogtui app.

    Args:
        config: repository, model spec, limits, theme.
        resume: a saved session to continue (``--resume``), or None for a new one.
        themes: the themes to offer (default: read from the theme folders).
        model_loader: builds the model from its spec (``frogtui.models.load_model``).
        clock: monotonic seconds (Ctrl+C twice, load time, the agent's tool durations).
    """

    TITLE = "frogtui"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        # short labels: all but the theme key fit at 80 columns; FittingFooter hides, from the
        # right, what does not fit; every action is also in the palette (commands.py)
        Binding("escape", "interrupt", "Stop", tooltip="Interrupt generation or the running command"),
        Binding("ctrl+n", "new_task", "New"),
        Binding("ctrl+r", "review", "Review"),
        Binding("c", "review", "Review & commit", show=False),
        Binding("ctrl+z", "undo", "Undo"),
        Binding("ctrl+t", "toggle_reasoning", "Think"),
        Binding("ctrl+o", "open_trajectory", "JSON", tooltip="Open the trajectory file"),
        Binding("f2", "cycle_approval_mode", "Mode"),
        Binding("f3", "next_theme", "Theme"),
        Binding("ctrl+c", "quit_twice", "Quit×2", priority=True),
    ]

    def __init__(
        self,
        config: Config,
        *,
        resume: Session | None = None,
        themes: ThemeCatalog | None = None,
        model_loader: ModelLoader = load_model,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.config = config
        self.clock = clock
        self.model_loader = model_loader
        self.load_log: list[str] = []
        """Progress lines of the model load (download, loading, the settings chosen)."""
        self.catalog = themes or load_themes()
        for theme in self.catalog.themes.values():
            self.register_theme(theme)
        self.session = resume or Session.create(config.repo)
        self.saved = self.session.load_trajectory() if resume is not None else None
        self.model: Model | None = None
        self.agent: Agent | None = None
        self.busy = False
        self.pending_task: str | None = None
        self.approver = UiApprover(BuiltinPolicy(), self.post_message, mode=config.approve)
        self.wiring: SessionWiring | None = None
        self.setup_error: str | None = None
        self.rewind_note = ""
        """What an undo rewound, told to the model with the next message."""
        self.undone: set[tuple[int, int]] = set()
        """Checkpoints (step, action) already undone; the next undo goes further back."""
        self._last_ctrl_c = -1e9
        self._run_worker: Worker[Any] | None = None
        self.last_exit_reason: str | None = None
        """How the last run ended (``agent``, ``cancelled``...), None before the first."""

    # layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield ChatPane(id="chat")
            yield TracePane(id="trace")
        yield PromptInput(id="prompt")
        yield StatusBar(id="status")
        yield FittingFooter()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(VARIABLE_DEFAULTS)

    @property
    def chat(self) -> ChatPane:
        return self.query_one(ChatPane)

    @property
    def trace(self) -> TracePane:
        return self.query_one(TracePane)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    def on_mount(self) -> None:
        wanted = self.config.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            self.theme = fallback
            self.notify(f"No theme named {wanted!r}; using {fallback}. Themes: {', '.join(sorted(self.catalog.themes))}", severity="warning")
        for problem in self.catalog.problems:
            self.notify(problem, severity="warning")
        status = self.status
        status.max_steps = self.config.limits.max_steps
        status.context_size = self.config.limits.max_context_tokens
        status.approval_mode = self.approver.mode
        status.model_name = self.config.model_spec
        if self.saved is not None:
            session_view.restore_view(self, self.saved)
        self.query_one(PromptInput).focus()
        self.refresh_git()
        self.status.state = "loading"
        self.loading_notice = self.chat.add_notice(f"Loading model {self.config.model_spec} …", "loading")
        self._prepare(load=True)

    # session setup and model loading -----------------------------------------------------
    @work(thread=True, exclusive=True, group="prepare")
    def _prepare(self, load: bool) -> None:
        try:
            wiring = wire_session(self.config, self.session, resumed=self.saved is not None)
        except FrogtuiError as err:
            self.post_message(SetupFailed(str(err)))
            return
        self.post_message(SessionWired(wiring))
        if load:
            self._load_model()

    def on_session_wired(self, message: SessionWired) -> None:
        self.wiring = message.wiring
        self.approver.policy = message.wiring.policy
        self.approver.sandboxed = message.wiring.sandbox_wrap is not None
        self.status.sandbox = self.approver.sandboxed
        for note in message.wiring.notes:
            self.chat.add_notice(note, "warning")

    def on_setup_failed(self, message: SetupFailed) -> None:
        self.setup_error = message.error
        self.status.state = "no policy"
        self.chat.add_notice(f"Cannot start: {message.error}\nFix the file and start frogtui again; nothing will run until then.", "error")

    def _load_model(self) -> None:
        """Runs on the prepare worker."""
        started = self.clock()
        try:
            model = self.model_loader(self.config.model_spec, self.config, report=self._report_load_progress)
        except FrogtuiError as err:
            self.post_message(ModelLoadFailed(self.config.model_spec, str(err)))
            return
        self.post_message(ModelLoaded(model, self.clock() - started))

    def _report_load_progress(self, line: str) -> None:
        """Runs on the prepare worker: download bytes, loading, then what was chosen."""
        self.post_message(ModelLoadProgress(line))

    def on_model_load_progress(self, message: ModelLoadProgress) -> None:
        self.load_log.append(message.line)
        self.loading_notice.update(f"Loading model: {message.line}")

    def on_model_loaded(self, message: ModelLoaded) -> None:
        self.model = message.model
        self.status.model_name = message.model.name
        if message.model.context_size:
            self.status.context_size = message.model.context_size
        self.status.state = "ready"
        summary = f"\n{self.load_log[-1]}" if self.load_log and not self.load_log[-1].startswith(("loading ", "downloading ", "connecting ")) else ""
        self.loading_notice.update(f"Model ready: {message.model.name}{summary}")
        self.loading_notice.set_classes("notice-info")
        if self.pending_task is not None:
            text, self.pending_task = self.pending_task, None
            self._start_run(text)

    def on_model_load_failed(self, message: ModelLoadFailed) -> None:
        self.status.state = "no model"
        self.loading_notice.update(f"Could not load the model {message.spec}:\n{message.error}\n\n{LOAD_HELP}")
        self.loading_notice.set_classes("notice-error")

    # running the agent ---------------------------------------------------------------------
    def on_task_submitted(self, message: TaskSubmitted) -> None:
        prompt = self.query_one(PromptInput)
        if self.busy:
            prompt.value = message.text
            self.notify("The agent is still working: wait, or press Esc to interrupt it.", severity="warning")
            return
        self.chat.add_user(message.text)
        if self.model is None or self.wiring is None:
            if self.status.state in ("no model", "no policy"):
                prompt.value = message.text
                self.notify("Nothing can run; see the message above.", severity="error")
                self.chat.query("UserMessage").last().remove()
                return
            self.pending_task = message.text
            self.chat.add_notice("The task starts as soon as the model is ready.")
            return
        self._start_run(message.text)

    def _start_run(self, text: str) -> None:
        self.busy = True
        self.status.state = "working"
        self._run_worker = self._run_agent(text)

    @work(thread=True, exclusive=True, group="agent")
    def _run_agent(self, text: str) -> None:
        agent = self.agent or self._build_agent()
        if self.rewind_note:
            text, self.rewind_note = f"{self.rewind_note}\n\n{text}", ""
        if any(m.get("role") == "user" for m in agent.messages):
            agent.send(text)
        else:
            agent.run(text)

    def _build_agent(self) -> Agent:
        """Runs on the agent worker (the run patch snapshots the tree with git)."""
        from frogtui.vcs.repository import session_patch

        assert self.model is not None and self.wiring is not None
        wiring = self.wiring
        workspace = wiring.workspace
        agent = Agent(
            self.model,
            ToolRunner(workspace, wrap=wiring.sandbox_wrap),
            self.approver,
            UiSink(self.post_message, audit=self.session.log),
            limits=self.config.limits,
            before_action=wiring.checkpoints.before_action if wiring.checkpoints is not None else None,
            patch=session_patch(wiring.repo_state),
            on_step_end=self.session.save_trajectory,
            clock=self.clock,
        )
        if self.saved is not None:
            agent.restore(self.saved)
        self.agent = agent
        return agent

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._run_worker or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        self.busy = False
        self.status.state = "ready"
        if event.state == WorkerState.ERROR:
            self.chat.add_notice(f"The run stopped with an internal error: {event.worker.error!r}", "error")

    async def on_agent_event_posted(self, message: AgentEventPosted) -> None:
        event, chat, trace, status = message.event, self.chat, self.trace, self.status
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
            trace.update(event.call, decision=a.decision, by=a.by, rule=a.rule, status="allowed" if a.allowed else "denied", edited=edited, reason=a.reason)
        elif isinstance(event, ev.ToolStarted):
            trace.update(event.call, status="running")
            status.state = f"running {event.call.name}"
        elif isinstance(event, ev.ToolFinished):
            state = finished_state(event)
            trace.update(event.call, status=state, duration_s=event.duration_s if event.ran else None,
                         exit_code=event.exit_code, observation=event.observation)
            status.state = "working"
            self.refresh_git()
        elif isinstance(event, ev.StepUsage):
            status.context_used = event.context_tokens
            if event.usage.generated_tokens:
                status.tok_s = event.usage.gen_tok_s
        elif isinstance(event, ev.AssistantTurnEnded):
            await chat.end_turn()
        elif isinstance(event, ev.RunEnded):
            self._run_ended(event)
        if isinstance(event, (ev.ToolCallProposed, ev.ApprovalAnswered, ev.ToolStarted, ev.ToolFinished)):
            await chat.show_call(trace.entries[event.call.id])

    def _run_ended(self, event: ev.RunEnded) -> None:
        self.last_exit_reason = event.exit_reason
        if event.exit_reason == "cancelled":
            self.chat.add_notice("Interrupted. Send a message to continue.", "warning")
        elif event.exit_reason != "agent":
            detail = f": {event.error}" if event.error else ""
            self.chat.add_notice(f"The run ended ({event.exit_reason}){detail}", "error")
        session_view.save_trace(self.session, self.trace)
        self.refresh_git()

    def on_call_previewed(self, message: CallPreviewed) -> None:
        self.trace.update(message.call, diff=message.diff)

    def on_approval_requested(self, message: ApprovalRequested) -> None:
        self.trace.update(message.request.call, status="asking")
        self.chat.refresh_call(self.trace.entries[message.request.call.id])
        self.status.state = "waiting for you"
        self.push_screen(ApprovalScreen(message), callback=partial(self._approval_answered, message))

    def _approval_answered(self, message: ApprovalRequested, answer: Any) -> None:
        if answer is not None and not message.future.done():
            message.future.set_result(answer)
        self.status.state = "working" if self.busy else "ready"

    @work(thread=True, exclusive=True, group="git")
    def refresh_git(self) -> None:
        state = read_git_state(self.config.repo)
        self.call_from_thread(setattr, self.status, "git", state)

    def on_unmount(self) -> None:
        # never leave the agent's thread waiting on a question nobody can answer
        if self.agent is not None:
            self.agent.interrupt()
        self.approver.cancel_pending()

    # actions -------------------------------------------------------------------------------
    def action_interrupt(self) -> None:
        """Esc: stop generation or the running command; a waiting question is denied."""
        if not self.busy:
            return
        if self.agent is not None:
            self.agent.interrupt()
        self.approver.cancel_pending()
        if isinstance(self.screen, ApprovalScreen):
            self.screen.dismiss(None)
        self.status.state = "interrupting"

    async def action_quit_twice(self) -> None:
        now = self.clock()
        if now - self._last_ctrl_c > QUIT_WINDOW_S:
            self._last_ctrl_c = now
            self.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW_S)
            return
        await self.shutdown()

    async def shutdown(self) -> None:
        """Stop the run, save the session, and exit."""
        self.action_interrupt()
        worker = self._run_worker
        if worker is not None and worker.state == WorkerState.RUNNING:
            try:
                await asyncio.wait_for(worker.wait(), timeout=10)
            except (TimeoutError, WorkerFailed):
                pass
        session_view.save_trace(self.session, self.trace)
        if self.model is not None:
            self.model.close()
        self.exit(0)
