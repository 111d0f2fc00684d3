"""The session on the screen: chat, trace and status around the session core (model loading,
policy, the agent's runs, approvals). ``app.FrogApp`` adds the person's commands to it.

Threads: the model loads and the agent runs in ``@work(thread=True)`` workers; they reach the UI
only through messages (``UiSink``, the gate's ``ModalAsk``). Approvals block the worker on a ``Future``
that the approval modal resolves, so nothing runs while the modal is open.

Where the session stands is one value, ``run_state`` (``ui/run_state.py``): each thing that happens
(a message sent, Esc, a run's end, the model loaded or not) is a transition of it, which says
what to do; ``act`` assigns the new state (the status bar draws it) and does that. The topics
around the run are their own modules: the queue (``queue.py``, ``QueueInApp``), the hand-off
(``handoff.py``, ``HandoffInApp``), the attempts (``attempts_run.py``, ``AttemptsInApp``) and the
signals and a closed terminal (``exits.py``, ``ExitsInApp``).
"""
from __future__ import annotations

import asyncio
import atexit
import os
import signal
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.filter import LineFilter
from textual.reactive import reactive
from textual.worker import Worker, WorkerFailed, WorkerState

from frogtui.config import ApprovalMode, Config
from frogtui.errors import FrogtuiError
from frogtui.programs import at_start
from frogtui.ui import session_view
from frogtui.ui.asking import ModalAsk
from frogtui.ui.attempts_run import AttemptsInApp, parse
from frogtui.ui.chat import ChatPane, MainScreen, Notice, PromptInput
from frogtui.ui.exits import ExitsInApp
from frogtui.ui.footer import FittingFooter
from frogtui.ui.from_workers import call_while_shown
from frogtui.ui.handoff import HandoffInApp
from frogtui.ui.links import open_link
from frogtui.ui.messages import (
    BATCH_S,
    HOLD_S,
    AgentEventsPosted,
    ApprovalRequested,
    CallPreviewed,
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
from frogtui.ui.notify import Attention
from frogtui.ui.pacing import HOT_S, FlatOut, FrameHold
from frogtui.ui.process import ProcessSettings
from frogtui.ui.queue import QueueInApp, QueuePanel
from frogtui.ui.run_state import (
    QUIT_WINDOW_S,
    Action,
    Attempts,
    Hold,
    Interrupt,
    KeepConversation,
    NotStarted,
    OfferHandoff,
    Queue,
    Quit,
    Refuse,
    RunState,
    SendNext,
    ShowError,
    Start,
    Transition,
    WarnQuit,
)
from frogtui.ui.slash import PromptSuggester, attachments_notice, repository_files
from frogtui.ui.status import StatusBar
from frogtui.ui.terminal_safety import ControlFilter
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

LOAD_HELP = (
    "Start again with another model: frogtui --model replay:FILE, --model PATH.gguf, "
    "--model hf:REPO:QUANT or --model http://HOST:PORT/v1; `frogtui doctor` checks the setup."
)


class SessionApp(AttemptsInApp, HandoffInApp, QueueInApp, ExitsInApp):
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
    CONTROL_FILTER = ControlFilter()

    run_state: reactive[RunState] = reactive(RunState(), init=False)
    """Where the session stands (``ui/run_state.py``); the status bar draws it."""

    def open_url(self, url: str, *, new_tab: bool = True) -> None:
        """A clicked link of the answer: ``ui.links.open_link`` (http and https only, the pinned
        opener), never ``webbrowser``'s search of ``PATH``."""
        problem = open_link(url, at_start().for_trees(self.config.repo))
        if problem is not None:
            self.notify(problem, severity="warning")

    def get_line_filters(self) -> list[LineFilter]:
        """Textual's filters, then ``ControlFilter``: applied to every line of every widget."""
        return [*super().get_line_filters(), self.CONTROL_FILTER]

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
        self.model: Model | None = None
        """The model, once the app was told it is loaded."""
        self.flat_out = FlatOut()
        """When the loop last worked flat out, or started: frames are paced (ui/pacing.py)."""
        self.frames = FrameHold(self, hot=self._loop_hot, before_frame=self.show_held_events)
        """Holds the repaints while the loop works flat out, and the run's end for its worker (ui/pacing.py)."""
        self._sink: UiSink | None = None
        """The loop's sink (the session core keeps the first one it was given)."""
        self.approval_mode: ApprovalMode = config.approve
        self.asking = ModalAsk(self.post_message)
        """The app's way to ask the person (the approval modal)."""
        self.approver: Approver | None = None
        """The gate (``approval.Approver``), built when the session is wired (the policy is loaded then)."""
        self._run_worker: Worker[Any] | None = None
        self.loading_notice: Notice | None = None
        self._files: list[str] | None = None
        self.attention = Attention(config.ui.notify, self._write_to_terminal)
        """The bell and desktop notification when frogtui waits (``ui/notify.py``, ``[ui] notify``)."""
        self.fresh_conversation = False
        """``/clear``: the next message starts a fresh conversation in this session."""

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

    # the run state -------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """A run (or the attempts) goes."""
        return self.run_state.busy

    @property
    def last_exit_reason(self) -> str | None:
        return self.run_state.last_exit_reason

    @property
    def setup_error(self) -> str | None:
        """Why the session could not be prepared (its rules), None when it could."""
        return self.run_state.error if self.run_state.failure == "no policy" else None

    def watch_run_state(self, state: RunState) -> None:
        for status in self.query(StatusBar):
            status.run_state = state

    def move(self, transition: Transition) -> Action:
        """Take the transition's state; the action is the caller's to do."""
        self.run_state = transition.state
        return transition.action

    async def act(self, transition: Transition) -> None:
        """Take the transition's state and do its action."""
        await self.do(self.move(transition))

    async def do(self, action: Action) -> None:
        """Do what the run state said (the actions that need what the person typed are ``on_task_submitted``'s)."""
        if isinstance(action, Start):
            self._start_run(action.text, handoff=action.handoff)
        elif isinstance(action, Queue):
            await self.queue_message(action.text, first=action.first)
        elif isinstance(action, SendNext):
            await self._send_queued(after_interrupt=action.after_interrupt)
        elif isinstance(action, NotStarted):
            await self._not_started(action.text)
        elif isinstance(action, OfferHandoff):
            self.draft_handoff(action.ended)
        elif isinstance(action, KeepConversation):
            self.chat.add_notice("Kept this conversation. Ctrl+P → Hand off starts a fresh one when you want.", "warning")
            await self._send_queued()
        elif isinstance(action, Interrupt):
            self._stop_run()
        elif isinstance(action, WarnQuit):
            self.notify("Press Ctrl+C again to quit.", timeout=QUIT_WINDOW_S)
        elif isinstance(action, Quit):
            await self.shutdown()

    # layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield ChatPane(id="chat")
            yield TracePane(id="trace")
        yield QueuePanel(id="queue")
        yield PromptInput(id="prompt", suggester=PromptSuggester(self.repository_files))
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
        self.theme_changed_signal.subscribe(self, lambda theme: remember_theme(theme.name))  # F3, the palette
        for warning in self.theme_warnings:
            self.notify(warning, severity="warning")
        status = self.status
        status.max_steps = self.config.limits.max_steps
        status.context_size = self.config.limits.max_context_tokens
        status.handoff_margin = self.config.limits.handoff_margin
        status.approval_mode = self.approval_mode
        status.model_name = self.config.model_spec
        status.run_state = self.run_state
        prompt = self.query_one(PromptInput)  # focused already (MainScreen.AUTO_FOCUS)
        if self.initial_note:
            self.chat.add_notice(self.initial_note, "warning")
        if self.initial_prompt:
            prompt.value = self.initial_prompt
            prompt.cursor_position = len(prompt.value)
            self.chat.add_notice(f"The task is in the prompt below: press Enter to send it.\n{self.initial_prompt}")
        if self._core_args[0] is None:  # a resumed session's chat comes first (_restore)
            self.loading_notice = self.chat.add_notice(f"Loading model {self.config.model_spec} …", "loading")
        self.call_after_refresh(self._prepare, True)  # after the first paint: its imports would hold the GIL
        self.frames.time_next_frame()  # the first paint's cost: the first burst's frames are paced on it

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

    async def on_session_wired(self, message: SessionWired) -> None:
        self.asking.sandboxed = self.core.sandboxed
        self.approver = self.core.gate(self.approval_mode, ask=self.asking.ask, show=self.asking.show)
        if self.approval_mode != self.config.approve:  # changed (F2) before the session was wired, or a new task's
            self.core.mode_changed(self.approval_mode)
        self.status.sandbox = self.asking.sandboxed
        self.status.sandbox_weak = self.core.sandbox_weak
        for note in message.notes:  # the warnings, which python Bash runs, AGENTS.md
            if note.topic == "python" and (not note.text or "the PATH frogtui was started with" in note.text):
                continue  # frogtui's own environment, not the project's: nothing to say
            self.chat.add_notice(note.text, "warning" if note.warning else "info")
        await self.act(self.run_state.session_wired())  # a message sent before may start now

    def on_setup_failed(self, message: SetupFailed) -> None:
        self.move(self.run_state.setup_failed(message.error))
        self.chat.add_notice(f"Cannot start: {message.error}\nFix the file and start frogtui again; nothing will run until then.", "error")

    def on_model_load_progress(self, message: ModelLoadProgress) -> None:
        self.load_log.append(message.line)
        self.loading_notice.update(f"Loading model: {message.line}")

    async def on_model_loaded(self, message: ModelLoaded) -> None:
        self.model = message.model
        self.status.model_name = message.model.name
        if message.model.context_size:  # the budget is the smaller of the two (Agent.context_budget)
            self.status.context_size = min(self.config.limits.max_context_tokens, message.model.context_size)
        summary = (
            f"\n{self.load_log[-1]}"
            if self.load_log and not self.load_log[-1].startswith(("loading ", "downloading ", "connecting "))
            else ""
        )
        self.loading_notice.update(f"Model ready: {message.model.name}{summary}")
        self.loading_notice.set_classes("notice-info")
        buffers_note = getattr(message.model, "buffers_note", "")  # a local model without llama.cpp's extra buffers
        if buffers_note:
            self.chat.add_notice(buffers_note, "warning")
        await self.act(self.run_state.model_loaded())  # a message sent before starts now

    def on_model_load_failed(self, message: ModelLoadFailed) -> None:
        self.move(self.run_state.load_failed(message.error))
        self.loading_notice.update(f"Could not load the model {message.spec}:\n{message.error}\n\n{LOAD_HELP}")
        self.loading_notice.set_classes("notice-error")

    # running the agent ---------------------------------------------------------------------
    def _write_to_terminal(self, text: str) -> None:
        """An escape for the terminal, in order with the frames (Textual's own ``bell`` and
        ``copy_to_clipboard`` write through the driver the same way; there is no public call)."""
        driver = self._driver
        if driver is not None and not self.is_headless:
            driver.write(text)

    def call_attention(self, title: str, text: str) -> None:
        """Ring and notify if ``[ui] notify`` wants it now (the window's focus as the terminal reports it)."""
        self.attention.ring(self.app_focus, title, text)

    def repository_files(self) -> list[str]:
        """The repository's files for ``@`` completion, walked once per session (``ui/slash.py``)."""
        if self._files is None:
            self._files = repository_files(self.config.repo)
        return self._files

    async def on_task_submitted(self, message: TaskSubmitted) -> None:
        text = message.text
        attempts = parse(text) if text else None  # /attempts N TASK (ui/attempts_run.py)
        transition = self.run_state.submitted(text, attempts=attempts is not None)
        action = transition.action
        if isinstance(attempts, str) and isinstance(action, (Attempts, Refuse)):
            action = Refuse(attempts, "warning")  # the command's own problem first
        if isinstance(action, Refuse):
            self.move(transition)
            self.query_one(PromptInput).value = text
            self.notify(action.why, severity=action.severity)
        elif isinstance(action, Attempts):
            self.move(transition)
            assert attempts is not None and not isinstance(attempts, str)
            self.start_attempts(*attempts)
        elif isinstance(action, Hold):
            self.move(transition)
            self.chat.add_user(text)
            self.chat.add_notice("The task starts as soon as the model is ready.")
        else:
            if isinstance(action, Start):
                self.chat.add_user(text)
            await self.act(transition)

    def _start_run(self, text: str, *, handoff: bool = False) -> None:
        """Start the run the run state started (``Start``)."""
        if self.fresh_conversation and self.core.started:  # /clear: a fresh Leaf conversation, same session
            handoff = True
        self.fresh_conversation = False
        drawn = None
        if not handoff:  # the loop starts once the screen shows the person's message (or after FIRST_FRAME_S)
            drawn = threading.Event()
            self.call_after_refresh(drawn.set)
        self._run_worker = self._run_agent(text, handoff, drawn)

    @work(thread=True, exclusive=True, group="agent", exit_on_error=False)  # an error is a notice (on_worker_state_changed)
    def _run_agent(self, text: str, handoff: bool = False, drawn: threading.Event | None = None) -> str | None:
        if drawn is not None:  # the frame that shows the person's message is drawn first, not while the loop needs the GIL
            drawn.wait(FIRST_FRAME_S)
            if self.run_state.interrupting:  # Esc before the loop started: nothing was sent (on_worker_state_changed)
                return NOT_STARTED
        self.flat_out.at = time.monotonic()
        self.forget_attempts()  # a plain run: a resume no longer reopens an attempts table (ui/attempts_run.py)
        assert self.approver is not None, "a run starts once the session is wired"
        self.core.start(self.approver, UiSink(self.post_message, stepped=self.flat_out.note))  # the core logs the decisions
        self._sink = self.core.sink if isinstance(self.core.sink, UiSink) else None
        if "@" in text:  # @path mentions: the files' text attached (session/mentions.py)
            mentioned = self.core.attach(text)
            if mentioned.attached or mentioned.refused:
                notice, kind = attachments_notice(mentioned), "warning" if mentioned.refused else "info"
                call_while_shown(self, lambda: self.chat.add_notice(notice, kind))
            text = mentioned.text
        if handoff:
            self.core.hand_off(text)
        else:
            self.core.send(text)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._run_worker or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if self.run_state.closed:  # shutdown showed its end and saved the session; nothing starts now
            return
        await self.show_held_events()
        if event.state == WorkerState.SUCCESS and event.worker.result == NOT_STARTED:
            outcome = "not started"
        else:
            outcome = "error" if event.state == WorkerState.ERROR else "done"
        action = self.move(self.run_state.worker_ended(outcome))
        self.frames.release()
        self.refresh_git()  # the run's last writes (checkpoint refs, the session) are done
        if isinstance(action, ShowError):
            await self.chat.end_turn()  # what the model wrote stays above the notice, its reasoning folded
            self.chat.add_notice(f"The run stopped with an internal error: {event.worker.error!r}", "error")
            self.call_attention("frogtui failed", f"{self.config.repo.name}: the run stopped with an internal error")
        elif isinstance(action, SendNext):
            self.call_later(self._send_queued, after_interrupt=action.after_interrupt)
        else:  # the message not sent given back; the hand-off drafted (the queue waits until the person has answered)
            await self.do(action)

    async def _send_queued(self, *, after_interrupt: bool = False) -> None:
        """Send the next queued message (after an interrupt only one typed after Esc)."""
        text = await self.next_queued(after_interrupt=after_interrupt)
        if text is not None:
            await self.act(self.run_state.start(text))

    async def _not_started(self, text: str) -> None:
        """Esc came before the run's loop started: nothing was sent; the message goes back in the
        prompt, or first in the queue when something is being typed there."""
        prompt = self.query_one(PromptInput)
        bubbles = self.chat.query("UserMessage")
        if bubbles:  # not sent: not shown as sent either
            await bubbles.last().remove()
        if not prompt.value.strip():
            prompt.value, where = text, "it is back in the prompt"
        else:
            await self.queue_unsent(text)
            where = "it waits in the queue"
        self.chat.add_notice(f"Interrupted before the run started: the message was not sent ({where}).", "warning")
        self.call_later(self._send_queued, after_interrupt=True)

    def interrupt(self, why: str = "") -> None:
        """Esc: stop generation or the running command (and the attempts); a waiting question is
        denied (a message sent now goes first, at once). ``why``: a stop that is not the person's
        (a signal), told to the model as that."""
        if isinstance(self.move(self.run_state.interrupt()), Interrupt):
            self._stop_run(why)

    def _stop_run(self, why: str = "") -> None:
        if self.attempts_stop is not None:  # each attempt ends cancelled; the table still comes
            self.attempts_stop()
        self.core.interrupt(why)
        self.asking.cancel_pending()
        from frogtui.ui.approval_screen import ApprovalScreen

        if isinstance(self.screen, ApprovalScreen):
            self.screen.dismiss(None)

    # the loop's events and questions --------------------------------------------------------
    async def on_agent_events_posted(self, message: AgentEventsPosted) -> None:
        """The loop's events, in order; while it works flat out, no sooner than the next frame: asked
        again then (an asyncio timer), the app's queue free meanwhile for keys; a message the loop
        posts after them shows them first (``show_held_events``)."""
        if self.run_state.closed:
            return
        self.frames.check()
        events = await message.take(ready=self.frames.frame_due)
        if self.run_state.closed:
            return
        if events is None:
            delay = max(BATCH_S, min(self.frames.wait(), HOLD_S))
            asyncio.get_running_loop().call_later(delay, self.post_message, AgentEventsPosted(message.take))
        elif events:  # (none: shown already, or the app is closing)
            await self._show(events)
            self.frames.shown()

    async def show_held_events(self) -> None:
        """Show the loop's events held back for a frame, before a message it posted after them."""
        if self._sink is not None and (events := self._sink.take()):
            await self._show(events)

    async def _show(self, events: list[ev.AgentEvent]) -> None:
        from frogtui.ui.event_view import show_events

        await show_events(events, self.chat, self.trace, self.status, refresh_git=self.refresh_git, run_ended=self._run_ended,
                          tool=self._tool)

    def _tool(self, name: str | None) -> None:
        """The run's call started running tool ``name``, or finished (None)."""
        self.move(self.run_state.tool_started(name) if name is not None else self.run_state.tool_finished())

    @property
    def agent_events_at(self) -> float:
        """When the loop last worked flat out, or started (monotonic; ui/pacing.py)."""
        return self.flat_out.at

    def _loop_hot(self) -> bool:
        """A run goes and its loop works flat out (or has just started), on the main screen: its
        frames are paced. Never while a question waits (the loop waits too) or over a modal."""
        if not self.run_state.busy or self.run_state.asking or not self.screen_stack or self.screen is not self.screen_stack[0]:
            return False
        return time.monotonic() - self.flat_out.at < HOT_S

    def _run_ended(self, event: ev.RunEnded) -> None:
        from frogtui.ui.event_view import show_run_end

        self.move(self.run_state.run_ended(event.exit_reason))
        done = event.exit_reason == "agent"
        self.call_attention("frogtui finished" if done else "frogtui stopped",
                            f"{self.config.repo.name}: " + ("the run ended" if done else f"the run ended: {event.exit_reason}"))
        self.frames.hold_for_the_worker()  # one frame shows the end and "ready" (on_worker_state_changed)
        show_run_end(self.chat, event)
        session_view.save_trace(self.session, self.trace)

    async def on_call_previewed(self, message: CallPreviewed) -> None:
        await self.show_held_events()  # the call's row first
        self.trace.update(message.call, diff=message.diff)

    async def on_approval_requested(self, message: ApprovalRequested) -> None:
        if message.future.done():  # answered already (interrupted, the app closing): nobody waits
            return
        await self.show_held_events()  # the call's row and line first
        self.trace.update(message.request.call, status="asking")
        self.chat.refresh_call(self.trace.entries[message.request.call.id])
        self.move(self.run_state.asked(True))
        self.call_attention("frogtui waits for you", f"May it run {message.request.call.name}? ({self.config.repo.name})")
        self.frames.release()  # the question shows at once
        from frogtui.ui.approval_screen import ApprovalScreen  # with its diff viewer, at the first question

        self.push_screen(ApprovalScreen(message), callback=partial(self._approval_answered, message))

    def _approval_answered(self, message: ApprovalRequested, answer: Any) -> None:
        if answer is not None and not message.future.done():
            message.future.set_result(answer)
        self.move(self.run_state.asked(False))

    @work(thread=True, exclusive=True, group="git")
    def refresh_git(self) -> None:
        self.post_message(GitRead(self.core.git_state()))  # never waits for the UI (it may be closing)

    def on_git_read(self, message: GitRead) -> None:
        for status in self.query(StatusBar):
            status.git = message.state

    # leaving -------------------------------------------------------------------------------
    def on_unmount(self) -> None:
        self.process_settings.restore()
        # never leave the agent's thread waiting on a question nobody can answer
        self.core.interrupt()
        self.asking.cancel_pending()

    async def shutdown(self, status: int = 0) -> None:
        """Stop the run, show its last events, save the session, and exit with ``status``."""
        if self.run_state.closed:
            return
        signalled = status > 128 and status - 128 in (signal.SIGTERM, signal.SIGHUP)
        self.interrupt(f"frogtui was stopped by {signal.Signals(status - 128).name}" if signalled else "")
        worker = self._run_worker
        if worker is not None and worker.state == WorkerState.RUNNING:
            try:
                await asyncio.wait_for(worker.wait(), timeout=10)
            except (TimeoutError, WorkerFailed):
                pass
        if not self.run_state.closed:  # a second way out (a signal during Ctrl+C's wait) found it done
            await self.show_held_events()
            self.move(self.run_state.closing())
            self.frames.release()
            session_view.save_trace(self.session, self.trace)
            self.core.close()
            if self.hung_up:
                self.process_settings.restore()
                atexit._run_exitfuncs()  # what a normal exit cleans up (the seccomp filter's folder)
                os._exit(status)
            self.exit(status)
