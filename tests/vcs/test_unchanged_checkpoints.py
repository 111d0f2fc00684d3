"""A checkpoint of a tree that has not changed since a checkpoint whose ref git holds (issue 15):
no git process while the kernel says nothing in the tree changed (``vcs.watch``), one (``git
status``) where it cannot say, instead of two. Its ref is recorded in the session folder at once
and written to git with the next ``update-ref`` frogtui runs anyway, on rewind, on drop and at the
end of each run; a crash in between loses at most such a ref, and the record still finds it.
Real git; processes counted with ``GIT_TRACE``."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.config import sessions_dir
from frogtui.protocol import ToolCall
from frogtui.session.core import SessionCore
from frogtui.vcs import watch
from frogtui.vcs.checkpoints import Checkpoints, NoCheckpoint
from frogtui.vcs.repository import discover, resume
from frogtui.vcs.verify import RECORD
from tests.session.test_core import FIX, replay_config, started
from tests.support import turn
from tests.vcs.cases import git

BASH = ToolCall(id="c1", name="Bash", arguments={"command": "…"})


def session(name: str) -> str:
    (sessions_dir() / name).mkdir(parents=True)
    return name


def traced(monkeypatch: pytest.MonkeyPatch, trace: Path, action: object) -> list[str]:
    """The git commands ``action()`` ran (one line each, without the ``-c`` options)."""
    trace.unlink(missing_ok=True)
    monkeypatch.setenv("GIT_TRACE", str(trace))
    try:
        action()  # type: ignore[operator]
    finally:
        monkeypatch.delenv("GIT_TRACE")
    commands = []
    for line in trace.read_text().splitlines() if trace.exists() else []:
        if "trace: built-in: git " in line:
            words = line.split("trace: built-in: git ", 1)[1].split()
            while words[:1] == ["-c"]:
                words = words[2:]
            commands.append(" ".join(words))
    return commands


def refs(repo: Path, name: str) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", f"refs/frogtui/{name}/")
    return {ref.rsplit("/", 1)[1]: sha for ref, sha in (line.split() for line in out.splitlines())}


def record(name: str) -> list[str]:
    return (sessions_dir() / name / RECORD).read_text().splitlines()


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "not watched"])
def test_an_unchanged_tree_costs_no_git_process_or_one_and_a_restart_still_finds_it(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: bool
) -> None:
    if not watched:  # a tree the kernel cannot watch (too many folders, no inotify): git status says
        monkeypatch.setattr(watch, "MAX_FOLDERS", 0)
    state = discover(py_repo, session("u1"))
    assert state is not None
    checkpoints = Checkpoints(state, watched=True)  # a sandboxed session's
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    checkpoints.before_action(1, BASH)
    tree = checkpoints.find(1).tree
    commands = traced(monkeypatch, tmp_path / "trace", lambda: checkpoints.before_action(2, BASH))
    assert [c.split()[0] for c in commands] == ([] if watched else ["status"]), commands
    assert checkpoints.find(2).tree == tree and record("u1")[-1] == f"refs/frogtui/u1/2 {tree}"
    # the process dies before the ref reaches git: a new one finds the checkpoint in the record
    (py_repo / "calc.py").write_text("broken\n")
    (py_repo / "made.txt").write_text("made by step 2\n")
    restarted = Checkpoints(resume(py_repo, "u1"))  # type: ignore[arg-type]
    assert restarted.find(2).tree == tree
    result = restarted.rewind(2)
    assert (result.restored, result.removed) == (["calc.py"], ["made.txt"])
    assert (py_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    with pytest.raises(NoCheckpoint):
        restarted.find(3)


def test_waiting_refs_go_to_git_in_one_process_with_the_next_one_written(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = discover(py_repo, session("u2"))
    assert state is not None
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)  # unchanged since the start
    checkpoints.before_action(2, BASH)
    checkpoints.before_action(2, BASH)
    (py_repo / "new.txt").write_text("new\n")
    commands = traced(monkeypatch, tmp_path / "trace", lambda: checkpoints.before_action(3, BASH))
    assert [c.split()[0] for c in commands if c.startswith("update-ref")] == ["update-ref"], commands
    written = refs(py_repo, "u2")
    assert set(written) == {"start", "1", "2", "2.2", "3"}
    assert written["1"] == written["2"] == written["2.2"] == state.start_tree != written["3"]
    assert {line.split()[0].rsplit("/", 1)[1] for line in record("u2")} == set(written)
    assert all(state.repo.git.rev_parse(f"refs/frogtui/u2/{name}") == sha for name, sha in written.items())


def test_rewind_and_drop_write_the_waiting_refs_first(py_repo: Path) -> None:
    state = discover(py_repo, session("u3"))
    assert state is not None
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (py_repo / "calc.py").write_text("changed\n")
    checkpoints.rewind(1)
    assert set(refs(py_repo, "u3")) == {"start", "1", "before-rewind", "before-rewind-after"}  # -after: the rewind's result
    checkpoints.before_action(2, BASH)  # the tree the rewind put back: unchanged
    checkpoints.drop()
    assert refs(py_repo, "u3") == {} and record("u3")[-1] == "refs/frogtui/u3/start -"
    assert "refs/frogtui/u3/2 -" in record("u3")
    with pytest.raises(NoCheckpoint):
        Checkpoints(state).find(2)  # the record says it was deleted


def test_every_checkpoint_ref_is_in_git_when_a_run_ends(py_repo: Path, tmp_path: Path) -> None:
    core = SessionCore(replay_config(py_repo, tmp_path, [turn("fix", FIX), turn("", answer="Fixed.")]))
    started(core)
    assert core.send("fix add").exit_reason == "agent"
    assert core.checkpoints is not None and [c.tool for c in core.checkpoints.taken] == ["Edit"]
    written = refs(py_repo, core.session.id)
    assert set(written) == {"start", "1", "1-after"} and written["1"] == written["start"] != written["1-after"]
