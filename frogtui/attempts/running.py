"""Running N attempts at one task: the worktrees, one session per attempt on the shared model,
the check, the table, the pick or the branches, and ``attempts.json`` in the parent session folder.

The model is loaded once. Attempt K talks to ``model.with_seed(base + K)`` when the model has
``with_seed`` (a local model then evaluates the shared prefix once; an OpenAI-compatible server
gets the attempts' requests at once), else to the model itself, one attempt after the other (a
replay model plays attempt 1's turns, then attempt 2's...).
"""
from __future__ import annotations

import secrets
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from frogtui.agent.trajectory import write_json_atomic
from frogtui.attempts.check import gate_proposal, propose_check, run_check
from frogtui.attempts.pick import PICK_STEP, apply_pick
from frogtui.attempts.record import RECORD
from frogtui.attempts.results import AttemptResult, best, group_same, table
from frogtui.config import Config
from frogtui.errors import FrogtuiError
from frogtui.protocol import Model
from frogtui.run_trace import start_traced
from frogtui.session import Session
from frogtui.session.core import SessionCore
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import RepoState, discover
from frogtui.vcs.worktrees import MARKER, add_worktree, base_commit, final_change, keep_branch, remove_worktree

Wire = Callable[[SessionCore, TextIO, int], Any]
"""Builds attempt K's agent: ``wire(core, stream, K)`` prepares the core and starts it with an
approver and a sink (``stream`` takes the attempt's lines)."""
MAX_ATTEMPTS = 8
DIFFS = "diffs"
"""In the parent session folder: each attempt's diff from the base (``attempt-K.diff``, up to
``worktrees.DIFF_CAP`` bytes), streamed there as git writes it."""


