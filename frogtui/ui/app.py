"""The frogtui app: the person's commands (key bindings, actions, the palette) on the session that
``SessionApp`` shows and runs."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from frogtui.config import APPROVAL_MODES
from frogtui.errors import FrogtuiError
from frogtui.ui import commands
from frogtui.ui import slash as slash_commands
from frogtui.ui.chat import PromptInput
from frogtui.ui.from_workers import call_while_shown
from frogtui.ui.messages import TaskSubmitted
from frogtui.ui.run_state import OfferHandoff
from frogtui.ui.session_app import SessionApp

if TYPE_CHECKING:  # git and the checkpoints are imported with the session, after the first paint
    from frogtui.vcs.checkpoints import Checkpoint
    from frogtui.vcs.message import Drafts

QUIT_HELP = "Stop the run, save the session and quit (as ctrl+c twice); frogtui --resume reopens it"
"""The palette's Quit, in place of Textual's "Quit the application as soon as possible"."""


class FrogApp(SessionApp):
    """The frogtui app (arguments: ``SessionApp``)."""

    _drafts: Drafts | None = None
    """The model's commit messages, kept across reviews (made at the first review)."""

    BINDINGS = [
        # short labels: all but the theme key fit at 80 columns; FittingFooter hides, from the
        # right, what does not fit; every action is also in the palette (commands.py)
        Binding("escape", "interrupt", "Stop", tooltip="Interrupt generation or the running command"),
        Binding("ctrl+n", "new_task", "New", tooltip="Start a new task in a fresh conversation"),
        Binding("ctrl+r", "review", "Review", tooltip="Review this session's changes hunk by hunk and commit them"),
        Binding("ctrl+z", "undo", "Undo", tooltip="Rewind the last action (Bash effects included)"),
        Binding("ctrl+t", "toggle_reasoning", "Think"),
        Binding("ctrl+o", "open_trajectory", "JSON", tooltip="Open the trajectory file"),
        Binding("f2", "cycle_approval_mode", "Mode"),
        Binding("f3", "next_theme", "Theme"),
        Binding("ctrl+c", "quit_twice", "Quit×2", priority=True),
    ]

    def on_key(self, event: events.Key) -> None:
        """Printable keys that nothing took (focus on the chat or the trace) go to the prompt, so
        a sentence typed there is never read as commands; on other screens they do nothing. A key
        the focused widget binds (the queue list's ``e``/``x``) stays its own."""
        if not event.is_printable or not event.character or self.screen is not self.screen_stack[0]:
            return
        if event.key in self.screen.active_bindings:
            return
        prompt = self.query_one(PromptInput)
        if prompt.has_focus or prompt.disabled:
            return
        event.stop()
        event.prevent_default()
        prompt.focus()
        prompt.insert_text_at_cursor(event.character)

    async def on_task_submitted(self, message: TaskSubmitted) -> None:
        """A slash command (``ui/slash.py``) runs here and goes no further; ``/attempts`` and
        every task go on to ``SessionApp.on_task_submitted`` (Textual calls the base class's
        handler unless this one prevents it)."""
        slash = slash_commands.parse(message.text) if message.text else None
        if slash is None or (isinstance(slash, slash_commands.Slash) and slash.name == "attempts"):
            return
        message.prevent_default()
        prompt = self.query_one(PromptInput)
        if isinstance(slash, slash_commands.SlashError):
            prompt.value = message.text  # nothing is lost: fix it and send again
            prompt.cursor_position = len(prompt.value)
            self.notify(slash.message, severity="error")
            return
        await self.run_slash(slash)

    async def run_slash(self, slash: slash_commands.Slash) -> None:
        """What each slash command does: most are the palette's actions under another name."""
        name = slash.name
        if name == "help":
            self.chat.add_notice(slash_commands.help_text())
        elif name == "clear":
            await self.clear_conversation()
        elif name == "model":
            await self.show_or_switch_model(slash.argument)
        elif name == "diff":
            self.show_diff()
        elif name == "undo":
            self.action_undo()
        elif name == "compact":
            self.action_handoff()
        elif name == "init":
            self.post_message(TaskSubmitted(slash_commands.INIT_TASK))

    async def clear_conversation(self) -> None:
        """``/clear``: the chat is cleared and the next message starts a fresh Leaf conversation
        in this session (checkpoints, undo, review and commit go on; the trace keeps its rows)."""
        if not self._idle("/clear"):
            return
        await self.chat.clear()
        self.fresh_conversation = self.core.started if self.run_state.wired else False
        self.status.context_used = 0
        self.chat.add_notice("Cleared: your next message starts a fresh conversation in this session "
                             "(undo, review and commit still cover what was done before).")

    async def show_or_switch_model(self, spec: str) -> None:
        """``/model``: which model runs; ``/model SPEC``: a new session on that model."""
        if not spec:
            name = self.model.name if self.model is not None else "(not loaded yet)"
            self.chat.add_notice(f"Model: {name} (spec {self.config.model_spec}). /model SPEC starts a new session on another.")
            return
        if not self._session_ready("/model") or not self._idle("/model"):
            return
        await self.switch_model(spec)

    async def switch_model(self, spec: str) -> None:
        """A new session on the model ``spec`` names: this session is left as it is (``--resume``
        reopens it), its model released, the new one loaded as at start (a failure is said as
        there, and ``/model`` with another spec tries again)."""
        old, resume_id = self.core, self.session.id
        self.config = replace(self.config, model_spec=spec)
        self._core = None
        self._core_args = (None, self._core_args[1])
        self.model, self.approver = None, None
        old.close()  # the old model's process ends
        self.move(self.run_state.switching_model())
        await self.chat.clear()
        await self.trace.clear()
        self.status.step, self.status.context_used, self.status.session_tokens, self.status.tok_s = 0, 0, 0, None
        self.status.model_name = spec
        self.chat.add_notice(f"New session on {spec}; the last one is kept (frogtui --resume {resume_id}).")
        self.loading_notice = self.chat.add_notice(f"Loading model {spec} …", "loading")
        self._prepare(True)

    def show_diff(self) -> None:
        """``/diff``: the session's changes so far, as a diff in the chat."""
        if not self._session_ready("/diff"):
            return
        patch = self.core.patch() if self.core.has_git else ""
        if not patch:
            self.chat.add_notice("No changes in this session yet." if self.core.has_git else "/diff needs a git repository.")
            return
        self.chat.add_notice(f"This session's changes (ctrl+r reviews them hunk by hunk):\n{patch}")

    def action_interrupt(self) -> None:
        """Esc: stop generation or the running command; a waiting question is denied."""
        self.interrupt()

    async def action_new_task(self) -> None:
        if not self._session_ready("A new task"):
            return
        if self.busy:
            self.notify("Interrupt the current run first (Esc).", severity="warning")
            return
        self._core = self.core.next_session()  # a new session is a new core (same model)
        self.move(self.run_state.preparing())
        await self.chat.clear()
        await self.trace.clear()
        self.status.step, self.status.context_used, self.status.session_tokens, self.status.tok_s = 0, 0, 0, None
        await self.clear_queue()
        self.chat.add_notice("New task: describe it below.")
        self.query_one(PromptInput).focus()
        self._prepare(load=False)

    def _session_ready(self, what: str) -> bool:
        """True once the session is prepared (rules, sandbox, the repository's state); else tell
        the person why ``what`` waits."""
        if not self.run_state.wired:
            reason = "is available once the session has started (a moment)"
            if self.setup_error:
                reason = f"is not available: the session could not start ({self.setup_error})"
            self.notify(f"{what} {reason}.", severity="error" if self.setup_error else "warning")
        return self.run_state.wired

    def _idle(self, what: str) -> bool:
        """True when no run is going; else tell the person to wait (or interrupt) before ``what``."""
        if self.busy:
            self.notify(f"{what} after the run ends (or press Esc to interrupt it).", severity="warning")
        return not self.busy

    def action_handoff(self) -> None:
        """The palette's Hand off: draft the hand-off of the current conversation for the person to
        edit, then continue in a fresh one."""
        if not self._idle("Hand off"):
            return
        if not self.core.started:
            self.notify("Nothing to hand off yet: send a task first.", severity="warning")
            return
        action = self.move(self.run_state.handoff_requested())
        if isinstance(action, OfferHandoff):
            self.draft_handoff(action.ended)

    def action_review(self) -> None:
        if not self._session_ready("Review") or not self._idle("Review"):
            return
        review = self.core.review_session()
        if review is None:
            self.notify("Review & commit needs a git repository.", severity="warning")
            return
        from frogtui.ui.review import ReviewScreen
        from frogtui.vcs.message import Drafts

        if self._drafts is None:
            self._drafts = Drafts()
        self.push_screen(ReviewScreen(review, model=self.model, drafts=self._drafts), callback=lambda _result: self.refresh_git())

    def action_undo(self) -> None:
        if not self._session_ready("Undo") or not self._idle("Undo"):
            return
        if not self.core.has_git:
            self.notify("Undo needs a git repository (checkpoints live there).", severity="warning")
            return
        checkpoint = self.core.next_undo()
        if checkpoint is None:
            self.notify("Nothing (more) to undo: no file-changing action ran since.", severity="warning")
            return
        self._undo(checkpoint)

    @work(thread=True, exclusive=True, group="undo")
    def _undo(self, checkpoint: Checkpoint) -> None:
        """Each undo goes one mutating action further back (the checkpoint taken before it)."""
        skipped = self.core.passed_over(checkpoint)
        try:
            result = self.core.undo(checkpoint)
        except FrogtuiError as err:
            call_while_shown(self, self.notify, str(err), severity="warning", timeout=10)
            return
        notice = commands.undo_notice(checkpoint.tool, result, skipped)
        self.session.append_notice(notice)
        call_while_shown(self, self._undone, checkpoint, notice, commands.undo_toast(checkpoint.tool, result))
        self.refresh_git()

    def _undone(self, checkpoint: Checkpoint, notice: str, toast: str) -> None:
        self._mark_undone(checkpoint)
        self.chat.add_notice(notice)
        self.notify(toast, title="Undone")

    def _mark_undone(self, checkpoint: Checkpoint) -> None:
        """The call ``checkpoint`` was taken before reads "undone" in the trace and the chat (and in
        the saved trace: a resumed session shows it so)."""
        from frogtui.ui.session_view import save_trace
        from frogtui.ui.trace import undone_call

        entry = undone_call(self.trace.entries.values(), checkpoint.step, checkpoint.action)
        if entry is None:
            return
        self.trace.update(entry.call, undone=True)
        self.chat.refresh_call(entry)
        save_trace(self.session, self.trace)

    def action_git_init(self) -> None:
        if not self._session_ready("Initialise git"):
            return
        if self.core.has_git:
            self.notify("This folder is already in a git repository.", timeout=2)
        elif self._idle("Initialise git"):
            self._git_init()

    @work(thread=True, exclusive=True, group="git-init")
    def _git_init(self) -> None:
        from frogtui.vcs.repository import GitFailed

        try:
            state = self.core.enable_git()
        except (GitFailed, OSError) as err:
            call_while_shown(self, self.notify, f"git init failed: {err}", severity="error")
            return
        note = f"Initialised a git repository in {state.root}: checkpoints, undo, review and commit are on."
        call_while_shown(self, lambda: self.chat.add_notice(note))
        self.refresh_git()

    def action_toggle_reasoning(self) -> None:
        shown = self.chat.toggle_reasoning()
        self.notify("Reasoning shown" if shown else "Reasoning hidden", timeout=1.5)

    def action_open_trajectory(self) -> None:
        path = self.core.trajectory_file()  # mid-run, the journal is ahead of the run's file
        from frogtui.ui.trajectory_screen import TrajectoryScreen  # pygments' JSON lexer: when first opened

        self.push_screen(TrajectoryScreen(path))

    def action_cycle_approval_mode(self) -> None:
        self.approval_mode = APPROVAL_MODES[(APPROVAL_MODES.index(self.approval_mode) + 1) % len(APPROVAL_MODES)]
        if self.approver is not None:  # the session is wired: its gate answers under the new mode
            self.approver.mode = self.approval_mode
            self.core.mode_changed(self.approval_mode)  # (before, on_session_wired says it)
        self.status.approval_mode = self.approval_mode
        text, severity, seconds = commands.mode_notice(self.approval_mode)
        self.notify(text, severity=severity, timeout=seconds)  # type: ignore[arg-type]

    def action_attempts(self) -> None:
        """Start the prompt with ``/attempts 4 `` (ui/attempts_run.py): the task typed after it runs as 4 attempts."""
        from frogtui.ui.attempts_run import DEFAULT_N, PREFIX

        prompt = self.query_one(PromptInput)
        text = prompt.value
        if not text.startswith(PREFIX):
            prompt.value = f"{PREFIX} {DEFAULT_N} {text}"
        prompt.cursor_position = len(prompt.value)
        prompt.focus()

    def action_next_theme(self) -> None:
        names = sorted(self.catalog.themes) or ["textual-dark"]
        position = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(position + 1) % len(names)]
        self.notify(f"Theme: {self.theme}", timeout=1.5)

    async def action_quit(self) -> None:
        """The palette's Quit: like ctrl+c twice (the run stops, the session is saved)."""
        await self.shutdown()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for title, help_text, action in commands.PALETTE:
            if action != commands.NEEDS_NO_GIT or (self.run_state.wired and not self.core.has_git):
                yield SystemCommand(title, help_text, getattr(self, f"action_{action}"))
        for name in sorted(self.catalog.themes):
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme", partial(setattr, self, "theme", name))
        for command in super().get_system_commands(screen):  # Textual's own, with frogtui's words for Quit
            yield SystemCommand("Quit", QUIT_HELP, self.action_quit) if command.title == "Quit" else command

    async def action_quit_twice(self) -> None:
        """Ctrl+C: twice within ``run_state.QUIT_WINDOW_S`` quits (the run stops, the session is saved)."""
        await self.act(self.run_state.ctrl_c(self.clock()))
