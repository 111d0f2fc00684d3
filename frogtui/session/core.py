"""The session core: one wiring for every front end.

From a ``Config`` it builds what a session needs (the model, loaded lazily; the policy engine; the
Bash sandbox; the tool runner; checkpoints; the session folder and its log) and runs the
``Agent``. A front end (the app, ``frogtui run``, the ACP agent, an attempt) implements
``Approver`` + ``EventSink`` and calls, in order:

1. ``prepare()`` (blocking: bubblewrap probe, git snapshot): the warnings; ``notes`` then holds
   every start-up note to show the person (warnings, which python Bash runs, the project
   instructions), each already in the session log;
2. ``load_model(report)`` (blocking, once; ``report`` receives progress lines);
3. ``start(approver, sink)`` (blocking: snapshots the tree for the patch), then ``send(text)`` for
   every message of the person, ``interrupt()`` from any thread; the loop's events reach
   ``sink`` through the session log (``log.SessionLog``), so every front end's log is the same;
4. when a run ends with ``max_context_len`` (with ``handoff``, also when a step leaves less than
   ``[limits] handoff_margin`` of the budget): ``draft_handoff()``, let the person edit it (or not,
   headless), then ``hand_off(text)``: a fresh conversation, a new run of the same session.

Undo (``undo``), ``git init`` (``enable_git``), review (``review_session``), the patch, the git
state, the trajectory file and the approval gate are here too: a front end asks the core, never
its parts. A new session is a new core (``next_session``).
"""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from frogtui.agent.events import EventSink
from frogtui.agent.handoff import draft_handoff
from frogtui.agent.loop import Agent, RunResult
from frogtui.agent.project_instructions import ProjectInstructions, read_instructions
from frogtui.agent.saved import Conversation
from frogtui.agent.trajectory import Trajectory, replay_lines
from frogtui.approval import ApprovalMode, Ask, PolicyEngine, Rule, make_sandbox
from frogtui.approval import Approver as Gate
from frogtui.approval.backstop import backstopped
from frogtui.approval.sandbox import OFF_SETTING, Sandbox, make_view, proposals_line
from frogtui.config import Config, sessions_dir
from frogtui.errors import FrogtuiError
from frogtui.models import load_model
from frogtui.protocol import ApprovalRequest, Approver, KeepsState, Model
from frogtui.session.folder import Session
from frogtui.session.log import Logged, SessionLog
from frogtui.session.mentions import Mentioned, attach_mentions
from frogtui.session.tally import RunTally
from frogtui.terminal_text import name_drawn
from frogtui.tools import MUTATING_TOOLS, ToolRunner, Workspace
from frogtui.tools.project_env import describe_python
from frogtui.tools.proposals import CUT_OFF, ProposalRunner, cut_off
from frogtui.vcs.checkpoints import Checkpoint, Checkpoints, RewindResult
from frogtui.vcs.ignored import ignored_among
from frogtui.vcs.in_place import TreeCapture, undo_problem
from frogtui.vcs.nested import describe
from frogtui.vcs.repository import (
    GitState,
    RepoState,
    discover,
    init_repo,
    not_a_repo_message,
    read_git_state,
    resume,
    session_patch,
)
from frogtui.vcs.review import ReviewSession, commit_run
from frogtui.vcs.verify import recorded_under

UNSUPERVISED = (
    "--approve all: every action the floor and your deny rules allow runs without asking; "
    "FrogNano has no safety alignment, so use it only in a throwaway checkout"
)
"""The warning of a session nobody watches under ``--approve all`` (``start_unattended``)."""

ModelLoader = Callable[..., Model]
"""Called as ``loader(spec, config, report=callable)`` (``frogtui.models.load_model``)."""


@dataclass(frozen=True)
class Note:
    """A start-up note for the person (``SessionCore.notes``).

    Attributes:
        text: the line.
        topic: ``warning`` (no sandbox, not a git repository, ignored project rules…),
            ``python`` (which python Bash runs and why) or ``instructions`` (the project's
            ``AGENTS.md``, given with the first message, or why not).
        warning: shown as a warning (else as information).
    """

    text: str
    topic: Literal["warning", "python", "instructions"]
    warning: bool


