"""Checkpoints the model cannot forge (issue 9, finding 5): a loose object rewritten under the same
name, or a checkpoint ref moved outside frogtui, is refused with one line before rewind touches a
file. Real git; the forgeries are done as a command without the sandbox could do them."""
from __future__ import annotations

import zlib
from pathlib import Path

import pytest

from frogtui.config import sessions_dir
from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import discover, resume
from frogtui.vcs.verify import RECORD, CheckpointForged
from tests.vcs.cases import git

BASH = ToolCall(id="c1", name="Bash", arguments={"command": "…"})


@pytest.fixture
def repo(py_repo: Path) -> Path:
    return py_repo


def session(name: str) -> str:
    (sessions_dir() / name).mkdir(parents=True)
    return name


def test_frogtuis_refs_are_recorded_in_the_session_folder(repo: Path) -> None:
    state = discover(repo, session("s1"))
    Checkpoints(state).before_action(1, BASH)
    lines = (sessions_dir() / "s1" / RECORD).read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["refs/frogtui/s1/start", "refs/frogtui/s1/1"]


def test_a_rewritten_loose_object_is_refused_before_anything_is_touched(repo: Path) -> None:
    state = discover(repo, session("s2"))
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "calc.py").write_text("the model's change\n")
    (repo / "new.txt").write_text("made by the step\n")
    blob = git(repo, "rev-parse", f"{checkpoints.find(1).tree}:calc.py").strip()  # its ref may not be written yet
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"blob 9\0attacker\n"))
    with pytest.raises(CheckpointForged, match=f"checkpoint object {blob} does not match its content"):
        checkpoints.rewind(1)
    assert (repo / "calc.py").read_text() == "the model's change\n" and (repo / "new.txt").exists()


def test_a_moved_checkpoint_ref_is_refused_after_a_restart(repo: Path) -> None:
    state = discover(repo, session("s3"))
    Checkpoints(state).before_action(1, BASH)
    (repo / "evil.txt").write_text("planted\n")
    git(repo, "add", "evil.txt")
    forged = git(repo, "write-tree").strip()
    git(repo, "update-ref", "refs/frogtui/s3/1", forged)
    with pytest.raises(CheckpointForged, match="refs/frogtui/s3/1 is not what frogtui recorded"):
        Checkpoints(state).rewind(1)  # a new process: the checkpoint is read back from git
    git(repo, "update-ref", "refs/frogtui/s3/start", forged)
    with pytest.raises(CheckpointForged, match="refs/frogtui/s3/start is not what frogtui recorded"):
        resume(repo, "s3")


def test_resume_never_picks_a_planted_session(repo: Path) -> None:
    real = discover(repo, session("20260101-000000-real"))
    planted = git(repo, "write-tree").strip()
    git(repo, "update-ref", "refs/frogtui/zzzz-planted/start", planted)  # sorts after the real one
    state = resume(repo)
    assert state is not None and state.session == real.session and state.start_tree == real.start_tree


def test_refs_written_in_a_batch_are_recorded_too(repo: Path) -> None:
    from frogtui.vcs.repository import run_git

    state = discover(repo, session("s5"))
    batch = f"update refs/frogtui/s5/1 {state.start_tree}\ncreate refs/frogtui/s5/2 {state.start_tree}\n"
    run_git(state.repo, "update-ref", "-m", "batch", "--stdin", stdin=batch.encode())
    run_git(state.repo, "update-ref", "--stdin", stdin=b"delete refs/frogtui/s5/1\n")
    lines = (sessions_dir() / "s5" / RECORD).read_text().splitlines()
    assert lines[1:] == [f"refs/frogtui/s5/1 {state.start_tree}", f"refs/frogtui/s5/2 {state.start_tree}", "refs/frogtui/s5/1 -"]
