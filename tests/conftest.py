"""Shared fixtures: every test runs with its own XDG folders, HOME-less git identity, and can make
real git repositories and replay files in temp folders."""
from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import git

# Every pytest-xdist worker imports and assertion-rewrites every test module: with the bytecode
# cache that is done once, not by each worker at each run (about 7 s of CPU a worker), so the
# suite writes its __pycache__ even where PYTHONDONTWRITEBYTECODE is set (they are git-ignored).
sys.dont_write_bytecode = False


SLOW_MODULES = frozenset({
    "tests/acp/test_server.py", "tests/acp/test_permission_shows_all.py", "tests/acp/test_instructions_note.py",
    "tests/test_attempts.py", "tests/approval/test_properties.py", "tests/tools/test_project_env.py",
    "tests/eval/test_eval_server.py", "tests/eval/test_mine_and_examples.py",
    "tests/ui/test_approval_fit.py", "tests/ui/test_flows.py", "tests/ui/test_review_screen.py", "tests/ui/test_long_sessions.py",
    "tests/ui/test_pacing.py", "tests/ui/test_attempts_app.py", "tests/ui/test_usability.py", "tests/ui/test_bursts.py",
    "tests/ui/test_exits.py", "tests/ui/test_slash_commands.py", "tests/ui/test_tool_lines_footer_and_viewer.py",
})
"""Whole modules in the slow tier: the heaviest of the default run, by CPU measured per test
(each 5-35 s of CPU a module: Pilot sessions, ACP sessions, attempts in worktrees, hypothesis,
eval's servers). The README's ``python -m pytest`` stays under three minutes on two vCPUs;
``.ci/run`` runs these with ``-m slow`` right after, so nothing goes unproven. Each area keeps
lighter modules in the default run (tests/ui/test_app.py, test_keys.py, test_queue.py,
tests/acp/test_commands.py, tests/test_headless.py…)."""


@pytest.hookimpl(tryfirst=True)  # before -m "not slow" deselects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that share the ``llama_cpp.server`` run on one pytest-xdist worker (one server a
    run); the tests of ``SLOW_MODULES`` are marked slow."""
    for item in items:
        if "llama_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("llama_server"))
        if item.nodeid.split("::", 1)[0] in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Under pytest-xdist a test marked ``timing`` runs alone: it waits for the other workers'
    tests to end, and they wait for it (a readers-writer lock on two files the workers share: a
    test waiting to run alone holds the turnstile, so no new test starts before it)."""
    folder = _shared_run_folder(item.config)
    if folder is None:
        return (yield)
    alone = item.get_closest_marker("timing") is not None
    with open(folder / "turnstile.lock", "a") as turnstile, open(folder / "room.lock", "a") as room:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            return (yield)
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)


def _shared_run_folder(config: pytest.Config) -> Path | None:
    """A folder this run's pytest-xdist workers share (None without workers)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return config._tmp_path_factory.getbasetemp().parent  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point XDG folders, git's global config and the Hugging Face cache at a fresh temp folder."""
    base = tmp_path_factory.mktemp("env")
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        folder = base / name.lower()
        folder.mkdir()
        monkeypatch.setenv(name, str(folder))
    gitconfig = base / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Test Person\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HF_HOME", str(base / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("FROGTUI_CONFIG", raising=False)
    return base


@pytest.fixture(autouse=True)
def no_llama_in_this_process() -> Iterator[None]:
    """llama.cpp runs only in model processes (``models/runner.py``), never in the test session's:
    a native crash there is a failing test with a message, never a dead test session."""
    yield
    assert "llama_cpp" not in sys.modules, "a test loaded llama.cpp into the test process; use frogtui.models.load_model"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """A test that changes the working folder must put it back (``monkeypatch.chdir``): a later test
    on the same worker that started ``python -c "from tests..."`` failed in CI because one test left
    the worker in its deleted temp repository. Checked after every fixture (monkeypatch too) is done."""
    before = item.stash.get(_WORKING_FOLDER, None)
    result = yield
    try:
        after = os.getcwd()
    except FileNotFoundError:
        after = "a deleted folder"
    if before is not None and after != before:
        os.chdir(before)
        raise AssertionError(f"{item.nodeid} left the working folder at {after} (it was {before}); use monkeypatch.chdir")
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_WORKING_FOLDER] = os.getcwd()


_WORKING_FOLDER = pytest.StashKey[str]()


@pytest.fixture
def py_repo(tmp_path: Path) -> Path:
    """A small Python project in a real git repository with one commit: calc.add is wrong."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


@pytest.fixture
def on_disk() -> Iterator[Path]:
    """A throwaway folder outside /tmp: the sandbox replaces /tmp with an empty one, so a repository
    or a planted file there could not be seen from inside, written or not."""
    base = Path.home() / ".cache"
    if str(base).startswith(("/tmp/", "/var/tmp/", "/run/")):
        pytest.skip("no folder outside /tmp to test with")
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="frogtui-test-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
