"""Attempts in the app: ``/attempts N TASK`` (or the palette's "Run as N attempts") runs the task
as N attempts (``frogtui.attempts``) on a worker, with the session's loaded model; questions of
the attempts wait in one queue and come up one at a time, in the order asked, in the approval modal,
whose title names the attempt ("Attempt 2 of 4"); an "always allow" there holds for every attempt
of the task; at the end ``AttemptsScreen`` shows the table and
the diffs, and the attempt the person picks is applied as one checkpointed step of this session
(undo and review take it as any step)."""
from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message

from frogtui.errors import FrogtuiError
from frogtui.ui.from_workers import call_while_shown
from frogtui.ui.messages import ApprovalRequested

if TYPE_CHECKING:
    from frogtui.attempts.record import SavedAttempts
    from frogtui.attempts.running import AttemptsRun
    from frogtui.session.core import SessionCore
    from frogtui.ui.diffmodel import FileDiff

PREFIX = "/attempts"
DEFAULT_N = 4
_COMMAND = re.compile(r"^/attempts(?:\s+(\S+))?(?:\s+(.*))?$", re.DOTALL)
_CHECK = re.compile(r"""^--check(?:=|\s+)(?:"([^"]*)"|'([^']*)'|([^\s"'][^\s]*))(?:\s+|$)""")
"""``--check "CMD"``, ``--check 'CMD'`` or ``--check WORD`` (``=`` instead of the space too)."""
USAGE = "Write /attempts N [--check \"CMD\"] TASK, with N from 1 to 8 (for example: /attempts 4 fix the failing test)."


def parse(text: str) -> tuple[int, str, str | None] | str | None:
    """``/attempts N [--check "CMD"] TASK`` as (N, TASK, CMD or None when not given); the one-line
    problem when it is malformed; None when the message is not an attempts command."""
    if not (text == PREFIX or text.startswith(PREFIX + " ")):
        return None
    match = _COMMAND.match(text.strip())
    number, rest = (match.group(1), (match.group(2) or "").strip()) if match else (None, "")
    if number is None or not number.isdigit() or not 1 <= int(number) <= 8:
        return USAGE
    check = None
    if rest.startswith("--check"):
        given = _CHECK.match(rest)
        if given is None:
            return USAGE
        check = next(g for g in given.groups() if g is not None).strip()
        if not check:
            return 'The check is empty: give the command that checks an attempt, e.g. --check "python -m pytest -q".'
        rest = rest[given.end():].strip()
    if not rest:
        return f"Say what the {number} attempts should do: /attempts {number} TASK."
    return int(number), rest, check


@dataclass
class AttemptsProgress(Message):
    """A line of an attempt's trace (``[attempt K] ...``) or of the run."""

    line: str


@dataclass
class AttemptAsks(Message):
    """Attempt ``number`` of ``total`` asks the person (the approval modal)."""

    number: int
    total: int
    request: ApprovalRequested


@dataclass
class AttemptsFinished(Message):
    """The attempts ended: their run (None when it could not start), each attempt's changed files,
    and the one-line error when it failed."""

    run: AttemptsRun | None
    files: dict[int, list[FileDiff]]
    error: str = ""


class _Lines:
    """A text stream whose lines become ``AttemptsProgress`` messages."""

    def __init__(self, app: AttemptsInApp) -> None:
        self.app, self.pending = app, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.app.post_message(AttemptsProgress(line))
        return len(text)

    def flush(self) -> None:
        pass


def run_attempts(app: AttemptsInApp, n: int, task: str, check: str) -> AttemptsFinished:
    """Run the attempts (blocking: call on a worker) with ``check`` ('' for none) and return what the
    app shows at the end."""
    from frogtui.attempts.record import link
    from frogtui.attempts.running import AttemptsRun
    from frogtui.run_trace import TraceSink
    from frogtui.ui.asking import ModalAsk

    shared: list[Any] = []
    """The session rules "always allow" adds, one list for every attempt's policy."""
    asking: list[ModalAsk] = []

    def wire(core: SessionCore, out: Any, number: int) -> Any:
        notes = core.prepare()
        core.share_session_rules(shared)

        def post(message: Any) -> None:  # only the questions reach the app; the trace is the attempt's own lines
            if isinstance(message, ApprovalRequested):
                app.post_message(AttemptAsks(number, n, message))

        for note in notes:
            out.write(f"frogtui: warning: {note}\n")
        modal = ModalAsk(post, sandboxed=core.sandboxed)
        asking.append(modal)
        approver = core.gate(app.approval_mode, ask=modal.ask, show=modal.show)
        return core.start(approver, TraceSink(out, summary=lambda: core.run_summary))

    assert app.model is not None
    try:
        run = AttemptsRun(task, app.config, app.model, attempts=n, check=check, pick="later", stderr=_Lines(app), wire=wire)
        link(app.session, run.parent.id)  # a resume of this session reopens their table
        app.attempts_stop = partial(_stop, run, asking)
        run.run()
    except FrogtuiError as err:
        return AttemptsFinished(None, {}, str(err))
    return AttemptsFinished(run, _files(app, run.base, [r for r in run.results if r.commit]))


