"""The output folder of ``frogtui eval`` (``--out DIR``) and how a rerun continues in it.

- ``results.jsonl``: one line per finished attempt at a task (``attempt`` 1..K), appended when it
  ends; the line is the record that the attempt finished. A rerun skips the (task, attempt) pairs
  it holds, except those that ended with a ``task_error`` or a ``model_error`` (the repository was
  missing, the server was down: redone), and redoes the rest; ``--redo-existing`` redoes all.
- ``preds.jsonl``: SWE-bench's predictions (``instance_id``, ``model_name_or_path``,
  ``model_patch``) of attempt 1, one per task; with ``--attempts K`` also
  ``preds.attempt-K.jsonl`` per attempt. Written just before the results line, and on start
  rewritten to hold only attempts ``results.jsonl`` records (a run killed between the two leaves
  no stray prediction).
- ``trajectories/ID.json`` (``ID.attempt-K.json``): each attempt's Leaf trajectory;
  ``logs/ID.log``: its trace; ``checkouts/``: the throwaway clones while a task runs.
- ``summary.json``: the summary of every attempt ``results.jsonl`` holds (``summary.py``).

A killed run can leave a torn last line and its clones: both are dropped on start. One run at a time writes a folder
(``run.lock``, released by the kernel when the process dies, ``kill -9`` included).
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

from frogtui.agent.trajectory import write_json_atomic
from frogtui.errors import FrogtuiError

RESULTS = "results.jsonl"
PREDS = "preds.jsonl"
SUMMARY = "summary.json"
REDONE = ("task_error", "model_error")
"""Failure classes a rerun does again (what went wrong was around the model, not the model's work)."""


class OutputBusy(FrogtuiError):
    """Another ``frogtui eval`` is writing the same output folder."""


def preds_name(attempt: int | None) -> str:
    return PREDS if attempt is None else f"preds.attempt-{attempt}.jsonl"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file ([] when it is missing); lines that do not read are skipped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    items = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            items.append(item)
    return items


def _drop_torn_tail(path: Path) -> None:
    """Cut a last line that has no newline (a write killed halfway)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if data and not data.endswith(b"\n"):
        keep = data[: data.rfind(b"\n") + 1]
        with path.open("r+b") as handle:
            handle.truncate(len(keep))


class OutputFolder:
    """``--out DIR``, locked for this run (see the module's docstring)."""

    def __init__(self, folder: Path, attempts: int) -> None:
        self.folder = folder
        self.attempts = attempts
        self._lock = threading.Lock()
        self._handle: Any = None

    def open(self) -> None:
        """Create and lock the folder, repair what a killed run left.

        Raises:
            OutputBusy: another run holds it.
            FrogtuiError: it cannot be created.
        """
        try:
            for sub in ("trajectories", "logs", "checkouts"):
                (self.folder / sub).mkdir(parents=True, exist_ok=True)
            self._handle = open(self.folder / "run.lock", "a+")  # noqa: SIM115 - held for the whole run
        except OSError as err:
            raise FrogtuiError(f"cannot use the output folder {self.folder}: {err.strerror or err}") from None
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._handle.close()
            self._handle = None
            raise OutputBusy(f"another frogtui eval is writing {self.folder}: wait for it, or give another --out") from None
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(f"{os.getpid()}\n")
        self._handle.flush()
        _drop_torn_tail(self.folder / RESULTS)
        self._keep_recorded_preds()
        for leftover in (self.folder / "checkouts").iterdir():  # a killed run's clones: no run holds them now
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)

    def hidden(self) -> tuple[str, ...]:
        """What a task's sandbox must not show of this folder: everything but the clones."""
        names = [RESULTS, PREDS, SUMMARY, "logs", "trajectories", "run.lock", *(preds_name(k) for k in range(1, self.attempts + 1))]
        return tuple(os.path.realpath(self.folder / name) for name in names)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    # what is done ------------------------------------------------------------------------
    def results(self) -> list[dict[str, Any]]:
        """The last line for each (task, attempt) in ``results.jsonl``."""
        latest: dict[tuple[str, int], dict[str, Any]] = {}
        for item in read_jsonl(self.folder / RESULTS):
            if isinstance(item.get("instance_id"), str):
                latest[(item["instance_id"], int(item.get("attempt") or 1))] = item
        return list(latest.values())

    def done(self, *, redo_existing: bool = False) -> set[tuple[str, int]]:
        """The (task, attempt) pairs a rerun skips."""
        if redo_existing:
            return set()
        return {(r["instance_id"], int(r.get("attempt") or 1)) for r in self.results() if r.get("failure") not in REDONE}

    def _keep_recorded_preds(self) -> None:
        """Each predictions file holds exactly one line per task whose attempt ``results.jsonl``
        records (the last written wins)."""
        recorded = {(r["instance_id"], int(r.get("attempt") or 1)) for r in self.results()}
        for attempt in (None, *range(1, self.attempts + 1)) if self.attempts > 1 else (None,):
            path = self.folder / preds_name(attempt)
            if not path.exists():
                continue
            number = attempt or 1
            kept: dict[str, dict[str, Any]] = {}
            for item in read_jsonl(path):
                if (item.get("instance_id"), number) in recorded:
                    kept[item["instance_id"]] = item
            _write_lines(path, list(kept.values()))

    # writing -----------------------------------------------------------------------------
    def trajectory_path(self, name: str, attempt: int) -> Path:
        return self.folder / "trajectories" / (f"{name}.json" if self.attempts == 1 else f"{name}.attempt-{attempt}.json")

    def log_path(self, name: str, attempt: int) -> Path:
        return self.folder / "logs" / (f"{name}.log" if self.attempts == 1 else f"{name}.attempt-{attempt}.log")

    def checkout_path(self, name: str, attempt: int, what: str) -> Path:
        return self.folder / "checkouts" / f"{name}.{attempt}.{what}"

    def record(self, result: dict[str, Any], prediction: dict[str, Any]) -> None:
        """One finished attempt: its prediction, then its results line (the mark that it finished).
        A prediction replaces an earlier one of the same task (a redone attempt)."""
        attempt = int(result.get("attempt") or 1)
        with self._lock:
            targets = [preds_name(None)] if attempt == 1 else []
            if self.attempts > 1:
                targets.append(preds_name(attempt))
            for name in targets:
                path = self.folder / name
                earlier = [p for p in read_jsonl(path) if p.get("instance_id") != prediction["instance_id"]]
                if len(earlier) == len(read_jsonl(path)):
                    _append_line(path, prediction)
                else:
                    _write_lines(path, [*earlier, prediction])
            _append_line(self.folder / RESULTS, result)

    def write_summary(self, summary: dict[str, Any]) -> None:
        write_json_atomic(self.folder / SUMMARY, summary)


def _append_line(path: Path, item: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(item, ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _write_lines(path: Path, items: list[dict[str, Any]]) -> None:
    temp = path.with_name(path.name + ".tmp")
    temp.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    os.replace(temp, path)
