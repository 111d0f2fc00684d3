"""The session on the screen: chat, trace and status around the session core (model loading,
policy, the agent's runs, approvals). ``app.FrogApp`` adds the person's commands to it.

Threads: the model loads and the agent runs in ``@work(thread=True)`` workers; they reach the UI
only through messages (``UiSink``, the gate's ``ModalAsk``). Approvals block the worker on a ``Future``
that the approval modal resolves, so nothing runs while the modal is open.

While a run goes, what the person sends is queued (``ui/queue.py``) and sent when it ends; a run
that ends with ``max_context_len`` (the hand-off margin reached) offers the drafted hand-off
(``HandoffScreen``), and the fresh conversation runs as the session's next run.
"""
from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.worker import Worker, WorkerFailed, WorkerState

from frogtui.config import ApprovalMode, Config
from frogtui.errors import FrogtuiError
from frogtui.programs import at_start
from frogtui.ui import session_view
from frogtui.ui.asking import ModalAsk
from frogtui.ui.attempts_run import AttemptsInApp, parse
from frogtui.ui.chat import ChatPane, MainScreen, Notice, PromptInput
from frogtui.ui.footer import FittingFooter
from frogtui.ui.links import open_link
from frogtui.ui.long_session import LongSession
from frogtui.ui.messages import (
    BATCH_S,
    HOLD_S,
    AgentEventsPosted,
    GitRead,
    ModelLoaded,
    ModelLoadFailed,
    ModelLoadProgress,
    SessionBuilt,
    SessionWired,
    SetupFailed,
    TaskSubmitted,
    UiSink,
)
from frogtui.ui.pacing import FlatOut, PacedScreen, frame_due
from frogtui.ui.process import ProcessSettings
from frogtui.ui.queue import MessageQueue, QueuePanel
from frogtui.ui.state import SessionUiState
from frogtui.ui.status import StatusBar
from frogtui.ui.themes import DEFAULT_THEME, VARIABLE_DEFAULTS, ThemeCatalog, load_themes, remember_theme, start_theme
from frogtui.ui.trace import TracePane

if TYPE_CHECKING:  # the policy, git, the loop and its events are imported on the worker that prepares the session
    from frogtui.agent import events as ev
    from frogtui.approval import Approver
    from frogtui.protocol import Model
    from frogtui.session import Session
    from frogtui.session.core import ModelLoader, SessionCore