def _files(app: AttemptsInApp, base: str, results: list[Any]) -> dict[int, list[FileDiff]]:
    """Each attempt's changed files for the diff viewer (blocking: git)."""
    from frogtui.ui.diffmodel import FileDiff
    from frogtui.vcs.worktrees import changed_files

    return {r.number: [FileDiff(path, before, after) for path, before, after in changed_files(app.config.repo, base, r.commit)]
            for r in results}


@dataclass
class AttemptsReopened(Message):
    """A resumed session's last task ran as attempts: their record, as it stands now, and each
    remaining attempt's changed files."""

    saved: SavedAttempts
    files: dict[int, list[FileDiff]]


def reopen(app: AttemptsInApp) -> None:
    """Post ``AttemptsReopened`` when the resumed session's last task ran as attempts (blocking:
    call on a worker)."""
    from frogtui.attempts.record import last_attempts, load

    folder = last_attempts(app.session)
    saved = load(folder, app.config.repo) if folder is not None else None
    if saved is not None:
        app.post_message(AttemptsReopened(saved, _files(app, saved.base, [r for r in saved.results
                                                                           if r.commit and r.number not in saved.gone])))


def _stop(run: AttemptsRun, asking: list[Any]) -> None:
    """Stop every attempt: its turn or command, and a question waiting for the person (denied)."""
    for core in run.cores:
        core.interrupt()
    for modal in asking:
        modal.cancel_pending()


def apply_choice(app: AttemptsInApp, run: AttemptsRun | SavedAttempts, number: int) -> str:
    """Apply attempt ``number`` (of the attempts just run, or of a resumed session's) as the next
    step of the app's session (blocking); the line to show."""
    core = app.core
    step = core.next_step(app.status.step)
    try:
        chosen = core.apply_attempt(run, number, step)
    except FrogtuiError as err:
        return f"Attempt {number} not applied: {err}"
    return (f"Applied attempt {number} to the working tree ({chosen.files} file(s), +{chosen.added} -{chosen.removed}) as step {step}: "
            "review it (ctrl+r) or undo it (ctrl+z).")