class SessionCore:
    """One session of frogtui: one conversation in one repository.

    Args:
        config: repository, model spec, limits, rules file, approval mode.
        resume: a saved session to continue (its trajectory is restored into the agent), or None
            for a new one.
        model: an already loaded model (``frogtui run`` loads it first, to fail early); else
            ``load_model`` loads it.
        model_loader: builds the model from its spec (default ``frogtui.models.load_model``).
        clock: monotonic seconds (tool durations).
        handoff: whether the session hands off when the context nears its budget (the app;
            ``frogtui run --handoff``): runs then end ``[limits] handoff_margin`` tokens early.
        trust_as: the repository whose trust in a ``.frogtui.toml`` counts, when ``config.repo``
            is another checkout of it (an attempt's worktree, ``frogtui.attempts``).
        environment_of: the repository whose environment Bash gets (its ``.venv``,
            ``node_modules``), when ``config.repo`` is another checkout of it (an attempt's
            worktree): ``Workspace.environment_of``.
        hide: more paths the sandbox masks, besides ``[sandbox] hide`` (``frogtui eval``: the task
            set, the repository a task's clone came from, the run's results).
    """

    def __init__(
        self,
        config: Config,
        *,
        resume: Session | None = None,
        model: Model | None = None,
        model_loader: ModelLoader | None = None,
        clock: Callable[[], float] = time.monotonic,
        handoff: bool = False,
        trust_as: Path | None = None,
        environment_of: Path | None = None,
        hide: tuple[str, ...] = (),
    ) -> None:
        self.config = config
        self.hide = hide
        self.handoff = handoff
        self.trust_as = trust_as
        self.environment_of = environment_of
        self.model = model
        self.model_loader = model_loader or load_model
        self.clock = clock
        self.session = resume or Session.create(config.repo, config.model_spec)
        self.log = SessionLog(self.session, ignored=self.ignored_changed, caches=self.caches_changed)
        """The session log (``log.SessionLog``): every event of the loop goes through it."""
        self.chain: list[Conversation] = self.session.load_chain() if resume is not None else []
        """The resumed session's conversations, oldest first (more than one after hand-offs)."""
        self.saved: Conversation | None = self.chain[-1] if self.chain else None
        """The resumed conversation (the chain's last), None for a new session."""
        self._clear()

    def _clear(self) -> None:
        self.workspace: Workspace | None = None
        self.engine: PolicyEngine | None = None
        """The approval policy; set by ``prepare``."""
        self.sandbox: Sandbox | None = None
        self.proposals: ProposalRunner | None = None
        """Runs a command the rules would ask about as a proposal (``tools.proposals``); None
        where there is no copy-on-write view, or ``[bash] proposals = false``; set by ``prepare``."""
        self.proposals_line = ""
        """Whether commands run as proposals here, and why not (the session log has it)."""
        self.instructions: ProjectInstructions | None = None
        """The repository's ``AGENTS.md`` given with the first message of each conversation; set by
        ``prepare`` (None: no such file, or ``project_instructions = false``). A front end shows
        its ``line`` to the person."""
        self.python_line = ""
        """Which python the agent's Bash gets and why (``project_env.describe_python``); set by ``prepare``."""
        self.notes: list[Note] = []
        """The start-up notes, in the order to show them; set by ``prepare``."""
        self._warn: Callable[[str], None] | None = None
        """The front end's way to show a warning that comes mid-run (``start``'s ``warn``)."""
        self.repo_state: RepoState | None = None
        """None outside git (no checkpoints, undo, review or patch)."""
        self.checkpoints: Checkpoints | None = None
        self.agent: Agent | None = None
        self.sink: EventSink | None = None
        """The sink the front end gave ``start`` (the loop's events reach it through the log)."""
        self.undone: set[tuple[int, int]] = set()
        """Checkpoints (step, action) already undone; the next undo goes further back."""
        self.rewind_note = ""
        """What undo rewound, told to the model with the next message."""
        self.last_result: RunResult | None = None
        self._replay_before: dict[int, str] = {}
        """The earlier conversations' turns in the replay file, by run (after hand-offs)."""
        self._task = ""
        """The session's original task (the first conversation's first message)."""
        if self.chain:
            self._task = self.chain[0].task
            self._replay_before[len(self.chain)] = "".join(conversation.replay() for conversation in self.chain[:-1])

    # setting up --------------------------------------------------------------------------
    def prepare(self) -> list[str]:
        """Load the rules, probe the sandbox and record the repository's state (blocking).
        Returns the warnings to show the person (no sandbox, not a git repository, ignored project
        rules); each is in the session log, and ``notes`` holds them with the other start-up notes.

        Raises:
            ConfigError: a rules file is not valid.
            FrogtuiError: git cannot snapshot the working tree.
        """
        workspace = Workspace(self.config.repo, tmp_dir=self.session.tmp_dir, environment_of=self.environment_of)
        engine = PolicyEngine.load(workspace, self.config.rules_file, trust_as=self.trust_as)
        settings = engine.rules.sandbox
        if self.hide:
            settings = dataclasses.replace(settings, hide=(*settings.hide, *self.hide))
            engine.base_rules = dataclasses.replace(engine.base_rules, sandbox=settings)  # Read's view hides them too
        sandbox = make_sandbox(workspace, settings, project=self.trust_as)
        if sandbox.wrap is not None:
            engine.shown = sandbox.wrap.shown  # Read and Glob see what Bash sees: one mount list
        engine.base_rules, no_backstop = backstopped(engine.base_rules, sandbox)
        self.session.log(sandbox.describe())
        self.python_line = describe_python(os.environ, workspace.root, workspace.environment_of)
        self.session.log(self.python_line)
        state = resume(self.config.repo, self.session.id) if self.saved is not None else discover(self.config.repo, self.session.id)
        self.workspace, self.engine, self.sandbox = workspace, engine, sandbox
        self.instructions = read_instructions(self.config.repo) if self.config.project_instructions else None
        if self.instructions is not None:
            self.session.log(self.instructions.line)
        self._use_repo(state)
        self.proposals, self.proposals_line = self._proposal_runner(workspace, engine, sandbox)
        self.session.log(self.proposals_line)
        nested = describe(state.start_nested, by_session=False) if state is not None and state.start_nested else ""
        not_git = not_a_repo_message(self.config.repo) if state is None else ""
        warnings = [line for line in (sandbox.warning, *sandbox.notes, no_backstop, nested, *engine.rules.notes, not_git,
                                      *self._cut_off_in_place()) if line]
        for line in warnings:
            self.log.warn(line)
        self.notes = [Note(line, "warning", True) for line in warnings]
        self.notes.append(Note(self.python_line, "python", False))
        if self.instructions is not None:
            self.notes.append(Note(self.instructions.line, "instructions", self.instructions.skipped))
        return warnings

    def _cut_off_in_place(self) -> list[str]:
        """A line for each session of this repository that was stopped (``kill -9``, a power cut)
        while a command ran on the tree itself (run then undo), before its changes were put back:
        they sit in the tree as if the person had made them. Told once. Only the sessions holding
        such a note are read (a ``stat`` per session folder at start, no ``meta.json``)."""
        lines = []
        repo = os.path.realpath(self.config.repo)
        for mark in sorted(sessions_dir().glob(f"*/proposals/{CUT_OFF}")):
            session = Session.by_id(mark.parent.parent.name)
            if session is None or session.id == self.session.id or os.path.realpath(session.repo) != repo:
                continue
            command = cut_off(mark.parent)
            if command is None:
                continue
            steps = [ref for ref in recorded_under(f"refs/frogtui/{session.id}") if ref.rsplit("/", 1)[1].isdigit()]
            last = max(steps, key=lambda ref: int(ref.rsplit("/", 1)[1]), default="")
            where = f"; the tree before it is the checkpoint {last} (undo in that session, or git diff {last})" if last else ""
            lines.append(f"session {session.id} was stopped while a command ran on the working tree (run then undo), before its "
                         f"changes were put back: `{name_drawn(command)}`; what it changed may still be in the tree, as if you had "
                         f"made it{where}")
        return lines

    def _proposal_runner(self, workspace: Workspace, engine: PolicyEngine, sandbox: Sandbox) -> tuple[ProposalRunner | None, str]:
        """The proposals' runner (a copy-on-write view of the repository where the kernel or
        fuse-overlayfs allows one, else the command run on the tree and undone from the checkpoint,
        ``approval.sandbox.views``) and the line saying so. Call after ``_use_repo``."""
        if not engine.rules.proposals:
            return None, OFF_SETTING
        state = self.repo_state
        view, why = make_view(sandbox.wrap, workspace.root, engine.rules.proposals_way, repository=state is not None,
                              undo_problem=self._undo_problem)
        if view is None:
            return None, proposals_line(view, why)
        in_place = TreeCapture(state.repo) if state is not None and getattr(view, "in_place", False) else None
        runner = ProposalRunner(view, workspace.root, self.session.folder / "proposals", ignored=self._ignored_among, in_place=in_place)
        return runner, proposals_line(view, why)

    def _undo_problem(self) -> str:
        """Why running a proposal then undoing it cannot put the repository's files back as they
        are (``vcs.in_place.undo_problem``), '' when it can."""
        return undo_problem(self.repo_state.repo) if self.repo_state is not None else ""

    def _ignored_among(self, paths: Sequence[str]) -> set[str]:
        """The paths git ignores, among a proposal's effects (none outside git, or when git cannot say)."""
        if self.repo_state is None:
            return set()
        try:
            return ignored_among(self.repo_state.repo, list(paths))
        except FrogtuiError as err:
            self.log.line(f"ignored paths not told apart: {err}")
            return set()

    @property
    def sandboxed(self) -> bool:
        """Whether Bash runs in the sandbox."""
        return self.sandbox is not None and self.sandbox.wrap is not None

    @property
    def sandbox_weak(self) -> bool:
        """Whether the sandbox runs with a warning (a part of it is missing)."""
        return self.sandbox is not None and self.sandbox.warning is not None

    @property
    def sandbox_network(self) -> bool:
        """Whether the sandbox lets Bash reach the network."""
        return self.sandbox is not None and bool(self.sandbox.network)

    @property
    def has_git(self) -> bool:
        """Whether the repository is in git (checkpoints, undo, review and the patch need it);
        known once ``prepare`` ran."""
        return self.repo_state is not None

    @property
    def root(self) -> Path:
        """The repository's root folder, as the tools see it."""
        return self.workspace.root if self.workspace is not None else Path(self.config.repo)

    @property
    def policy(self) -> PolicyEngine:
        """The approval policy the front end's approver decides with (set by ``prepare``).
        A front end that has nobody to ask takes ``gate`` instead."""
        if self.engine is None:
            raise RuntimeError("prepare() comes before the policy")
        return self.engine

    def gate(
        self,
        mode: ApprovalMode | None = None,
        *,
        ask: Ask | None = None,
        show: Callable[[ApprovalRequest], object] | None = None,
    ) -> Gate:
        """The session's gate (``approval.Approver``) under ``mode`` (default the configuration's
        ``--approve``): ``ask`` is the front end's way to ask a person (the app's modal, the
        editor's permission request); without one (``frogtui run``, an attempt) what the policy
        would ask about is denied. ``show`` gets each Write/Edit change before the policy decides.
        The decisions reach the session log through the loop's events."""
        return Gate(self.policy, ask=ask, show=show, mode=mode or self.config.approve)

    def share_session_rules(self, rules: list[Rule]) -> None:
        """Keep this session's "always allow" rules in ``rules``, a list other sessions share (the
        app's attempts: one answer holds for every attempt). Call after ``prepare``."""
        self.policy.session_rules = rules

    def record(self, line: str) -> None:
        """A line in the session log for what the front end did (the editor cancelled)."""
        self.log.line(line)

    def mode_changed(self, mode: ApprovalMode) -> None:
        """The person changed the approval mode (the app's F2, the editor's mode): one log line."""
        self.log.line(f"approval mode: {mode}")

    def load_model(self, report: Callable[[str], None] | None = None) -> Model:
        """The model, loaded on the first call (blocking; ``report`` gets the progress lines).

        Raises:
            ModelLoadError: the spec is unknown or the model cannot be loaded.
        """
        if self.model is None:
            self.model = self.model_loader(self.config.model_spec, self.config, report=report)
        return self.model

    def start(self, approver: Approver, sink: EventSink, *, warn: Callable[[str], None] | None = None) -> Agent:
        """The session's agent, built on the first call (blocking: the patch snapshots the tree);
        a resumed conversation is restored into it. Call after ``prepare`` and ``load_model``.
        The loop's events go to the session log, then to ``sink``; ``warn`` gets the warnings that
        come mid-run (a nested repository the run creates), which the log keeps too."""
        if self.agent is not None:
            return self.agent
        self._warn = warn
        self.sink = sink
        if self.workspace is None or self.model is None:
            raise RuntimeError("prepare() and load_model() come before start()")
        checkpoints = self.checkpoints
        agent = Agent(
            self.model,
            ToolRunner(self.workspace, wrap=self.sandbox.wrap if self.sandbox is not None else None, proposals=self.proposals),
            approver,
            Logged(self.log, sink),
            limits=self.config.limits,
            before_action=checkpoints.before_action if checkpoints is not None else None,
            after_action=checkpoints.after_action if checkpoints is not None else None,
            patch=session_patch(self.repo_state),
            on_step_end=self._save,
            clock=self.clock,
            handoff_margin=self.config.limits.handoff_margin if self.handoff else 0,
        )
        if self.saved is not None:
            agent.restore(self.saved)
        if isinstance(self.model, KeepsState):  # a local GGUF: its state after each turn, for --resume
            self.model.keep_state(self.session.model_state_dir)
        self.agent = agent
        return agent

    def start_unattended(self, sink: EventSink, say: Callable[[str], None]) -> Agent:
        """``prepare`` and ``start`` for a session nobody watches (``frogtui run``, an attempt):
        the start-up notes told to ``say`` one line each (which python Bash runs first, then the
        warnings, then the project instructions), the approver ``gate`` (what the policy would ask
        about is denied), the warnings that come mid-run told to ``say`` too. Call after
        ``load_model`` (or with a model given).

        Raises:
            FrogtuiError: a rules file is invalid, or git cannot snapshot the working tree.
        """
        warnings = self.prepare()
        say(self.python_line)  # the first trace line: which python Bash runs
        if self.config.approve == "all":
            self.log.warn(UNSUPERVISED)
            warnings.insert(0, UNSUPERVISED)
        for line in warnings:
            say(f"warning: {line}")
        if self.instructions is not None:
            say(self.instructions.line)
        return self.start(self.gate(), sink, warn=lambda line: say(f"warning: {line}"))

    @property
    def tally(self) -> RunTally:
        """What the session's runs did so far, counted from their events (steps, calls and their
        decisions, files changed, tokens)."""
        return self.log.tally

    @property
    def run_summary(self) -> str:
        """The last run's summary line (``tally.RunTally.line``: steps, calls, allowed, denied by
        whom, files changed), '' before a run ended."""
        return self.log.summary

    # running -----------------------------------------------------------------------------
    def send(self, text: str) -> RunResult:
        """The person's message (blocking): it starts the task or continues the conversation; what
        undo rewound since the last message is told to the model first. Call after ``start``."""
        if self.agent is None:
            raise RuntimeError("start() comes before send()")
        if self.rewind_note:
            text, self.rewind_note = f"{self.rewind_note}\n\n{text}", ""
        self._task = self._task or text
        if not self.agent.started:
            text = self._with_instructions(text)
        try:
            self.last_result = self.agent.submit(text)
        finally:
            self._flush_checkpoints()
        return self.last_result

    def attach(self, text: str) -> Mentioned:
        """``text`` with the files it mentions (``@path``) attached as Read would show them; the
        floor and deny rules keep a file out, saying why (``session/mentions.py``). Call after
        ``prepare``."""
        if self.workspace is None or self.engine is None:
            raise RuntimeError("prepare() comes before attach()")
        mentioned = attach_mentions(text, self.engine, self.workspace)
        for line in (*(f"attached @{a.path} ({a.chars} characters)" for a in mentioned.attached), *mentioned.refused):
            self.record(line)
        return mentioned

    def draft_handoff(self, ended: str | None = None) -> str:
        """The hand-off for the current conversation (``agent.handoff``): the original task, the
        files the session changed, the calls made and how they ended, the model's last words.

        Args:
            ended: why it ends (an exit reason, or ``requested``); default the last run's.
        """
        if self.agent is None:
            raise RuntimeError("start() comes before draft_handoff()")
        why = ended or (self.last_result.exit_reason if self.last_result is not None else "requested")
        conversation = Conversation.of(self.agent.trajectory)  # each call's outcome, as recorded
        return draft_handoff(conversation, patch=self.patch(), ended=why, task=self._task or None)

    def hand_off(self, text: str) -> RunResult:
        """Start a fresh conversation whose first user message is ``text`` (blocking): a new run
        of the same session; checkpoints, review and the trajectory chain go on."""
        if self.agent is None:
            raise RuntimeError("start() comes before hand_off()")
        old: Trajectory = self.agent.trajectory
        self._replay_before[old.run + 1] = self._replay_before.get(old.run, "") + replay_lines(old.as_dict())
        if self.rewind_note:
            text, self.rewind_note = f"{self.rewind_note}\n\n{text}", ""
        text = self._with_instructions(text)
        try:
            self.last_result = self.agent.hand_off(text)
        finally:
            self._flush_checkpoints()
        return self.last_result

    def _with_instructions(self, text: str) -> str:
        """The first user message of a conversation: the project instructions, then ``text``."""
        return self.instructions.with_task(text) if self.instructions is not None else text

    def _flush_checkpoints(self) -> None:
        """Write the refs of this run's checkpoints of an unchanged tree (``Checkpoints.flush``);
        they are in the session's record already, so a git failure here is only logged."""
        if self.checkpoints is not None:
            try:
                self.checkpoints.flush()
            except FrogtuiError as err:
                self.log.line(f"checkpoint refs not written (the session record keeps them): {err}")

    def _save(self, trajectory: Trajectory) -> None:
        self.session.save_trajectory(trajectory, replay_before=self._replay_before.get(trajectory.run, ""))

    def interrupt(self, why: str = "") -> None:
        """Stop generation or the running command (thread-safe; nothing when nothing runs).
        ``why``: a stop that is not the person's ("frogtui was stopped by SIGTERM"; ``Agent.interrupt``)."""
        if self.agent is not None:
            self.agent.interrupt(why)

    @property
    def started(self) -> bool:
        """Whether the conversation has begun (a message was sent)."""
        return self.agent is not None and self.agent.started

    @property
    def interrupted(self) -> bool:
        """Whether the current run was asked to stop."""
        return self.agent is not None and self.agent.cancel.is_set()

    def context_budget(self) -> int:
        """The context budget in tokens (the model's context once known, else the limit)."""
        return self.agent.context_budget if self.agent is not None else self.config.limits.max_context_tokens

    def trajectory_file(self) -> Path:
        """The current conversation's trajectory file, brought up to date (mid-run the journal is
        ahead of it)."""
        run = self.agent.trajectory.run if self.agent is not None else max(len(self.chain), 1)
        self.session.write_trajectory_file(run)
        return self.session.run_path(run)

    def next_session(self) -> SessionCore:
        """A new core for a new session in the same repository, with the same model (not closed):
        this one's conversation is left as it is, its waiting checkpoint refs written."""
        self._flush_checkpoints()
        return SessionCore(self.config, model=self.model, model_loader=self.model_loader, clock=self.clock,
                           handoff=self.handoff, trust_as=self.trust_as, hide=self.hide, environment_of=self.environment_of)

    def close(self, *, keep_model: bool = False) -> None:
        """Write the checkpoint refs still waiting, release the model (unless ``keep_model``: it
        is shared, and its owner closes it)."""
        self._flush_checkpoints()
        if self.model is not None and not keep_model:
            self.model.close()

    # the repository ----------------------------------------------------------------------
    def _use_repo(self, state: RepoState | None) -> None:
        self.repo_state = state
        self.checkpoints = Checkpoints(state, self._nested, watched=self.sandboxed) if state is not None else None  # vcs.watch
        if self.checkpoints is not None and self.chain:  # resumed: undo goes back through them too
            self.checkpoints.restore({step: tools for c in self.chain for step, tools in c.changing_tools(MUTATING_TOOLS).items()})

    def enable_git(self) -> RepoState:
        """Run ``git init`` in the repository folder and turn on checkpoints, review, undo and the
        patch (blocking). Returns the new repository state.

        Raises:
            GitFailed: git could not create the repository.
        """
        init_repo(self.config.repo)
        state = discover(self.config.repo, self.session.id)
        if state is None:  # pragma: no cover - git init succeeded but the folder is still not a repository
            raise RuntimeError(f"git init did not create a repository in {self.config.repo}")
        self._use_repo(state)
        if self.agent is not None and self.checkpoints is not None:
            self.agent.use_checkpoints(self.checkpoints.before_action, session_patch(state), self.checkpoints.after_action)
        return state

    def _nested(self, line: str) -> None:
        """A nested repository the run created (one line at the next checkpoint)."""
        self.log.warn(line)
        if self._warn is not None:
            self._warn(line)

    def patch(self) -> str:
        """The diff of this session's changes (the person's earlier ones excluded; '' outside git)."""
        return session_patch(self.repo_state)()

    def git_state(self) -> GitState | None:
        """Branch and number of changed files, None outside a repository (blocking)."""
        return read_git_state(self.config.repo)

    def review_session(self) -> ReviewSession | None:
        """Review and commit of the session's changes, None outside git."""
        if self.repo_state is None:
            return None
        ignored = self.checkpoints.ignored_changed if self.checkpoints is not None else None
        from frogtui.vcs.message import trailer_for

        trailer = trailer_for(self.config.commit_trailer, self.model, spec=self.config.model_spec)
        return ReviewSession(self.repo_state, trailer=trailer, ignored=ignored)

    def ignored_changed(self) -> list[str]:
        """The ignored paths (``.venv/``, ``node_modules/``, ``.env``…) the session changed, which
        the patch, the review and undo do not hold (blocking; [] outside git or when git cannot
        say)."""
        if self.checkpoints is None:
            return []
        try:
            return self.checkpoints.ignored_changed()
        except FrogtuiError as err:  # git failed or the repository vanished: the run's error says why
            self.log.line(f"ignored files not compared: {err}")
            return []

    def caches_changed(self) -> list[str]:
        """The caches the session changed (``.pytest_cache/``, ``__pycache__/``: nothing runs them
        later), as of the last ``ignored_changed``; said without a warning."""
        return list(self.checkpoints.caches_changed) if self.checkpoints is not None else []

    def commit(self, model: Model | None, *, exit_reason: str, out: TextIO) -> bool:
        """``frogtui run --commit``: commit the session's changes with a message ``model`` drafts
        when the run ended with ``agent``; one line about it on ``out``. False when a commit was
        wanted and failed (or was skipped)."""
        return commit_run(self.repo_state, model, exit_reason=exit_reason, trailer=self.config.commit_trailer, out=out)

    def checker(self) -> ToolRunner:
        """A tool runner in the session's sandbox, for a command frogtui runs itself (an attempt's
        check). Call after ``prepare``."""
        if self.workspace is None:
            raise RuntimeError("prepare() comes before checker()")
        return ToolRunner(self.workspace, wrap=self.sandbox.wrap if self.sandbox is not None else None)

    def next_step(self, after: int) -> int:
        """The step a change applied now (an attempt picked) is recorded as: after ``after`` and
        after every checkpoint taken."""
        step = 1 + max((c.step for c in self.checkpoints.taken), default=after) if self.checkpoints is not None else 1
        return max(step, after + 1)

    def apply_attempt(self, run: Any, number: int, step: int) -> Any:
        """Apply attempt ``number`` of ``run`` (``attempts.running.AttemptsRun`` or a saved one) to
        the working tree as step ``step`` of this session, checkpointed (blocking).

        Raises:
            FrogtuiError: it does not apply, or git failed.
        """
        return run.apply(number, self.checkpoints, step)

    def next_undo(self) -> Checkpoint | None:
        """The checkpoint the next undo goes back to: before the last action that changed a file
        (one that changed none, a test run, is passed over: ``passed_over``); None when there is
        none (or no git)."""
        if self.checkpoints is None:
            return None
        remaining = [c for c in self.checkpoints.taken if (c.step, c.action) not in self.undone]
        changed = [c for c in remaining if not self.checkpoints.changed_nothing(c)]
        return changed[-1] if changed else None

    def passed_over(self, checkpoint: Checkpoint) -> list[Checkpoint]:
        """The actions after ``checkpoint`` that undo passes over: they changed no file (a test run)."""
        if self.checkpoints is None:
            return []
        return [c for c in self.checkpoints.taken if (c.step, c.action) > (checkpoint.step, checkpoint.action)
                and (c.step, c.action) not in self.undone and self.checkpoints.changed_nothing(c)]

    def undo(self, checkpoint: Checkpoint) -> RewindResult:
        """Rewind the working tree to ``checkpoint`` (blocking); the model is told with the next
        message.

        Raises:
            FrogtuiError: the rewind failed, or was refused because the step's change is already
                committed (nothing was changed).
        """
        assert self.checkpoints is not None
        committed = self.checkpoints.committed_paths(checkpoint)
        if committed:
            files = ", ".join(committed[:3]) + (f" and {len(committed) - 3} more" if len(committed) > 3 else "")
            raise FrogtuiError(
                f"Not undone: what step {checkpoint.step} ({checkpoint.tool}) changed in {files} is already committed. "
                "Undo the commit first (ctrl+r, then u) or revert it with git."
            )
        result = self.checkpoints.rewind(checkpoint.step, checkpoint.action)
        self.undone.add((checkpoint.step, checkpoint.action))
        self.rewind_note = (self.rewind_note + "\n" + result.message).strip()
        return result
