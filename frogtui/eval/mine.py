"""``frogtui eval mine``: tasks made from a repository's own history.

A commit makes a task when it changed both source files and test files (``is_test_path``) and
some test fails before its source change and passes after it: its test files are run (pytest,
with ``-rA``, in the sandbox) once at the parent with only the commit's test changes applied, and once
at the commit. ``FAIL_TO_PASS``: the tests that pass at the commit and did not before (failed,
errored or could not be collected); ``PASS_TO_PASS``: those that passed both times. The statement
is the commit message (with whatever issue text it quotes), ``base_commit`` the parent,
``test_patch`` the commit's test changes, ``patch`` (the gold patch) the rest. Only pytest
projects are mined for now: the test ids come from pytest's report.
"""
from __future__ import annotations

import re
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from frogtui.config import Config, cache_dir
from frogtui.errors import FrogtuiError
from frogtui.eval.check import TEST_TIMEOUT_S, sandboxed_runner
from frogtui.eval.tasks import Task, command_for_tests, safe_name
from frogtui.protocol import ToolCall
from frogtui.tools.specs import BASH
from frogtui.vcs.clones import apply_patch, clone_at
from frogtui.vcs.history import CommitInfo, diff_of, origin_name, recent_commits

PYTEST = "python -m pytest -q -p no:cacheprovider {tests}"
"""The test command of a mined task."""


def report_command(test_cmd: str) -> str:
    """How the mined commit's test files are run, to read each test's outcome: the test command
    with pytest's ``-rA`` (every outcome in the short summary)."""
    return test_cmd.replace("{tests}", "-rA {tests}") if "{tests}" in test_cmd else f"{test_cmd} -rA {{tests}}"
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.py$|(^|/)conftest\.py$")
_PYTEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
_OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (.+)$")


def is_test_path(path: str) -> bool:
    """Whether a changed file counts as a test (a ``test(s)/`` folder, ``test_*``, ``*_test.py``, ``conftest.py``)."""
    return bool(_TEST_PATH.search(path))


def read_report(output: str) -> dict[str, str]:
    """Each test id's outcome from pytest's ``-rA`` summary lines (``FAILED ID - message``; an id's
    parameters may hold `` - `` themselves)."""
    outcomes: dict[str, str] = {}
    for line in output.splitlines():
        match = _OUTCOME.match(line.strip())
        if match:
            test = _test_id(match[2])
            if "::" in test:
                outcomes[test] = match[1]
    return outcomes


def _test_id(rest: str) -> str:
    head = rest.split(" - ", 1)[0].strip()
    if "[" in head and not head.endswith("]"):
        whole = re.match(r"(.*?\])(?: - |$)", rest)
        if whole:
            return whole[1]
    return head


def _outcomes(root: Path, files: list[str], config: Config, tmp: Path, timeout: int, cancel: threading.Event | None,
              test_cmd: str) -> dict[str, str]:
    runner = sandboxed_runner(root, config, tmp)
    command = command_for_tests(report_command(test_cmd), files)
    outcome = runner.run(ToolCall(id="mine", name=BASH.name, arguments={"command": command, "timeout": timeout}), cancel=cancel)
    return read_report(outcome.observation)


def mine_commit(repo: Path, commit: CommitInfo, config: Config, work: Path, *, name: str, test_cmd: str = PYTEST,
                timeout: int = TEST_TIMEOUT_S, cancel: threading.Event | None = None) -> tuple[Task | None, str]:
    """The task ``commit`` makes, or None and why not."""
    tests = [p for p in commit.changed if is_test_path(p)]
    source = [p for p in commit.changed if not is_test_path(p)]
    if not tests or not source:
        return None, "changes no tests" if not tests else "changes only tests"
    runnable = [p for p in tests if _PYTEST_FILE.search(p) and (repo / p).suffix == ".py"]
    if not runnable:
        return None, "no pytest file among its test changes"
    test_patch = diff_of(repo, commit.parent, commit.sha, tests)
    patch = diff_of(repo, commit.parent, commit.sha, source)
    before_dir, after_dir = work / f"{commit.sha[:12]}.before", work / f"{commit.sha[:12]}.after"
    try:
        clone_at(repo, before_dir, commit.parent)
        apply_patch(before_dir, test_patch)
        present = [p for p in runnable if (before_dir / p).is_file()]
        before = _outcomes(before_dir, present, config, work / "tmp", timeout, cancel, test_cmd)
        clone_at(repo, after_dir, commit.sha)
        after = _outcomes(after_dir, present, config, work / "tmp", timeout, cancel, test_cmd)
    finally:
        shutil.rmtree(before_dir, ignore_errors=True)
        shutil.rmtree(after_dir, ignore_errors=True)
    fail_to_pass = sorted(t for t, o in after.items() if o == "PASSED" and before.get(t) != "PASSED")
    pass_to_pass = sorted(t for t, o in after.items() if o == "PASSED" and before.get(t) == "PASSED")
    if not fail_to_pass:
        return None, "no test fails before its source change and passes after it"
    task = Task(
        instance_id=f"{name.replace('/', '__')}-{commit.sha[:12]}", repo=name, base_commit=commit.parent,
        problem_statement=commit.message, test_patch=test_patch, fail_to_pass=tuple(fail_to_pass),
        pass_to_pass=tuple(pass_to_pass), patch=patch, repo_path=str(repo), test_cmd=test_cmd,
    )
    return task, f"{len(fail_to_pass)} FAIL_TO_PASS, {len(pass_to_pass)} PASS_TO_PASS"


def mine(repo: Path, config: Config, *, last: int, say: Callable[[str], None], test_cmd: str = PYTEST,
         timeout: int = TEST_TIMEOUT_S, cancel: threading.Event | None = None) -> list[Task]:
    """The tasks the last ``last`` commits of ``repo`` make (newest first); a line per commit to ``say``.

    Raises:
        FrogtuiError: the history cannot be read.
    """
    repo = repo.resolve()
    name = origin_name(repo)
    commits = recent_commits(repo, last)
    cache_dir().mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"mine-{safe_name(name)}-", dir=cache_dir()))
    tasks = []
    try:
        for commit in commits:
            if cancel is not None and cancel.is_set():
                break
            subject = commit.message.splitlines()[0][:70] if commit.message else ""
            try:
                task, why = mine_commit(repo, commit, config, work, name=name, test_cmd=test_cmd, timeout=timeout, cancel=cancel)
            except FrogtuiError as err:
                task, why = None, f"cannot be checked: {err}"
            say(f"{commit.sha[:10]} {subject!r}: {'task, ' if task else 'no task: '}{why}")
            if task is not None:
                tasks.append(task)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tasks