class PrefixedLines:
    """A text stream that writes whole lines to ``stream``, each starting with ``prefix`` (attempts
    running at once share stderr without mixing their lines)."""

    def __init__(self, stream: TextIO, prefix: str, lock: threading.Lock) -> None:
        self.stream, self.prefix, self.lock = stream, prefix, lock
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        if lines:
            with self.lock:
                self.stream.write("".join(f"{self.prefix}{line}\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        with self.lock:
            self.stream.flush()


def concurrent(model: Model) -> bool:
    """Whether attempts run at once: an OpenAI-compatible server batches their requests; a local
    model decodes one conversation at a time, and a model without ``with_seed`` is shared."""
    from frogtui.models.openai_compat import OpenAICompatModel

    return isinstance(model, OpenAICompatModel)


class AttemptsRun:
    """One ``--attempts N`` run (see the module's docstring)."""

    def __init__(self, task: str, config: Config, model: Model, *, attempts: int, check: str | None, pick: str | None,
                 stderr: TextIO, wire: Wire | None = None) -> None:
        """``pick``: ``best`` (apply the best passing attempt), None (keep each as a branch) or
        ``later`` (neither: the app asks the person, then calls ``apply``). ``wire``: builds each
        attempt's agent (default ``run_trace.start_traced``: the policy approver, the trace)."""
        self.task, self.config, self.model = task, config, model
        self.wire = wire
        self.n, self.pick, self.stderr = attempts, pick, stderr
        self.lock = threading.Lock()
        self.parent = Session.create(config.repo, config.model_spec)
        self.proposed = check is None
        self.check = check if check is not None else (propose_check(config.repo) or "")
        self.refused_check = ""
        """A proposed check the gate did not let run (``gate_proposal``)."""
        seed = config.sampling.seed
        self.base_seed = seed if seed is not None else secrets.randbelow(2**31 - MAX_ATTEMPTS)
        self.base = ""
        self.start: RepoState | None = None
        self.results: list[AttemptResult] = []
        self.cores: list[SessionCore] = []
        self.picked: int | None = None
        self.concurrent = concurrent(model)

    def say(self, line: str) -> None:
        with self.lock:
            try:
                print(f"frogtui: {line}", file=self.stderr, flush=True)
            except OSError:  # SIGHUP: the terminal may be gone; the run still ends cleanly (the log has the line)
                pass
        self.parent.log(line)

    def worktree(self, number: int) -> Path:
        return self.parent.folder / "worktrees" / f"{MARKER}-{number}"

    def record(self) -> None:
        write_json_atomic(self.parent.folder / RECORD, {
            "task": self.task, "attempts": self.n, "check": self.check, "check_proposed": self.proposed,
            "check_refused": self.refused_check,
            "base_commit": self.base, "base_seed": self.base_seed, "concurrent": self.concurrent,
            "picked": self.picked, "results": [r.as_dict() for r in self.results],
        })

    # the run -----------------------------------------------------------------------------------
    def run(self) -> int:
        """Run the attempts; returns the exit status (0: one passed, and with ``--pick best`` it
        was applied; 1: none passed or the pick failed; 2: the repository cannot hold attempts)."""
        repo, self.base = base_commit(self.config.repo)
        self.start = start = discover(self.config.repo, self.parent.id)  # the parent session's start: the pick's checkpoint
        assert start is not None
        if self.proposed:
            self.say(f"no --check given; proposed from the repository: {self.check}" if self.check
                     else "no --check given and none found in the repository (pytest, npm test, cargo test, go test): "
                     "attempts are compared without one")
            self.gate_proposal()
        mode = "at once (the server batches them)" if self.concurrent else "one after another"
        self.say(f"{self.n} attempts {mode}, session {self.parent.id}, base {self.base[:10]}")
        try:
            for k in range(1, self.n + 1):
                worktree = add_worktree(repo, self.worktree(k), self.base)
                self.results.append(AttemptResult(k, self.base_seed + k, "", str(worktree)))
            self.record()
            if self.concurrent:
                pool = ThreadPoolExecutor(max_workers=self.n, thread_name_prefix="frogtui-attempt")
                try:
                    for future in [pool.submit(self.attempt, r) for r in self.results]:
                        future.result()
                except KeyboardInterrupt:
                    for core in self.cores:  # before waiting for the threads: each attempt ends its turn
                        core.interrupt()
                    raise
                finally:
                    pool.shutdown(wait=True)
            else:
                for result in self.results:
                    self.attempt(result)
            group_same(self.results)
            for line in table(self.results, self.check):
                print(line, file=self.stderr, flush=True)
            return self.finish(repo, start)
        except KeyboardInterrupt:
            for core in self.cores:
                core.interrupt()
            for result in self.results:
                if result.exit_reason == "running":
                    result.exit_reason = "stopped"
            self.say("stopped")
            return 1
        finally:
            for result in self.results:
                remove_worktree(repo, Path(result.worktree))
            self.record()

    def gate_proposal(self) -> None:
        """A proposed check runs only where the gate allows it with nobody to ask (``check.gate_proposal``);
        otherwise the attempts are compared without one, saying so."""
        if not self.check:
            return
        answer = gate_proposal(self.check, self.config, self.parent.tmp_dir)
        self.parent.log(f"proposed check: {answer.audit}")
        if answer.refused:
            self.say(f"the proposed check is not run: {answer.refused}; give it with --check \"{self.check}\" to run it "
                     "(attempts are compared without one)")
            self.refused_check, self.check = self.check, ""

    def attempt(self, result: AttemptResult) -> None:
        """Run attempt ``result.number`` to its end, record its change, then run the check."""
        k = result.number
        model = self.model.with_seed(result.seed) if hasattr(self.model, "with_seed") else self.model
        core = SessionCore(self.config.replace(repo=Path(result.worktree)), model=model, trust_as=self.config.repo)
        self.cores.append(core)
        result.session = core.session.id
        out = PrefixedLines(self.stderr, f"[attempt {k}] ", self.lock)
        started = time.monotonic()
        try:
            if self.wire is not None:
                self.wire(core, out, k)
            else:
                start_traced(core, out)
            run = core.send(self.task)
            result.exit_reason = run.exit_reason
            conversation = run.conversation
            result.steps, result.tokens = len(conversation.steps), sum(conversation.tokens())
            result.final_message = run.final_message
            diff_to = self.parent.folder / DIFFS / f"attempt-{k}.diff"
            change = final_change(Path(result.worktree), self.base, f"frogtui: attempt {k} of session {self.parent.id}", diff_to)
            result.commit, result.tree, result.diff_bytes = change.commit, change.tree, change.diff_bytes
            result.diff_file = str(change.diff_file) if change.diff_file is not None else ""
            result.files, result.added, result.removed = change.files, change.added, change.removed
            if self.check:
                result.check = run_check(core.checker(), self.check)
                out.write(f"check {'passed' if result.check.passed else 'failed'} (exit {result.check.exit_code})\n")
        except FrogtuiError as err:
            result.exit_reason, result.error = "error", str(err)
            out.write(f"frogtui: {err}\n")
        finally:
            result.seconds = time.monotonic() - started
            core.close(keep_model=True)  # shared: closed once, by the caller
            self.record()

    def apply(self, number: int, checkpoints: Checkpoints | None = None, step: int = PICK_STEP) -> AttemptResult:
        """Apply attempt ``number`` to the working tree: one checkpointed step of the parent session,
        or step ``step`` of the session whose ``checkpoints`` are given (the app's).

        Raises:
            FrogtuiError: it does not apply (the working tree changed since the base), or git failed.
        """
        chosen = next(r for r in self.results if r.number == number)
        assert self.start is not None, "run() comes before apply()"
        apply_pick(checkpoints if checkpoints is not None else self.start, chosen, step)
        self.picked = number
        self.record()
        self.parent.log(f"applied attempt {number}")
        return chosen

    def finish(self, repo: Any, start: Any) -> int:
        """The pick (``--pick best``) or the branches; the exit status."""
        if self.pick == "later":
            return 0 if any(r.passed for r in self.results) else 1
        if self.pick == "best":
            chosen = best(self.results)
            if chosen is None:
                self.say("no attempt passed the check: nothing applied" if self.check else "no attempt to pick without a check")
                return 1
            try:
                apply_pick(start, chosen)
            except FrogtuiError as err:
                self.say(f"attempt {chosen.number} not applied: {err}")
                return 1
            self.picked = chosen.number
            self.say(f"applied attempt {chosen.number} to the working tree ({chosen.files} file(s), +{chosen.added} -{chosen.removed}); "
                     f"review or undo it with: frogtui --resume {self.parent.id}")
            return 0
        kept = []
        for result in self.results:
            if result.commit:
                try:
                    result.branch = keep_branch(repo, f"frogtui/{self.parent.id}/attempt-{result.number}", result.commit)
                    kept.append(result)
                except FrogtuiError as err:
                    self.say(str(err))
        if kept:
            example = next((r for r in kept if r.passed), kept[0])
            self.say(f"attempts kept as branches frogtui/{self.parent.id}/attempt-K; to apply one to the working tree: "
                     f"git diff {example.branch}~1 {example.branch} | git apply")
        passed = any(r.passed for r in self.results) if self.check else any(r.exit_reason == "agent" for r in self.results)
        return 0 if passed else 1


STOPPING = (signal.SIGTERM, signal.SIGHUP)
"""Signals that stop the attempts as Ctrl+C does (``timeout``, CI runners, ``kill``; the terminal closed)."""


def ctrl_c_on_signals() -> dict[int, Any]:
    """The first SIGTERM or SIGHUP raises ``KeyboardInterrupt`` on the main thread, as Ctrl+C does:
    ``AttemptsRun.run`` then stops each attempt, records it ``stopped`` and removes the worktrees;
    later ones are ignored, so that clean-up finishes. Returns the handlers replaced (none off the
    main thread, where Python cannot set any)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    stopping = threading.Event()

    def handler(signum: int, frame: Any) -> None:
        if not stopping.is_set():
            stopping.set()
            raise KeyboardInterrupt

    return {signum: signal.signal(signum, handler) for signum in STOPPING}


def run_attempts(task: str, config: Config, model: Model, *, attempts: int, check: str | None = None, pick: str | None = None,
                 stderr: TextIO, stdout: TextIO) -> int:
    """``frogtui run TASK --attempts N``: returns the exit status; ``model`` is closed at the end.
    SIGTERM and SIGHUP stop the attempts as Ctrl+C does (``ctrl_c_on_signals``)."""
    previous = ctrl_c_on_signals()
    try:
        run = AttemptsRun(task, config, model, attempts=attempts, check=check, pick=pick, stderr=stderr)
        status = run.run()
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=stderr)
        return 2
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        model.close()
    picked = next((r for r in run.results if r.number == run.picked), None)
    if picked is not None and picked.final_message:
        print(picked.final_message, file=stdout)
    return status
