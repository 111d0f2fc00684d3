"""One attempt at one task, as ``frogtui run`` runs a task: a fresh clone of ``base_commit`` in the
output folder (never the person's working tree), a session core on it started unattended
(``SessionCore.start_unattended`` through ``run_trace.start_traced``: the gate in the chosen
approval mode with nobody to ask, the sandbox, the project's environment), the problem statement
as the first user message (Leaf's: "the first user message is the task itself"), the trace in
``logs/``, the Leaf trajectory in ``trajectories/``. The prediction is the tree's diff against the
base at the end, the files of the task's ``test_patch`` left out; then the local check
(``check.py``) where the task's tests are known.
"""
from __future__ import annotations

import os
import shutil
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogtui.agent.saved import Conversation
from frogtui.agent.trajectory import write_json_atomic
from frogtui.config import Config
from frogtui.errors import FrogtuiError
from frogtui.eval.check import TEST_TIMEOUT_S, CheckOutcome, check_prediction
from frogtui.eval.outputs import OutputFolder
from frogtui.eval.tasks import Task
from frogtui.protocol import Model
from frogtui.run_trace import TraceSink, start_traced
from frogtui.session.core import SessionCore
from frogtui.terminal_text import ControlFreeStream
from frogtui.tools.specs import tool_spec
from frogtui.vcs.clones import clone_at, patch_paths, run_diff

GOLD = "gold"
"""``--gold``: the prediction is the task's own ``patch`` (no model runs); its exit reason."""


@dataclass
class Settings:
    """What every attempt of one ``frogtui eval`` shares."""

    config: Config
    out: OutputFolder
    model_name: str
    repos: Path | None = None
    test_cmd: str = ""
    test_timeout: int = TEST_TIMEOUT_S
    timeout: float | None = None
    """Seconds an attempt's run may take (then it is interrupted: ``timed_out``)."""
    gold: bool = False
    keep_checkouts: bool = False
    hidden: tuple[str, ...] = ()
    """Paths the sandbox masks for every attempt and check: the task set, the run's own results
    (``OutputFolder.hidden``); each attempt adds the repository its clone came from. What the
    model could read there (a task's fix in the source's history, the gold patch, the tests) would
    make the numbers meaningless."""
    stop: threading.Event = field(default_factory=threading.Event)
    running: set[SessionCore] = field(default_factory=set)
    """The cores running now (a stop interrupts them)."""
    lock: threading.Lock = field(default_factory=threading.Lock)


def gate_counts(conversation: Conversation | None) -> dict[str, dict[str, int]]:
    """The gate's answers over a conversation (read by ``agent.saved``): allowed and denied by tool
    kind (read, search, edit, execute), and who denied."""
    allowed: Counter[str] = Counter()
    denied: Counter[str] = Counter()
    denied_by: Counter[str] = Counter()
    for answer in conversation.approvals() if conversation is not None else []:
        spec = tool_spec(answer.tool)
        kind = spec.kind if spec is not None else "other"
        if answer.decision == "allow":
            allowed[kind] += 1
        else:
            denied[kind] += 1
            denied_by[answer.by] += 1
    return {"allowed": dict(allowed), "denied": dict(denied), "denied_by": dict(denied_by)}


def failure_class(*, exit_reason: str, timed_out: bool, patch: str, denied: int, check: CheckOutcome | None) -> str | None:
    """Why an attempt did not resolve its task (``summary.FAILURES``); None when it did, or when it
    has a patch nobody could check here."""
    if check is not None and check.resolved:
        return None
    if timed_out:
        return "timed_out"
    if exit_reason == "llm_query_error":
        return "model_error"
    if exit_reason == "max_turns":
        return "max_steps"
    if exit_reason == "max_context_len":
        return "context_full"
    if not patch.strip():
        return "gate_denied" if denied else "no_patch"
    return check.failure if check is not None else None


