"""The local test check of a prediction: what ``resolved`` means here (docs/EVAL.md).

In a fresh clone of the task's ``base_commit`` (never the tree the model worked in, so nothing it
left outside its patch counts): the prediction applied, then the task's ``test_patch``; then the
``FAIL_TO_PASS`` tests run, and the ``PASS_TO_PASS`` ones, each set as one command from the task's
``test_cmd`` (``{tests}`` replaced by the ids), in the sandbox the agent's Bash has (bubblewrap, no
network, the project's Python), with a time limit. Resolved: both commands exit 0. When a set
fails, its ids are run one by one (up to ``NAMED``) to say which.
"""
from __future__ import annotations

import dataclasses
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path

from frogtui.approval import PolicyEngine, make_sandbox
from frogtui.config import Config
from frogtui.eval.tasks import Task, command_for_tests
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner, Workspace
from frogtui.tools.observations import output_lines
from frogtui.tools.specs import BASH
from frogtui.vcs.clones import PatchFailed, apply_patch, clone_at

TEST_TIMEOUT_S = 600
"""A test command runs at most this long (the Bash tool's ceiling); ``--test-timeout`` lowers it."""
NAMED = 20
"""A failing set of at most this many ids is run again one id at a time, to name the failures."""
TAIL = 8


@dataclass
class CheckOutcome:
    resolved: bool
    failure: str | None = None
    """A class of ``summary.FAILURES`` when not resolved."""
    why: str = ""
    fail_to_pass_failed: list[str] = field(default_factory=list)
    pass_to_pass_failed: list[str] = field(default_factory=list)
    tail: str = ""
    """The last lines of the failing command's output."""


def sandboxed_runner(root: Path, config: Config, tmp: Path, hide: tuple[str, ...] = ()) -> ToolRunner:
    """A Bash runner in ``root`` with the sandbox a session there would have (the person's rules,
    the checkout's own ``.frogtui.toml`` untrusted), ``hide`` masked too.

    Raises:
        ConfigError: the person's rules file is invalid.
    """
    tmp.mkdir(parents=True, exist_ok=True)
    workspace = Workspace(root, tmp_dir=tmp)
    engine = PolicyEngine.load(workspace, config.rules_file)
    settings = engine.rules.sandbox
    sandbox = make_sandbox(workspace, dataclasses.replace(settings, hide=(*settings.hide, *hide)))
    return ToolRunner(workspace, wrap=sandbox.wrap)


def _run(runner: ToolRunner, command: str, timeout: int, cancel: threading.Event | None) -> tuple[bool, bool, str]:
    """(passed, timed out, output tail)."""
    outcome = runner.run(ToolCall(id="eval-check", name=BASH.name, arguments={"command": command, "timeout": timeout}), cancel=cancel)
    return outcome.exit_code == 0, outcome.timed_out, "\n".join(output_lines(outcome.observation)[-TAIL:])


def run_tests(runner: ToolRunner, template: str, tests: tuple[str, ...], timeout: int,
              cancel: threading.Event | None = None) -> tuple[bool, bool, list[str], str]:
    """Run ``tests`` as one command: (all passed, timed out, the failing ids when named, tail)."""
    if not tests:
        return True, False, [], ""
    passed, timed_out, tail = _run(runner, command_for_tests(template, tests), timeout, cancel)
    if passed or timed_out:
        return passed, timed_out, [], tail
    if len(tests) == 1 or len(tests) > NAMED:
        return False, False, list(tests) if len(tests) == 1 else [], tail
    failing = [t for t in tests if not _run(runner, command_for_tests(template, [t]), timeout, cancel)[0]]
    return False, False, failing, tail


def check_prediction(task: Task, source: Path, patch: str, config: Config, where: Path, *, test_cmd: str,
                     timeout: int = TEST_TIMEOUT_S, cancel: threading.Event | None = None, hide: tuple[str, ...] = ()) -> CheckOutcome:
    """Check ``patch`` against ``task`` (see the module's docstring) in a clone at ``where``,
    removed afterwards. The task must be ``checkable``.

    Raises:
        CheckoutFailed: the repository cannot be cloned at the base commit.
        ConfigError: the person's rules file is invalid.
    """
    shutil.rmtree(where, ignore_errors=True)
    tmp = where.with_name(where.name + ".tmp")
    try:
        clone_at(source, where, task.base_commit)
        try:
            apply_patch(where, patch)
        except PatchFailed as err:
            return CheckOutcome(False, "patch_does_not_apply", f"the patch does not apply to {task.base_commit[:10]}: {err}")
        try:
            apply_patch(where, task.test_patch)
        except PatchFailed as err:
            return CheckOutcome(False, "patch_does_not_apply", f"the test patch does not apply over the prediction: {err}")
        runner = sandboxed_runner(where, config, tmp, hide)
        template = task.test_cmd or test_cmd
        f2p_ok, f2p_timeout, f2p_failed, f2p_tail = run_tests(runner, template, task.fail_to_pass, timeout, cancel)
        if f2p_timeout:
            return CheckOutcome(False, "timed_out", f"the FAIL_TO_PASS tests ran past {timeout}s", tail=f2p_tail)
        p2p_ok, p2p_timeout, p2p_failed, p2p_tail = run_tests(runner, template, task.pass_to_pass, timeout, cancel)
        if p2p_timeout:
            return CheckOutcome(False, "timed_out", f"the PASS_TO_PASS tests ran past {timeout}s", tail=p2p_tail)
        if f2p_ok and p2p_ok:
            return CheckOutcome(True)
        parts = []
        if not f2p_ok:
            parts.append("FAIL_TO_PASS still failing" + (f": {', '.join(f2p_failed)}" if f2p_failed else ""))
        if not p2p_ok:
            parts.append("PASS_TO_PASS broken" + (f": {', '.join(p2p_failed)}" if p2p_failed else ""))
        return CheckOutcome(False, "tests_fail", "; ".join(parts), f2p_failed, p2p_failed, f2p_tail if not f2p_ok else p2p_tail)
    finally:
        shutil.rmtree(where, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
