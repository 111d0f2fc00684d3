"""Changes under ignored paths (``.venv/``, ``node_modules/``, ``.env``) are in no checkpoint, patch
or review (issue 23, item 3): the run summary and the review name them, and rewind says which it
cannot restore."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.ignored import MAX_FILES, IgnoredFiles, grouped, report
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession
from tests.support import git, turn, write_replay, xml_call

BASH = ToolCall(id="c1", name="Bash", arguments={"command": "…"})


def ignoring(repo: Path) -> None:
    (repo / ".gitignore").write_text(".venv/\n.env\n__pycache__/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").write_text("#!/bin/sh\n")
    (repo / ".env").write_text("TOKEN=1\n")


def test_the_run_summary_names_what_a_command_changed_under_ignored_paths(py_repo: Path, tmp_path: Path) -> None:
    """The red-team finding: a command wrote ``.venv/bin/git`` and deleted ``.env``, and the summary
    said "0 files changed"."""
    ignoring(py_repo)
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Bash", command="echo x > .venv/bin/git && rm .env")),
        turn("", answer="done"),
    ])
    argv = [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all"]
    proc = subprocess.run(argv, cwd=py_repo, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    assert (py_repo / ".venv" / "bin" / "git").exists() and not (py_repo / ".env").exists(), proc.stderr
    summary = [line for line in proc.stderr.splitlines() if line.startswith("frogtui: agent")]
    assert len(summary) == 1, proc.stderr
    assert "0 files changed · 2 ignored paths changed" in summary[0] and ".env, .venv/bin/git" in summary[0], summary


def test_review_names_them_and_rewind_says_it_cannot_restore_them(py_repo: Path) -> None:
    ignoring(py_repo)
    state = discover(py_repo, "ign")
    points = Checkpoints(state)
    points.before_action(1, BASH)
    (py_repo / ".venv" / "bin" / "git").write_text("#!/bin/sh\n")  # what the command did
    (py_repo / ".venv" / "bin" / "python").write_text("#!/bin/sh\necho changed\n")
    (py_repo / ".env").unlink()
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    review = ReviewSession(state, ignored=points.ignored_changed)
    assert [f.path for f in review.load().files] == ["calc.py"]
    assert review.ignored_changed() == [".env", ".venv/bin/git", ".venv/bin/python"]
    result = points.rewind(1)
    assert result.restored == ["calc.py"]
    assert result.not_restored == [".env", ".venv/bin/git", ".venv/bin/python"]
    assert "Not restored (ignored by git" in result.summary and ".venv/bin/git" in result.summary
    assert ".env" in result.message and "Not restored" in result.message


def test_nothing_is_named_when_no_ignored_file_changed(py_repo: Path) -> None:
    ignoring(py_repo)
    state = discover(py_repo, "none")
    points = Checkpoints(state)
    assert points.ignored_changed() == []  # before the first action: nothing to compare with
    points.before_action(1, BASH)
    (py_repo / "calc.py").write_text("x\n")
    assert points.ignored_changed() == [] and points.rewind(1).not_restored == []


def test_many_changes_under_one_ignored_folder_are_named_once() -> None:
    paths = ["a.txt", *(f"__pycache__/m{n}.pyc" for n in range(5)), ".venv/bin/git"]
    assert grouped(paths, ("__pycache__", ".venv", "a.txt")) == [".venv/bin/git", "__pycache__/ (5 files)", "a.txt"]
    before = IgnoredFiles({"x/1": (1, 1, 1, 1), "y/1": (1, 1, 1, 1)}, ("x", "y", "z"))
    after = IgnoredFiles({"x/1": (2, 1, 1, 1), "y/1": (2, 1, 1, 1)}, ("x", "y", "z"), ("y", "z"))
    assert report(before, after) == ["x/1", f"not checked (more than {MAX_FILES} ignored files and folders): y, z"]


def test_a_walk_that_runs_out_names_what_it_did_not_check(py_repo: Path, monkeypatch) -> None:
    """A command that fills an ignored folder cannot hide a change in the ones walked after it."""
    import frogtui.vcs.ignored as ignored

    (py_repo / ".gitignore").write_text("junk/\nzz/\n")
    (py_repo / "junk").mkdir()
    (py_repo / "zz").mkdir()
    (py_repo / "zz" / "git").write_text("x")
    state = discover(py_repo, "cut")
    points = Checkpoints(state)
    points.before_action(1, BASH)
    for n in range(30):
        (py_repo / "junk" / f"f{n}").write_text("x")
    (py_repo / "zz" / "git").write_text("#!/bin/sh\n")
    monkeypatch.setattr(ignored, "MAX_FILES", 20)
    assert points.ignored_changed() == ["not checked (more than 20 ignored files and folders): junk, zz"]


def test_caches_a_test_run_writes_are_said_quietly_and_what_runs_later_still_warns(py_repo: Path, tmp_path: Path) -> None:
    """Every Python run writes ``.pytest_cache`` and ``__pycache__``: the summary says so without
    the warning; a script in ``.venv/bin`` and an executable planted in a cache still warn."""
    (py_repo / ".gitignore").write_text(".venv/\n.pytest_cache/\n__pycache__/\n")
    git(py_repo, "add", ".gitignore")
    git(py_repo, "commit", "-q", "-m", "ignore")
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Bash", command="python -m pytest -q -p cacheprovider; true")),
        turn("", answer="done"),
    ])
    argv = [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all"]
    proc = subprocess.run(argv, cwd=py_repo, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert (py_repo / ".pytest_cache").is_dir(), proc.stderr
    (summary,) = [line for line in proc.stderr.splitlines() if line.startswith("frogtui: agent")]
    assert "ignored path" not in summary and "not restored by undo" not in summary, summary
    assert "caches updated: " in summary and ".pytest_cache/" in summary, summary
    state = discover(py_repo, "planted")
    points = Checkpoints(state)
    points.before_action(1, BASH)
    (py_repo / ".venv" / "bin").mkdir(parents=True)
    (py_repo / ".venv" / "bin" / "activate").write_text("echo hi\n")
    (py_repo / "__pycache__").mkdir(exist_ok=True)
    planted = py_repo / "__pycache__" / "run-me"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    (py_repo / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"x")
    assert points.ignored_changed() == [".venv/bin/activate", "__pycache__/run-me"]
    assert points.caches_changed == ["__pycache__/calc.cpython-311.pyc"]
