"""frogtui's own git never comes from the repository (issue 23, item 3): a sandboxed command that
writes ``.venv/bin/git`` (ignored, on ``PATH`` through an activated in-repo virtualenv, or through a
relative ``PATH`` entry) must not get it run outside the sandbox at the next checkpoint, review,
patch or commit; ``frogtui.programs`` resolves git once, from a ``PATH`` without the repository."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.programs import Programs, clean_entries
from tests.support import git, turn, write_replay, xml_call

SYSTEM_PATH = os.environ.get("PATH", os.defpath)


def fake_git(marker: Path) -> str:
    """A ``git`` that leaves ``marker`` (outside the repository) and then runs the real git."""
    return f"#!/bin/sh\necho \"$@\" >> {marker}\nexec /usr/bin/git \"$@\"\n"


def frogtui_run(repo: Path, replay: Path, path: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path}
    argv = [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", "all", *extra]
    return subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=120, env=env)


PATHS = [("ABS", ".venv/bin"), (".venv/bin", ".venv/bin"), ("node_modules/.bin", "node_modules/.bin")]
"""(the ``PATH`` entry, ABS for the folder's absolute path; the folder in the repository)."""


@pytest.mark.parametrize(("entry", "folder"), PATHS)
def test_a_git_a_command_plants_on_path_never_runs_outside_the_sandbox(py_repo: Path, tmp_path: Path, entry: str, folder: str) -> None:
    """The red-team reproduction: the model's Bash writes ``<folder>/git`` (ignored), the next
    Write takes a checkpoint, the run ends with the patch, ``--commit`` commits: frogtui's git
    is never the planted one (the marker outside the repository stays absent)."""
    (py_repo / ".gitignore").write_text(".venv/\nnode_modules/\n")
    git(py_repo, "add", ".gitignore")
    git(py_repo, "commit", "-q", "-m", "ignore")
    (py_repo / folder).mkdir(parents=True)
    marker = tmp_path / "ran-outside.txt"
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Write", file_path=f"{folder}/git", content=fake_git(marker))),
        turn("", xml_call("Bash", command=f"chmod +x {folder}/git")),
        turn("", xml_call("Write", file_path="new.py", content="x = 1\n")),
        turn("", answer="done"),
    ])
    on_path = str(py_repo / folder) if entry == "ABS" else entry
    proc = frogtui_run(py_repo, replay, f"{on_path}:{SYSTEM_PATH}", "--commit")
    assert (py_repo / folder / "git").exists(), proc.stderr  # the command did plant it
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the planted git ran outside the sandbox: {marker.read_text()}"
    assert git(py_repo, "log", "-1", "--format=%s") != "ignore\n", "the run's change was committed"


def test_a_git_planted_before_the_session_never_runs(py_repo: Path, tmp_path: Path) -> None:
    """A ``.venv/bin/git`` left by an earlier session is not run, not even by gitpython's
    ``git version`` when it is imported."""
    (py_repo / ".gitignore").write_text(".venv/\n")
    marker = tmp_path / "ran-outside.txt"
    (py_repo / ".venv" / "bin").mkdir(parents=True)
    (py_repo / ".venv" / "bin" / "git").write_text(fake_git(marker))
    (py_repo / ".venv" / "bin" / "git").chmod(0o755)
    replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Write", file_path="new.py", content="x = 1\n")), turn("", answer="ok")])
    proc = frogtui_run(py_repo, replay, f"{py_repo / '.venv' / 'bin'}:{SYSTEM_PATH}", "--commit")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the planted git ran: {marker.read_text()}"


def test_review_patch_rewind_and_the_persons_commit_use_the_pinned_git(py_repo: Path, tmp_path: Path) -> None:
    """Every git frogtui runs in a session (snapshot, checkpoint, review, patch, rewind, the
    person's commit from the review), with the repository's ``.venv/bin`` first on ``PATH``."""
    marker = tmp_path / "ran-outside.txt"
    (py_repo / ".gitignore").write_text(".venv/\n")
    (py_repo / ".venv" / "bin").mkdir(parents=True)
    script = f"""
import os
from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import discover, read_git_state, session_patch
from frogtui.vcs.review import ReviewSession
state = discover({str(py_repo)!r}, "s1")
open(".venv/bin/git", "w").write({fake_git(marker)!r})
os.chmod(".venv/bin/git", 0o755)
points = Checkpoints(state)
points.before_action(1, ToolCall("c1", "Write", {{}}))
open("calc.py", "w").write("def add(a, b):\\n    return a + b\\n")
points.before_action(2, ToolCall("c2", "Write", {{}}))
assert "calc.py" in session_patch(state)()
review = ReviewSession(state)
selection = review.load()
review.commit(selection, "fix add")
read_git_state({str(py_repo)!r})
points.rewind(2)
print("ok")
"""
    env = {**os.environ, "PATH": f"{py_repo / '.venv' / 'bin'}:{SYSTEM_PATH}"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=py_repo, capture_output=True, text=True, timeout=60, env=env)
    assert proc.stdout == "ok\n", proc.stderr
    assert not marker.exists(), f"the planted git ran: {marker.read_text()}"