FIRST_FRAME_S = 0.3
"""The longest a run waits for the frame that shows the person's message before its loop starts."""
NOT_STARTED = "not started"
"""What the run's worker returns when Esc came before its loop started."""

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that end the app as Ctrl+C twice does (the session saved), rather than killing it."""

LOAD_HELP = (
    "Start again with another model: frogtui --model replay:FILE, --model PATH.gguf, "
    "--model hf:REPO:QUANT or --model http://HOST:PORT/v1; `frogtui doctor` checks the setup."
)


def on_a_terminal() -> bool:
    """Whether the app draws on a terminal (standard error: Textual's output), now."""
    try:
        return sys.__stderr__ is not None and os.isatty(sys.__stderr__.fileno())
    except (OSError, ValueError):
        return False


def terminal_gone(had_terminal: bool) -> bool:
    """True when the app's terminal (``had_terminal``: it started on one) was closed (hung up),
    after pointing standard input, output and error at ``/dev/null``: what is written from now on
    goes nowhere rather than failing. A ``kill -HUP`` leaves a live terminal alone; an app that
    never had one (tests, a pipe) is never told its terminal is gone."""
    if not had_terminal or on_a_terminal():
        return False
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return True


class SessionApp(AttemptsInApp, LongSession):
    """A ``SessionCore`` shown and run in the terminal; complete without the commands.

    Args:
        config: repository, model spec, limits, theme.
        resume: a saved session to continue (``--resume``), or None for a new one.
        themes: the themes to offer (default: read from the theme folders).
        model_loader: builds the model from its spec (default ``frogtui.models.load_model``).
        clock: monotonic seconds (Ctrl+C twice, load time, the agent's tool durations).
        prompt: text to put in the prompt at start (Enter sends it).
        note: a line shown first in the chat (``frogtui demo``: the replay ignores the answers).
    """

    TITLE = "frogtui"
    CSS_PATH = "app.tcss"

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        """A clicked link of the answer: ``ui.links.open_link`` (http and https only, the pinned
        opener), never ``webbrowser``'s search of ``PATH``."""
        problem = open_link(url, at_start().for_trees(self.config.repo))
        if problem is not None:
            self.notify(problem, severity="warning")

    def __init__(
        self, config: Config, *, resume: Session | None = None, themes: ThemeCatalog | None = None,
        model_loader: ModelLoader | None = None, clock: Callable[[], float] = time.monotonic, prompt: str = "", note: str = "",
    ) -> None:  # resume, model_loader and clock go to the SessionCore
        super().__init__()
        self.process_settings = ProcessSettings()  # the collector's freeze and the GIL switch interval, until unmount
        self.config = config
        self.initial_prompt = prompt
        """Text put in the prompt at start, not sent (``frogtui demo``'s task)."""
        self.initial_note = note
        self.clock = clock
        self.load_log: list[str] = []
        """Progress lines of the model load (download, loading, the settings chosen)."""
        self.catalog = themes or load_themes()
        self.theme_warnings = start_theme(self, config.theme or DEFAULT_THEME, self.catalog)
        self._core_args = (resume, model_loader)
        self._core: SessionCore | None = None
        self._core_lock = threading.Lock()
        self.state = SessionUiState()
        self.model: Model | None = None
        """The model, once the app was told it is loaded."""
        self.busy = False
        self.flat_out = FlatOut()
        """When the loop last worked flat out, or started: frames are paced (ui/pacing.py)."""
        self.run_ended_at = 0.0
        """When the run's end was shown (monotonic; 0 while it runs): its worker may still save it (ui/pacing.py)."""
        self._sink: UiSink | None = None
        """The loop's sink (the session core keeps the first one it was given)."""
        self.approval_mode: ApprovalMode = config.approve
        self.asking = ModalAsk(self.post_message)
        """The app's way to ask the person (the approval modal)."""
        self.approver: Approver | None = None
        """The gate (``approval.Approver``), built when the session is wired (the policy is loaded then)."""
        self.setup_error: str | None = None
        self._run_worker: Worker[Any] | None = None
        self._run_text = ""
        """The message the current (or last) run was started with."""
        self.queue = MessageQueue()
        """Messages typed while the agent works, sent one by one as each run ends."""
        self.interrupting = False
        """Esc was pressed during the current run: a message sent now goes first, at once."""
        self.closing = False
        """``shutdown`` has shown the run's last events and saved the session: nothing more is
        shown or started (the screen's widgets go away while the app's last messages are handled)."""
        self._exiting: asyncio.Task[None] | None = None
        self._had_terminal = on_a_terminal()
        self._hung_up = False
        """The terminal was closed: once the session is saved, the process ends there (Textual's
        exit would wait for ever on its writer thread, dead from writing to the closed terminal)."""

    @property
    def core(self) -> SessionCore:
        """The session: policy, sandbox, checkpoints, the agent. Built (with its imports) on the
        worker that prepares the session, after the first paint; here only if needed before."""
        with self._core_lock:
            if self._core is None:
                from frogtui.session.core import SessionCore

                resume, model_loader = self._core_args
                self._core = SessionCore(self.config, resume=resume, model_loader=model_loader, clock=self.clock, handoff=True)
            return self._core

    @property
    def session(self) -> Session:
        return self.core.session

    @property
    def last_exit_reason(self) -> str | None:
        return self.state.last_exit_reason

    # layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield ChatPane(id="chat")
            yield TracePane(id="trace")
        yield QueuePanel(id="queue")
        yield PromptInput(id="prompt")
        yield StatusBar(id="status")
        yield FittingFooter()

    def get_default_screen(self) -> MainScreen:
        return MainScreen(id="_default")

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
        self.process_settings.start()  # the GIL switch interval (process.py)
        self._on_signals(self._signalled)
        self.theme_changed_signal.subscribe(self, lambda theme: remember_theme(theme.name))  # F3, the palette
        for warning in self.theme_warnings:
            self.notify(warning, severity="warning")
        status = self.status
        status.max_steps = self.config.limits.max_steps
        status.context_size = self.config.limits.max_context_tokens
        status.handoff_margin = self.config.limits.handoff_margin
        status.approval_mode = self.approval_mode
        status.model_name = self.config.model_spec
        prompt = self.query_one(PromptInput)  # focused already (MainScreen.AUTO_FOCUS)
        if self.initial_note:
            self.chat.add_notice(self.initial_note, "warning")
        if self.initial_prompt:
            prompt.value = self.initial_prompt
            prompt.cursor_position = len(prompt.value)
            self.chat.add_notice(f"The task is in the prompt below: press Enter to send it.\n{self.initial_prompt}")
        self.status.state = "loading"
        self.loading_notice: Notice | None = None
        if self._core_args[0] is None:  # a resumed session's chat comes first (_restore)
            self.loading_notice = self.chat.add_notice(f"Loading model {self.config.model_spec} …", "loading")
        self.call_after_refresh(self._prepare, True)  # after the first paint: its imports would hold the GIL

    def on_session_built(self, _message: SessionBuilt) -> None:
        """Show the resumed session's conversation, then the loading line (on the UI thread)."""
        if self.core.saved is not None:
            rows = session_view.load_trace(self.session)
            steps = session_view.restore_view(self.chat, self.trace, self.status, self.core.saved, rows, self.session.notices(),
                                              earlier=self.core.chain[:-1])
            counted = "1 step" if steps == 1 else f"{steps} steps"
            self.chat.add_notice(f"Resumed session {self.session.id} ({counted}). Send a message to continue.")
        if self._core_args[0] is not None:  # its last task ran as attempts: their table again (ui/attempts_run.py)
            self.reopen_attempts()
        if self.loading_notice is None:
            self.loading_notice = self.chat.add_notice(f"Loading model {self.config.model_spec} …", "loading")

    # session setup and model loading -----------------------------------------------------
    @work(thread=True, exclusive=True, group="prepare")
    def _prepare(self, load: bool) -> None:
        if load:  # the first time: build the session here, off the UI thread, then show it
            _ = self.core
            self.post_message(SessionBuilt())  # handled before the messages posted below
            self.refresh_git()
        try:
            self.core.prepare()
        except FrogtuiError as err:
            self.post_message(SetupFailed(str(err)))
            return
        self.post_message(SessionWired(self.core.notes))
        if not load:
            return
        started = self.clock()
        try:
            model = self.core.load_model(report=lambda line: self.post_message(ModelLoadProgress(line)))
        except FrogtuiError as err:
            self.post_message(ModelLoadFailed(self.config.model_spec, str(err)))
            return
        self.post_message(ModelLoaded(model, self.clock() - started))
        import frogtui.ui.answer  # noqa: F401  Markdown (~0.1-0.2 s), here rather than on the UI thread at the first answer

    def on_session_wired(self, message: SessionWired) -> None:
        self.state.wired = True
        self.asking.sandboxed = self.core.sandboxed
        self.approver = self.core.gate(self.approval_mode, ask=self.asking.ask, show=self.asking.show)
        self.status.sandbox = self.asking.sandboxed
        self.status.sandbox_weak = self.core.sandbox_weak
        for note in message.notes:  # the warnings, which python Bash runs, AGENTS.md
            if note.topic == "python" and (not note.text or "the PATH frogtui was started with" in note.text):
                continue  # frogtui's own environment, not the project's: nothing to say
            self.chat.add_notice(note.text, "warning" if note.warning else "info")

    def on_setup_failed(self, message: SetupFailed) -> None:
        self.setup_error = message.error
        self.status.state = "no policy"
        self.chat.add_notice(f"Cannot start: {message.error}\nFix the file and start frogtui again; nothing will run until then.", "error")

    def on_model_load_progress(self, message: ModelLoadProgress) -> None:
        self.load_log.append(message.line)
        self.loading_notice.update(f"Loading model: {message.line}")

    def on_model_loaded(self, message: ModelLoaded) -> None:
        self.model = message.model
        self.status.model_name = message.model.name
        if message.model.context_size:  # the budget is the smaller of the two (Agent.context_budget)
            self.status.context_size = min(self.config.limits.max_context_tokens, message.model.context_size)
        self.status.state = "ready"
        summary = (
            f"\n{self.load_log[-1]}"
            if self.load_log and not self.load_log[-1].startswith(("loading ", "downloading ", "connecting "))
            else ""
        )
        self.loading_notice.update(f"Model ready: {message.model.name}{summary}")
        self.loading_notice.set_classes("notice-info")
        if self.state.pending_task is not None:
            text, self.state.pending_task = self.state.pending_task, None
            self._start_run(text)

    def on_model_load_failed(self, message: ModelLoadFailed) -> None:
        self.status.state = "no model"
        self.loading_notice.update(f"Could not load the model {message.spec}:\n{message.error}\n\n{LOAD_HELP}")
        self.loading_notice.set_classes("notice-error")

    # running the agent ---------------------------------------------------------------------
    async def on_task_submitted(self, message: TaskSubmitted) -> None:
        prompt = self.query_one(PromptInput)
        if self.busy:  # queued; after Esc it goes first, as soon as the run has stopped
            if not message.text:
                return
            self.queue.add(message.text, self.status.step, now=self.interrupting)
            await self.query_one(QueuePanel).show(self.queue)
            return
        if not message.text:  # Enter on the empty prompt sends the next queued message
            await self._send_queued()
            return
        if (attempts := parse(message.text)) is not None:  # /attempts N TASK (ui/attempts_run.py)
            if isinstance(attempts, str) or self.model is None or not self.state.wired:
                prompt.value = message.text
                self.notify(attempts if isinstance(attempts, str) else "The model is not ready yet.", severity="warning")
            else:
                self.start_attempts(*attempts)
            return
        self.chat.add_user(message.text)
        if self.model is None or not self.state.wired:
            if self.status.state in ("no model", "no policy"):
                prompt.value = message.text
                self.notify("Nothing can run; see the message above.", severity="error")
                self.chat.query("UserMessage").last().remove()
                return
            self.state.pending_task = message.text
            self.chat.add_notice("The task starts as soon as the model is ready.")
            return
        self._start_run(message.text)

    def _start_run(self, text: str, *, handoff: bool = False) -> None:
        self.busy, self.interrupting, self.run_ended_at, self._run_text = True, False, 0.0, text
        self.status.state = "working"
        drawn = None
        if not handoff:  # the loop starts once the screen shows the person's message (or after FIRST_FRAME_S)
            drawn = threading.Event()
            self.call_after_refresh(drawn.set)
        self._run_worker = self._run_agent(text, handoff, drawn)

    @work(thread=True, exclusive=True, group="agent", exit_on_error=False)  # an error is a notice (on_worker_state_changed)
    def _run_agent(self, text: str, handoff: bool = False, drawn: threading.Event | None = None) -> str | None:
        if drawn is not None:  # the frame that shows the person's message is drawn first, not while the loop needs the GIL
            drawn.wait(FIRST_FRAME_S)
            if self.interrupting:  # Esc before the loop started: nothing was sent (on_worker_state_changed)
                return NOT_STARTED
        self.flat_out.at = time.monotonic()
        self.forget_attempts()  # a plain run: a resume no longer reopens an attempts table (ui/attempts_run.py)
        assert self.approver is not None, "a run starts once the session is wired"
        self.core.start(self.approver, UiSink(self.post_message, stepped=self.flat_out.note))  # the core logs the decisions
        self._sink = self.core.sink if isinstance(self.core.sink, UiSink) else None
        if handoff:
            self.core.hand_off(text)
        else:
            self.core.send(text)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._run_worker or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if self.closing:  # shutdown showed its end and saved the session; nothing starts now
            return
        await self._show_held_events()
        self.busy, self.status.state = False, "ready"
        self.refresh_git()  # the run's last writes (checkpoint refs, the session) are done
        if event.state == WorkerState.SUCCESS and event.worker.result == NOT_STARTED:
            await self._not_started()
        elif event.state == WorkerState.ERROR:
            await self.chat.end_turn()  # what the model wrote stays above the notice, its reasoning folded
            self.chat.add_notice(f"The run stopped with an internal error: {event.worker.error!r}", "error")
        elif self.state.last_exit_reason == "max_context_len":
            self.draft_handoff("max_context_len")  # the queue waits until the person has answered
        else:
            self.call_later(self._send_queued, after_interrupt=self.state.last_exit_reason == "cancelled")

    async def on_agent_events_posted(self, message: AgentEventsPosted) -> None:
        """The loop's events, in order; while it works flat out, no sooner than the next frame: asked
        again then (an asyncio timer), the app's queue free meanwhile for keys; a message the loop
        posts after them shows them first (``_show_held_events``)."""
        if self.closing:
            return
        events = await message.take(ready=lambda: frame_due(self))
        if self.closing:
            return
        if events is None:
            screen = self.screen if self.screen_stack else None
            delay = max(BATCH_S, min(screen.pacer.wait(True), HOLD_S)) if isinstance(screen, PacedScreen) else BATCH_S
            asyncio.get_running_loop().call_later(delay, self.post_message, AgentEventsPosted(message.take))
        elif events:  # (none: shown already, or the app is closing)
            await self._show(events)

    async def _show_held_events(self) -> None:
        """Show the loop's events held back for a frame, before a message it posted after them."""
        if self._sink is not None and (events := self._sink.take()):
            await self._show(events)

    async def _show(self, events: list[ev.AgentEvent]) -> None:
        from frogtui.ui.event_view import show_events

        await show_events(events, self.chat, self.trace, self.status, refresh_git=self.refresh_git, run_ended=self._run_ended)

    @property
    def agent_events_at(self) -> float:
        """When the loop last worked flat out, or started (monotonic; ui/pacing.py)."""
        return self.flat_out.at

    def _run_ended(self, event: ev.RunEnded) -> None:
        from frogtui.ui.event_view import show_run_end

        self.state.last_exit_reason, self.run_ended_at = event.exit_reason, time.monotonic()
        show_run_end(self.chat, event)
        session_view.save_trace(self.session, self.trace)

    @work(thread=True, exclusive=True, group="git")
    def refresh_git(self) -> None:
        self.post_message(GitRead(self.core.git_state()))  # never waits for the UI (it may be closing)

    def on_git_read(self, message: GitRead) -> None:
        for status in self.query(StatusBar):
            status.git = message.state

    def on_unmount(self) -> None:
        self._on_signals(None)
        self.process_settings.restore()
        # never leave the agent's thread waiting on a question nobody can answer
        self.core.interrupt()
        self.asking.cancel_pending()

    def _on_signals(self, handler: Callable[[int], None] | None) -> None:
        """Handle ``EXIT_SIGNALS`` with ``handler`` (None: as before). Only the main thread's loop
        can: elsewhere (an app run in a thread) nothing changes."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for number in EXIT_SIGNALS:
            if handler is None:
                loop.remove_signal_handler(number)
            else:
                loop.add_signal_handler(number, handler, number)

    def _signalled(self, number: int) -> None:
        """SIGTERM (``kill``, ``timeout``, CI) or SIGHUP (the terminal closed): leave as Ctrl+C twice
        does, with the shell's status for the signal (128 + its number)."""
        if number == signal.SIGHUP and terminal_gone(self._had_terminal):
            self._hung_up = True
        if self._exiting is None:
            self._exiting = asyncio.ensure_future(self.shutdown(128 + number))

    def panic(self, *renderables: Any) -> None:
        """Textual's input thread fails (EIO) when the terminal is closed, maybe before SIGHUP
        arrives: leave as for SIGHUP (the session saved), not with a traceback nobody can see."""
        if not self.closing and terminal_gone(self._had_terminal):
            self._hung_up = True
            if self._exiting is None:
                self._exiting = asyncio.ensure_future(self.shutdown(128 + signal.SIGHUP))
            return
        super().panic(*renderables)

    async def shutdown(self, status: int = 0) -> None:
        """Stop the run, show its last events, save the session, and exit with ``status``."""
        if self.closing:
            return
        self.interrupt()
        worker = self._run_worker
        if worker is not None and worker.state == WorkerState.RUNNING:
            try:
                await asyncio.wait_for(worker.wait(), timeout=10)
            except (TimeoutError, WorkerFailed):
                pass
        if not self.closing:  # a second way out (a signal during Ctrl+C's wait) found it done
            await self._show_held_events()
            self.closing = True
            session_view.save_trace(self.session, self.trace)
            self.core.close()
            if self._hung_up:
                self.process_settings.restore()
                atexit._run_exitfuncs()  # what a normal exit cleans up (the seccomp filter's folder)
                os._exit(status)
            self.exit(status)
