"""Task sets: SWE-bench's instance format read from a local ``.jsonl``, ``.json`` (a list) or
``.parquet`` file, and which of them a run takes (``--ids``, ``--filter``, ``--shard I/N``).

The fields are SWE-bench's (``instance_id``, ``repo``, ``base_commit``, ``problem_statement``,
``test_patch``, ``FAIL_TO_PASS``, ``PASS_TO_PASS``, optional ``patch``); the two test lists may be
lists or JSON-encoded strings (as in the Hugging Face dataset). frogtui adds two optional fields:
``repo_path`` (a local repository to clone from; relative to the tasks file) and ``test_cmd``
(how to run test ids: ``{tests}`` is replaced by them, quoted). A task a run cannot use (a field
missing or of the wrong type) is one line naming it and the field; the others still run.
"""
from __future__ import annotations

import hashlib
import json
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogtui.errors import ConfigError

REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement")
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_COMMIT = re.compile(r"[0-9a-fA-F]{4,64}")
"""A ``base_commit``: an object id (never a ref name or anything git could read as an option)."""


class TaskSetError(ConfigError):
    """The tasks file cannot be read at all (missing, not JSON, no tasks)."""


@dataclass(frozen=True)
class Task:
    """One instance of a task set."""

    instance_id: str
    repo: str
    """``OWNER/NAME``; with ``--repos DIR`` the clone is ``DIR/OWNER__NAME``."""
    base_commit: str
    problem_statement: str
    test_patch: str = ""
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    patch: str = ""
    """The gold patch (``--gold`` checks it; ``eval mine`` writes it)."""
    repo_path: str = ""
    """A local repository to clone from, as the file gives it (relative to ``folder``)."""
    test_cmd: str = ""
    folder: Path = field(default=Path("."), compare=False)
    """The folder of the tasks file (a relative ``repo_path`` is relative to it)."""

    @property
    def name(self) -> str:
        """The instance id as a file name: only ``A-Za-z0-9._-``, with a short hash of the id when
        anything had to be replaced (two ids never share a name)."""
        return safe_name(self.instance_id)

    def source(self, repos: Path | None) -> Path | None:
        """The repository to clone: ``repo_path``, else ``REPOS/OWNER__NAME``; None when neither is given."""
        if self.repo_path:
            path = Path(self.repo_path).expanduser()
            return path if path.is_absolute() else self.folder / path
        if repos is not None:
            return repos / self.repo.replace("/", "__")
        return None

    def checkable(self, default_cmd: str = "") -> bool:
        """Whether frogtui can check it locally: FAIL_TO_PASS tests and a test command are known."""
        return bool(self.fail_to_pass) and bool(self.test_cmd or default_cmd)

    def as_record(self) -> dict[str, Any]:
        """The task in SWE-bench's format (the test lists as JSON strings, as the dataset has them)."""
        record: dict[str, Any] = {
            "instance_id": self.instance_id, "repo": self.repo, "base_commit": self.base_commit,
            "problem_statement": self.problem_statement, "patch": self.patch, "test_patch": self.test_patch,
            "FAIL_TO_PASS": json.dumps(list(self.fail_to_pass)), "PASS_TO_PASS": json.dumps(list(self.pass_to_pass)),
        }
        if self.repo_path:
            record["repo_path"] = self.repo_path
        if self.test_cmd:
            record["test_cmd"] = self.test_cmd
        return record


def safe_name(instance_id: str) -> str:
    name = _SAFE.sub("_", instance_id)[:120]
    if name != instance_id or name in ("", ".", ".."):
        name = f"{name}-{hashlib.sha256(instance_id.encode()).hexdigest()[:8]}"
    return name


def command_for_tests(template: str, tests: Iterable[str]) -> str:
    """``template`` with ``{tests}`` replaced by the test ids, each shell-quoted (appended when the
    template has no ``{tests}``)."""
    quoted = " ".join(shlex.quote(t) for t in tests)
    return template.replace("{tests}", quoted) if "{tests}" in template else f"{template} {quoted}"


def _test_list(value: Any, key: str) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError(f"{key} is a string that is not a JSON list") from None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{key} must be a list of test ids (or a JSON string of one)")
    return tuple(value)