class Attempt:
    """Attempt ``number`` at ``task`` (see the module's docstring)."""

    def __init__(self, settings: Settings, task: Task, number: int, model: Model | None, seed: int | None) -> None:
        self.s, self.task, self.number, self.model, self.seed = settings, task, number, model, seed
        self.timed_out = False
        self.hide: tuple[str, ...] = settings.hidden
        self.session = ""
        """The attempt's session id (its folder in the state folder holds its session log)."""

    def result(self, **fields: Any) -> dict[str, Any]:
        return {"instance_id": self.task.instance_id, "attempt": self.number, "model_name_or_path": self.s.model_name, **fields}

    def run(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(results line, prediction); None when the run was stopped before it finished (nothing
        of it is recorded: a rerun does it again)."""
        started = time.monotonic()
        checkout = self.s.out.checkout_path(self.task.name, self.number, "run")
        shutil.rmtree(checkout, ignore_errors=True)
        try:
            return self._run(started, checkout)
        except OSError as err:  # the output folder or a clone could not be written (disk full, permissions)
            return self._error(started, f"cannot write {err.filename or 'a file'}: {err.strerror or err}")
        finally:
            if not self.s.keep_checkouts:
                shutil.rmtree(checkout, ignore_errors=True)

    def _error(self, started: float, why: str) -> tuple[dict[str, Any], dict[str, Any]]:
        result = self.result(resolved=False if self.task.checkable(self.s.test_cmd) else None, checked=False, failure="task_error",
                             why=why, exit_reason="error", steps=0, tokens_evaluated=0, tokens_generated=0,
                             seconds=round(time.monotonic() - started, 3))
        return result, self.prediction("")

    def prediction(self, patch: str) -> dict[str, Any]:
        return {"instance_id": self.task.instance_id, "model_name_or_path": self.s.model_name, "model_patch": patch}

    def _run(self, started: float, checkout: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
        source = self.task.source(self.s.repos)
        if source is None:
            return self._error(started, "no repository: the task has no repo_path and no --repos DIR was given")
        if not source.is_dir():
            return self._error(started, f"repository not found: {source}")
        self.hide = (*self.s.hidden, os.path.realpath(source))
        try:
            clone_at(source, checkout, self.task.base_commit)
        except FrogtuiError as err:
            return self._error(started, str(err))
        excluded = patch_paths(checkout, self.task.test_patch)
        trajectory: dict[str, Any] = {}
        if self.s.gold:
            exit_reason, patch, error = GOLD, self.task.patch, None
        else:
            ran = self._agent(checkout)
            if ran is None:
                return None
            exit_reason, error, trajectory = ran
            if exit_reason == "error":
                return self._error(started, error or "the session could not start")
            try:
                patch = run_diff(checkout, self.task.base_commit, excluded).diff
            except FrogtuiError as err:
                return self._error(started, str(err))
        check = None
        if patch.strip() and self.task.checkable(self.s.test_cmd):
            try:
                check = check_prediction(self.task, source, patch, self.s.config,
                                         self.s.out.checkout_path(self.task.name, self.number, "check"),
                                         test_cmd=self.s.test_cmd, timeout=self.s.test_timeout, cancel=self.s.stop, hide=self.hide)
            except FrogtuiError as err:
                return self._error(started, f"the check could not run: {err}")
            if self.s.stop.is_set() and not check.resolved:
                return None  # the check was cut short by the stop: its verdict means nothing
        conversation = Conversation.read(trajectory) if trajectory else None
        gate = gate_counts(conversation)
        evaluated, generated = conversation.tokens() if conversation is not None else (0, 0)
        failure = failure_class(exit_reason=exit_reason, timed_out=self.timed_out, patch=patch,
                                denied=sum(gate["denied"].values()), check=check)
        checkable = self.task.checkable(self.s.test_cmd)
        result = self.result(
            resolved=(check is not None and check.resolved) if checkable else None, checked=check is not None, failure=failure,
            why=(check.why if check is not None and failure == check.failure else _why(failure, error)) if failure else "",
            exit_reason=exit_reason, steps=len(conversation.steps) if conversation is not None else 0, tokens_evaluated=evaluated,
            tokens_generated=generated, seconds=round(time.monotonic() - started, 3), gate=gate,
            patch_files=patch.count("\ndiff --git ") + patch.startswith("diff --git "), excluded=sorted(set(excluded)),
            fail_to_pass_failed=check.fail_to_pass_failed if check else [], pass_to_pass_failed=check.pass_to_pass_failed if check else [],
            seed=self.seed, session=self.session,
            trajectory=str(self.s.out.trajectory_path(self.task.name, self.number).relative_to(self.s.out.folder)) if trajectory else "",
        )
        if check is not None and check.tail and not check.resolved:
            result["tail"] = check.tail
        return result, self.prediction(patch)

    def _agent(self, checkout: Path) -> tuple[str, str | None, dict[str, Any]] | None:
        """Run the model on the task in ``checkout``: (exit reason, error, trajectory); None when stopped."""
        assert self.model is not None
        config = self.s.config.replace(repo=checkout)
        core = SessionCore(config, model=self.model, hide=self.hide)
        self.session = core.session.id
        log_path = self.s.out.log_path(self.task.name, self.number)
        timer: threading.Timer | None = None
        with log_path.open("w", encoding="utf-8") as handle:
            stream = ControlFreeStream(handle)
            try:
                start_traced(core, stream, TraceSink(stream))  # type: ignore[arg-type]
            except FrogtuiError as err:
                core.close(keep_model=True)
                return "error", str(err), {}
            with self.s.lock:
                if self.s.stop.is_set():
                    core.close(keep_model=True)
                    return None
                self.s.running.add(core)
            if self.s.timeout:
                timer = threading.Timer(self.s.timeout, self._time_up, args=(core,))
                timer.daemon = True
                timer.start()
            try:
                run = core.send(self.task.problem_statement)
            finally:
                if timer is not None:
                    timer.cancel()
                with self.s.lock:
                    self.s.running.discard(core)
                core.close(keep_model=True)  # shared across tasks: closed once, by the run
        write_json_atomic(self.s.out.trajectory_path(self.task.name, self.number), run.trajectory)
        if run.exit_reason == "cancelled" and not self.timed_out:
            return None
        return run.exit_reason, run.error, run.trajectory

    def _time_up(self, core: SessionCore) -> None:
        self.timed_out = True
        core.interrupt()


def _why(failure: str | None, error: str | None) -> str:
    text = {
        "timed_out": "the run was stopped at --timeout",
        "model_error": "the model failed",
        "max_steps": "the run used every step (--max-steps)",
        "context_full": "the conversation filled the context budget",
        "gate_denied": "no patch, and the gate denied some of its actions",
        "no_patch": "the run changed nothing",
    }.get(failure or "", failure or "")
    return f"{text}: {error}" if error else text