def test_clean_path_keeps_no_relative_empty_or_in_repository_entry(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".venv" / "bin").mkdir(parents=True)
    other = tmp_path / "elsewhere" / "bin"
    other.mkdir(parents=True)
    link = tmp_path / "bin-link"
    link.symlink_to(repo / ".venv" / "bin")  # a link into the repository counts as inside it
    plain = tmp_path / "plain"
    plain.mkdir()
    path = os.pathsep.join(["", ".", "node_modules/.bin", str(repo / ".venv" / "bin"), str(link), str(other), str(other), "/usr/bin"])
    assert clean_entries(path, [str(plain)]) == (str(other), "/usr/bin")
    assert clean_entries(str(plain / "bin"), [str(plain)]) == ()


def test_which_never_returns_a_program_whose_real_path_is_in_a_named_tree(tmp_path: Path) -> None:
    workspace, bin_dir = tmp_path / "work", tmp_path / "bin"
    workspace.mkdir()
    bin_dir.mkdir()
    (workspace / "bwrap").write_text("#!/bin/sh\n")
    (workspace / "bwrap").chmod(0o755)
    (bin_dir / "bwrap").symlink_to(workspace / "bwrap")
    programs = Programs((str(bin_dir), "/usr/bin"), ())
    assert programs.which("bwrap") == str(bin_dir / "bwrap")
    assert programs.for_trees(workspace).which("bwrap") == ("/usr/bin/bwrap" if os.path.exists("/usr/bin/bwrap") else None)


def test_bwrap_is_never_taken_from_the_workspace(tmp_path: Path) -> None:
    """The sandbox itself (bwrap runs outside it) is not a ``bwrap`` in the workspace, which is not
    a git repository here, on ``PATH`` first."""
    workspace = tmp_path / "work"
    (workspace / ".venv" / "bin").mkdir(parents=True)
    marker = tmp_path / "ran-outside.txt"
    (workspace / ".venv" / "bin" / "bwrap").write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexec /usr/bin/bwrap \"$@\"\n")
    (workspace / ".venv" / "bin" / "bwrap").chmod(0o755)
    script = (
        "from frogtui.approval.rules import SandboxSettings\nfrom frogtui.approval.sandbox import make_sandbox\n"
        f"from frogtui.tools import Workspace\nprint(make_sandbox(Workspace({str(workspace)!r}), SandboxSettings()).kind)\n"
    )
    env = {**os.environ, "PATH": f"{workspace / '.venv' / 'bin'}:{SYSTEM_PATH}"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the workspace's bwrap ran: {marker.read_text()}"


def test_git_init_of_a_folder_named_later_never_runs_its_git(tmp_path: Path) -> None:
    """A folder that is not a repository yet, with its virtualenv active, named as the workspace
    (``--repo``) from elsewhere: neither gitpython's import nor ``git init`` (the app's "Initialise
    git repository") runs the ``git`` its ``.venv/bin`` holds."""
    folder = tmp_path / "project"
    (folder / ".venv" / "bin").mkdir(parents=True)
    (folder / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    marker = tmp_path / "ran-outside.txt"
    (folder / ".venv" / "bin" / "git").write_text(fake_git(marker))
    (folder / ".venv" / "bin" / "git").chmod(0o755)
    script = (f"from frogtui.vcs.repository import discover, init_repo\ninit_repo({str(folder)!r})\n"
              f"print(discover({str(folder)!r}, 's') is not None)\n")
    env = {**os.environ, "PATH": f"{folder / '.venv' / 'bin'}:{SYSTEM_PATH}"}
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env)
    assert proc.stdout == "True\n", proc.stderr
    assert not marker.exists(), f"the folder's git ran: {marker.read_text()}"
