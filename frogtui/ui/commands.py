"""The person's commands: footer bindings and command-palette entries (new task, review & commit,
undo, reasoning, trajectory, approval mode, theme). Mixed into ``FrogApp``."""
from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import SystemCommand
from textual.screen import Screen

from frogtui.errors import FrogtuiError
from frogtui.session import Session
from frogtui.ui.approver import APPROVAL_MODES
from frogtui.ui.chat import PromptInput
from frogtui.ui.integration import enable_git, review_screen
from frogtui.ui.trajectory_screen import TrajectoryScreen

if TYPE_CHECKING:
    from frogtui.ui.app import FrogApp

    _Base = FrogApp
else:
    _Base = object


def files_phrase(verb: str, paths: list[str], shown: int = 3) -> str:
    """``restored a.py, b.py`` / ``removed 5 files (a, b, c…)``."""
    names = ", ".join(paths[:shown]) + ("…" if len(paths) > shown else "")
    return f"{verb} {names}" if len(paths) <= shown else f"{verb} {len(paths)} files ({names})"


def undo_notice(tool: str, result: Any) -> str:
    """What an undo did, in the chat: the action taken back and the files it touched."""
    done = [files_phrase(verb, paths) for verb, paths in (("restored", result.restored), ("removed", result.removed)) if paths]
    what = "; ".join(done) if done else "no files had changed since"
    keep = (
        f" The files as they were just before are kept in {result.saved_ref}"
        f" (`git restore --source={result.saved_ref} -- FILE` brings one back)."
        if done else ""
    )
    return f"Undid step {result.step} ({tool}): {what}.{keep} The model is told with your next message; ctrl+z again goes one action further back."


class AppCommands(_Base):
    """Actions bound to keys and listed in the palette."""

    async def action_new_task(self) -> None:
        if self.busy:
            self.notify("Interrupt the current run first (Esc).", severity="warning")
            return
        self.session = Session.create(self.config.repo)
        self.saved = None
        self.agent = None
        self.wiring = None
        self.rewind_note = ""
        self.undone = set()
        await self.chat.clear()
        await self.trace.clear()
        self.status.step = 0
        self.status.context_used = 0
        self.status.tok_s = None
        self.chat.add_notice("New task: describe it below.")
        self.query_one(PromptInput).focus()
        self._prepare(load=False)

    def action_review(self) -> None:
        if self.busy:
            self.notify("Review after the run ends (or press Esc to interrupt it).", severity="warning")
            return
        screen = review_screen(self.wiring, self.config, self.model)
        if isinstance(screen, str):
            self.notify(screen, severity="warning")
            return
        self.push_screen(screen, callback=lambda _result: self.refresh_git())

    def action_undo(self) -> None:
        if self.busy:
            self.notify("Undo after the run ends (or press Esc to interrupt it).", severity="warning")
            return
        if self.wiring is None or self.wiring.checkpoints is None:
            self.notify("Undo needs a git repository (checkpoints live there).", severity="warning")
            return
        checkpoints = self.wiring.checkpoints
        remaining = [c for c in checkpoints.taken if (c.step, c.action) not in self.undone]
        if not remaining:
            self.notify("Nothing (more) to undo: no file-changing action ran since.", severity="warning")
            return
        self._undo(checkpoints, remaining[-1])

    @work(thread=True, exclusive=True, group="undo")
    def _undo(self, checkpoints: Any, checkpoint: Any) -> None:
        """Each undo goes one mutating action further back (the checkpoint taken before it)."""
        try:
            result = checkpoints.rewind(checkpoint.step, checkpoint.action)
        except FrogtuiError as err:
            self.call_from_thread(self.notify, str(err), severity="warning")
            return
        self.call_from_thread(self._undone, result, checkpoint)

    def _undone(self, result: Any, checkpoint: Any) -> None:
        self.undone.add((checkpoint.step, checkpoint.action))
        self.rewind_note = (self.rewind_note + "\n" + result.message).strip()
        self.chat.add_notice(undo_notice(checkpoint.tool, result))
        self.refresh_git()

    def action_git_init(self) -> None:
        if self.wiring is None:
            self.notify("Wait for the session to start.", severity="warning")
            return
        if self.wiring.repo_state is not None:
            self.notify("This folder is already in a git repository.", timeout=2)
            return
        if self.busy:
            self.notify("Initialise git after the run ends (or press Esc to interrupt it).", severity="warning")
            return
        self._git_init()

    @work(thread=True, exclusive=True, group="git-init")
    def _git_init(self) -> None:
        from frogtui.vcs.repository import GitFailed, session_patch

        assert self.wiring is not None
        try:
            state = enable_git(self.wiring, self.config, self.session)
        except (GitFailed, OSError) as err:
            self.call_from_thread(self.notify, f"git init failed: {err}", severity="error")
            return
        if self.agent is not None and self.wiring.checkpoints is not None:
            self.agent.before_action = self.wiring.checkpoints.before_action
            self.agent.patch = session_patch(state)
        self.call_from_thread(self._git_initialised, str(state.root))

    def _git_initialised(self, root: str) -> None:
        self.chat.add_notice(f"Initialised a git repository in {root}: checkpoints, undo, review and commit are on.")
        self.refresh_git()

    def action_toggle_reasoning(self) -> None:
        shown = self.chat.toggle_reasoning()
        self.notify("Reasoning shown" if shown else "Reasoning hidden", timeout=1.5)

    def action_open_trajectory(self) -> None:
        self.push_screen(TrajectoryScreen(self.session.trajectory_path))

    def action_cycle_approval_mode(self) -> None:
        modes = APPROVAL_MODES
        self.approver.mode = modes[(modes.index(self.approver.mode) + 1) % len(modes)]
        self.status.approval_mode = self.approver.mode
        if self.approver.mode == "all":
            self.notify("Approval mode: all. Everything the floor and your deny rules allow now runs without asking; "
                        "FrogNano has no safety alignment.", severity="warning", timeout=6)
        else:
            self.notify(f"Approval mode: {self.approver.mode}", timeout=2)

    def action_next_theme(self) -> None:
        names = sorted(self.catalog.themes) or ["textual-dark"]
        position = names.index(self.theme) if self.theme in names else -1
        self.theme = names[(position + 1) % len(names)]
        self.notify(f"Theme: {self.theme}", timeout=1.5)

    async def action_quit(self) -> None:
        """The palette's Quit: like ctrl+c twice (the run stops, the session is saved)."""
        await self.shutdown()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Stop", "Interrupt generation or the running command (Esc)", self.action_interrupt)
        yield SystemCommand("New task", "Start a new conversation in a new session", self.action_new_task)
        yield SystemCommand("Review & commit", "Accept or reject the changes hunk by hunk, then commit", self.action_review)
        yield SystemCommand("Undo", "Undo the last change the agent made", self.action_undo)
        if self.wiring is not None and self.wiring.repo_state is None:
            yield SystemCommand("Initialise git repository", "Run git init here to turn on checkpoints, undo, review and commit", self.action_git_init)
        yield SystemCommand("Toggle reasoning", "Show or hide the model's thinking", self.action_toggle_reasoning)
        yield SystemCommand("Approval mode", "Cycle policy → all → none", self.action_cycle_approval_mode)
        yield SystemCommand("Open trajectory file", "Show this session's trajectory JSON", self.action_open_trajectory)
        for name in sorted(self.catalog.themes):
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme", partial(setattr, self, "theme", name))
        yield from super().get_system_commands(screen)