class AttemptsInApp(App[int]):
    """The app's handlers for attempts (``SessionApp`` builds on it; see the module's docstring).
    Esc stops them (``attempts_stop``) as it stops a run (``SessionApp.interrupt``)."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts_notice: Any = None
        self.attempts_lines: dict[str, str] = {}
        self.attempts_stop: Callable[[], None] | None = None
        """Stops the attempts running (set on their worker), None when none run."""
        self.attempts_questions: deque[AttemptAsks] = deque()
        """The attempts' questions not shown yet, oldest first (one modal at a time)."""
        self.attempts_asking: AttemptAsks | None = None
        """The question the modal shows now."""

    def on_unmount(self) -> None:
        if self.attempts_stop is not None:  # never leave an attempt's thread waiting on a question nobody can answer
            self.attempts_stop()

    def start_attempts(self, n: int, task: str, check: str | None = None) -> None:
        """Start ``/attempts N [--check CMD] TASK`` (the model is loaded and the session wired):
        without ``check``, the person confirms, edits or declines the one proposed from the
        repository first (``CheckScreen``)."""
        from frogtui.attempts.check import propose_check
        from frogtui.ui.check_screen import CheckScreen

        if check is not None:
            self._begin_attempts(n, task, check)
            return

        def confirmed(command: str | None) -> None:
            if command is None:  # not run: the command goes back in the prompt
                self.query_one("#prompt").value = f"{PREFIX} {n} {task}"  # type: ignore[attr-defined]
                self.notify(f"The {n} attempts did not run.")
            else:
                self._begin_attempts(n, task, command)

        self.push_screen(CheckScreen(n, propose_check(self.config.repo)), callback=confirmed)

    def _begin_attempts(self, n: int, task: str, check: str) -> None:
        from frogtui.ui.chat import ChatPane

        self.move(self.run_state.attempts_started())
        self.attempts_lines = {}
        chat = self.query_one(ChatPane)
        chat.add_user(f"{PREFIX} {n} {task}")
        chat.add_notice(f"Check: {check}" if check else "No check: the attempts are compared without one.")
        self.attempts_notice = chat.add_notice(f"Running {n} attempts, each in its own worktree and sandbox; "
                                               "your working tree is not touched until you pick one.")
        self.run_worker(lambda: self.post_message(run_attempts(self, n, task, check)), thread=True, group="attempts", exit_on_error=False)  # type: ignore[arg-type]

    def on_attempts_progress(self, message: AttemptsProgress) -> None:
        key = message.line.split("]", 1)[0] + "]" if message.line.startswith("[attempt ") else "run"
        self.attempts_lines[key] = message.line
        if self.attempts_notice is not None:
            self.attempts_notice.update("Attempts:\n" + "\n".join(self.attempts_lines.values()))

    def on_attempt_asks(self, message: AttemptAsks) -> None:
        self.attempts_questions.append(message)
        self._ask_next()

    def _ask_next(self) -> None:
        """Show the oldest waiting question in the approval modal, unless one is open; a question
        answered meanwhile (the attempts stopped) is dropped."""
        from frogtui.ui.approval_screen import ApprovalScreen

        if self.attempts_asking is not None:
            return
        while self.attempts_questions:
            message = self.attempts_questions.popleft()
            if message.request.future.done():
                continue
            self.attempts_asking = message

            def answered(answer: Any, message: AttemptAsks = message) -> None:
                if answer is not None and not message.request.future.done():
                    message.request.future.set_result(answer)
                self.attempts_asking = None
                self._ask_next()

            self.push_screen(ApprovalScreen(message.request, heading=f"Attempt {message.number} of {message.total}"), callback=answered)
            return

    def on_attempts_finished(self, message: AttemptsFinished) -> None:
        from frogtui.ui.attempts_screen import AttemptsScreen
        from frogtui.ui.chat import ChatPane

        self.attempts_stop = None
        self.move(self.run_state.attempts_finished())
        run = message.run
        if run is None:
            self.query_one(ChatPane).add_notice(f"The attempts could not run: {message.error}", "error")
            return
        check = f"check: {run.check or 'none'}"
        if self.attempts_notice is not None:
            self.attempts_notice.update(f"{len(run.results)} attempts ended ({check}); pick one to apply, or none.")

        def picked(number: int | None) -> None:
            if number is None:
                self.query_one(ChatPane).add_notice("No attempt applied; the working tree is as it was.")
                return
            self.run_worker(lambda: call_while_shown(self, self._attempt_applied, apply_choice(self, run, number)),  # type: ignore[arg-type]
                            thread=True, group="attempts", exit_on_error=False)

        self.push_screen(AttemptsScreen(run.results, message.files, run.check), callback=picked)

    def forget_attempts(self) -> None:
        """A plain run starts (on its worker): a resume no longer reopens the attempts' table."""
        from frogtui.attempts.record import unlink

        unlink(self.session)

    def reopen_attempts(self) -> None:
        """A resumed session: when its last task ran as attempts, their table comes back."""
        self.run_worker(partial(reopen, self), thread=True, group="attempts", exit_on_error=False)  # type: ignore[arg-type]

    def on_attempts_reopened(self, message: AttemptsReopened) -> None:
        from frogtui.ui.attempts_screen import AttemptsScreen
        from frogtui.ui.chat import ChatPane

        saved, chat = message.saved, self.query_one(ChatPane)
        done = f"attempt {saved.picked} was applied" if saved.picked is not None else "none was applied"
        chat.add_notice(f"The last task ran as {len(saved.results)} attempts ({saved.task}); {done}. Their table is open again.")
        marks = {**saved.notes, **saved.gone}

        def picked(number: int | None) -> None:
            if number is None:
                return
            if saved.picked is not None:
                chat.add_notice(f"Attempt {number} not applied: attempt {saved.picked} was applied already (undo it first).", "error")
                return
            self.run_worker(lambda: call_while_shown(self, self._attempt_applied, apply_choice(self, saved, number)),  # type: ignore[arg-type]
                            thread=True, group="attempts", exit_on_error=False)

        self.push_screen(AttemptsScreen(saved.results, message.files, saved.check, gone=saved.gone, marks=marks,
                                        heading=f"reopened: {done}"), callback=picked)

    def _attempt_applied(self, line: str) -> None:
        from frogtui.ui.chat import ChatPane

        self.query_one(ChatPane).add_notice(line, "error" if " not applied: " in line else "info")
        refresh = getattr(self, "refresh_git", None)
        if refresh is not None:
            refresh()