def parse_task(record: Any, folder: Path) -> Task:
    """One task from its record.

    Raises:
        ValueError: a required field is missing, or a field has the wrong type (the message names it).
    """
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    for key in REQUIRED:
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise ValueError(f"{key} is missing or not a non-empty string")
    for key in ("test_patch", "patch", "repo_path", "test_cmd"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise ValueError(f"{key} must be a string")
    if not _COMMIT.fullmatch(record["base_commit"].strip()):
        raise ValueError("base_commit must be a commit id (4 to 64 hexadecimal digits)")
    return Task(
        instance_id=record["instance_id"], repo=record["repo"], base_commit=record["base_commit"].strip(),
        problem_statement=record["problem_statement"], test_patch=record.get("test_patch") or "",
        fail_to_pass=_test_list(record.get("FAIL_TO_PASS"), "FAIL_TO_PASS"),
        pass_to_pass=_test_list(record.get("PASS_TO_PASS"), "PASS_TO_PASS"),
        patch=record.get("patch") or "", repo_path=record.get("repo_path") or "", test_cmd=record.get("test_cmd") or "",
        folder=folder,
    )


def _records(path: Path) -> list[Any]:
    suffix = path.suffix.lower()
    try:
        if suffix == ".parquet":
            try:
                import pyarrow.parquet as pq  # optional: only for .parquet files
            except ImportError:
                raise TaskSetError(f"{path}: reading .parquet needs pyarrow (pip install pyarrow), or convert it to .jsonl") from None
            return list(pq.read_table(path).to_pylist())
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise TaskSetError(f"cannot read the tasks file {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise TaskSetError(f"{path} is not UTF-8 text") from None
    stripped = text.lstrip()
    if suffix == ".json" or stripped.startswith("["):
        try:
            data = json.loads(text)
        except ValueError as err:
            raise TaskSetError(f"{path} is not valid JSON: {err}") from None
        return data if isinstance(data, list) else [data]
    records: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError as err:
            raise TaskSetError(f"{path}:{number}: not a JSON line: {err}") from None
    return records


def load_tasks(path: Path) -> tuple[list[Task], list[str]]:
    """The tasks of ``path`` and one line for each record that is not a usable task (a duplicate
    id included: the first one counts).

    Raises:
        TaskSetError: the file cannot be read, or holds no usable task.
    """
    tasks: list[Task] = []
    problems: list[str] = []
    seen: set[str] = set()
    folder = path.resolve().parent
    for number, record in enumerate(_records(path), 1):
        where = record.get("instance_id") if isinstance(record, dict) and isinstance(record.get("instance_id"), str) else f"#{number}"
        try:
            task = parse_task(record, folder)
        except ValueError as err:
            problems.append(f"task {where} left out: {err}")
            continue
        if task.instance_id in seen:
            problems.append(f"task {where} left out: a second task with this instance_id")
            continue
        seen.add(task.instance_id)
        tasks.append(task)
    if not tasks:
        raise TaskSetError(f"{path} holds no usable task" + (f" ({problems[0]})" if problems else ""))
    return tasks, problems


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` (1 ≤ I ≤ N) as (I, N).

    Raises:
        ValueError: not of that form.
    """
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"--shard must be I/N with 1 <= I <= N, e.g. 1/4 (not {text!r})")
    return int(match[1]), int(match[2])


def shard_of(instance_id: str, count: int) -> int:
    """The shard (1..count) an id belongs to: from a hash of the id alone, so every machine splits
    any set the same way, whatever its order or the other ids in it."""
    return int(hashlib.sha256(instance_id.encode("utf-8")).hexdigest()[:16], 16) % count + 1


def parse_slice(text: str) -> slice:
    """``START:STOP`` (either may be left out; Python's meaning, negative numbers included).

    Raises:
        ValueError: not of that form.
    """
    match = re.fullmatch(r"\s*(-?\d*)\s*:\s*(-?\d*)\s*", text)
    if not match:
        raise ValueError(f"--slice must be START:STOP, e.g. 0:10 (not {text!r})")
    return slice(int(match[1]) if match[1] not in ("", "-") else None, int(match[2]) if match[2] not in ("", "-") else None)


def select(tasks: list[Task], *, ids: list[str] | None = None, pattern: str | None = None, part: slice | None = None,
           shard: tuple[int, int] | None = None) -> tuple[list[Task], list[str]]:
    """The tasks a run takes, in the file's order (``ids``, then ``pattern``, then ``part`` of
    what is left, then ``shard``), and the ``--ids`` that name no task.

    Raises:
        ValueError: ``pattern`` is not a valid regular expression.
    """
    chosen = tasks
    unknown: list[str] = []
    if ids:
        wanted = set(ids)
        known = {t.instance_id for t in tasks}
        unknown = [i for i in ids if i not in known]
        chosen = [t for t in chosen if t.instance_id in wanted]
    if pattern:
        try:
            regex = re.compile(pattern)
        except re.error as err:
            raise ValueError(f"--filter is not a valid regular expression: {err}") from None
        chosen = [t for t in chosen if regex.search(t.instance_id)]
    if part is not None:
        chosen = chosen[part]
    if shard is not None:
        index, count = shard
        chosen = [t for t in chosen if shard_of(t.instance_id, count) == index]
    return chosen, unknown
