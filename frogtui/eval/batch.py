"""Running a task set: which attempts are left (a rerun continues), how many at once, stopping
cleanly, one line per finished attempt on stderr, the summary at the end.

``--workers N`` runs N attempts at once when the model is an OpenAI-compatible server (vLLM,
SGLang and ``llama-server --parallel`` batch the requests); a local GGUF or a replay decodes one
conversation at a time, so they run one after another (a local model keeps the shared prefix,
the system prompt and the tools, evaluated across tasks). Each attempt talks to
``model.with_seed(seed)`` where the model has it: its own conversation state and seed.

The first Ctrl+C or SIGTERM (or SIGHUP) stops: no new attempt starts, the running ones are
interrupted and left unrecorded (a rerun does them), the summary of what finished is written.
A second one stops at once.
"""
from __future__ import annotations

import secrets
import signal
import threading
import zlib
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TextIO

from frogtui.eval.attempt import Attempt, Settings
from frogtui.eval.outputs import RESULTS
from frogtui.eval.summary import summarize, summary_lines
from frogtui.eval.tasks import Task
from frogtui.protocol import Model

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def batches_requests(model: Model | None) -> bool:
    """Whether attempts may run at once against ``model``: an OpenAI-compatible server batches
    them; a local model decodes one conversation at a time, a replay plays its turns in order."""
    from frogtui.models.openai_compat import OpenAICompatModel

    return isinstance(model, OpenAICompatModel)


class EvalRun:
    """One ``frogtui eval`` over ``tasks`` (see the module's docstring)."""

    def __init__(self, tasks: list[Task], settings: Settings, *, attempts: int = 1, workers: int = 1,
                 redo_existing: bool = False, stderr: TextIO) -> None:
        self.tasks, self.s = tasks, settings
        self.attempts, self.redo_existing, self.stderr = attempts, redo_existing, stderr
        self.model: Model | None = None
        self.wanted_workers = workers
        self.workers = workers if settings.gold else 1
        self.serial_note = ""
        seed = settings.config.sampling.seed
        self.base_seed = seed if seed is not None else secrets.randbelow(2**31)
        self._print_lock = threading.RLock()  # the signal handler prints on the main thread
        self.finished = 0
        self.errors = 0

    def use_model(self, model: Model) -> None:
        """The model the attempts talk to (loaded once there is something to run)."""
        self.model = model
        if batches_requests(model):
            self.workers = self.wanted_workers
        elif self.wanted_workers > 1:
            self.serial_note = (f"--workers {self.wanted_workers}: this model decodes one conversation at a time, "
                                "so attempts run one after another")

    def say(self, line: str) -> None:
        with self._print_lock:
            try:
                print(f"frogtui: {line}", file=self.stderr, flush=True)
            except OSError:  # the terminal went away; the files hold everything
                pass

    def seed_for(self, task: Task, number: int) -> int:
        return (self.base_seed + zlib.crc32(task.instance_id.encode("utf-8")) + number) % 2**31

    def model_for(self, task: Task, number: int) -> tuple[Model | None, int | None]:
        if self.model is None:
            return None, None
        if hasattr(self.model, "with_seed"):
            seed = self.seed_for(task, number)
            return self.model.with_seed(seed), seed
        return self.model, self.s.config.sampling.seed

    def pending(self) -> list[tuple[Task, int]]:
        done = self.s.out.done(redo_existing=self.redo_existing)
        return [(task, k) for k in range(1, self.attempts + 1) for task in self.tasks if (task.instance_id, k) not in done]

    def run(self) -> int:
        """Run what is left; returns the exit status (0: every attempt ran; 1: stopped, or some
        task could not be set up)."""
        todo = self.pending()
        total = len(self.tasks) * self.attempts
        self.say(f"{len(self.tasks)} task(s) × {self.attempts} attempt(s): {total - len(todo)} done already, {len(todo)} to run"
                 f"{f', {self.workers} at once' if self.workers > 1 else ''}; output in {self.s.out.folder}")
        if self.serial_note:
            self.say(self.serial_note)
        previous = self._on_signals()
        try:
            self._run_all(todo)
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        stopped = self.s.stop.is_set()
        if stopped:
            self.say(f"stopped: {self.finished} attempt(s) finished and recorded, {len(todo) - self.finished} left for a rerun")
        summary = summarize(self.s.out.results(), self.attempts)
        summary["model_name_or_path"] = self.s.model_name
        self.s.out.write_summary(summary)
        for line in summary_lines(summary):
            self.say(line)
        return 1 if stopped or self.errors else 0

    def _run_all(self, todo: list[tuple[Task, int]]) -> None:
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="frogtui-eval")
        futures: dict[Future[Any], tuple[Task, int]] = {}
        queue = list(todo)
        try:
            while queue or futures:
                while queue and len(futures) < self.workers and not self.s.stop.is_set():
                    task, number = queue.pop(0)
                    futures[pool.submit(self._one, task, number)] = (task, number)
                if not futures:
                    break
                done, _ = wait(list(futures), timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    futures.pop(future)
                    future.result()  # a bug in an attempt crashes the run, loudly
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _one(self, task: Task, number: int) -> None:
        if self.s.stop.is_set():
            return
        model, seed = self.model_for(task, number)
        outcome = Attempt(self.s, task, number, model, seed).run()
        if outcome is None:
            return
        result, prediction = outcome
        self.s.out.record(result, prediction)
        with self._print_lock:
            self.finished += 1
            self.errors += result.get("failure") == "task_error"
        verdict = ("resolved" if result["resolved"] else f"unresolved: {result['failure']}") if result["resolved"] is not None else (
            f"patch only ({result['failure']})" if result.get("failure") else "patch only")
        which = f" attempt {number}" if self.attempts > 1 else ""
        detail = f" — {result['why']}" if result.get("why") and not result["resolved"] else ""
        self.say(f"{task.instance_id}{which}: {verdict} ({result['steps']} steps, {result['seconds']:.1f}s){detail}"[:400])

    def _on_signals(self) -> dict[int, Any]:
        """The first stop signal stops cleanly, a second one at once (``KeyboardInterrupt``)."""
        if threading.current_thread() is not threading.main_thread():
            return {}

        def handler(signum: int, frame: Any) -> None:
            if self.s.stop.is_set():
                raise KeyboardInterrupt
            self.s.stop.set()
            self.say(f"{signal.Signals(signum).name}: stopping (the running attempts are interrupted and left for a rerun; "
                     "again to stop at once)")
            with self.s.lock:
                for core in list(self.s.running):
                    core.interrupt()

        return {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}


__all__ = ["EvalRun", "RESULTS"]
