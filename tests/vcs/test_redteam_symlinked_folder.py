"""h9 red-team finding 5: undo restores what an allowed command changed, also when the command
replaced a tracked folder with a symbolic link (``mv docs d2 && ln -s d2 docs``). git's ``add``
refused the deleted ``docs/guide.md`` ("beyond a symbolic link"), so no checkpoint could be
taken after it and the rewind failed. Real git, the agent loop, real bubblewrap when present."""
from __future__ import annotations

import shutil
from pathlib import Path

from frogtui.agent.loop import Agent
from frogtui.approval import Approver, PolicyEngine, SandboxSettings, make_sandbox
from frogtui.approval.sandbox import probe_bwrap
from frogtui.models.replay import ReplayModel
from frogtui.tools import ToolRunner, Workspace
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import discover
from frogtui.vcs.snapshot import snapshot_tree
from tests.support import turn, write_replay, xml_call
from tests.vcs.cases import git


class Quiet:
    def emit(self, event: object) -> None:
        pass


def test_undo_restores_a_folder_replaced_by_a_symlink(py_repo: Path, tmp_path: Path) -> None:
    (py_repo / "docs").mkdir()
    (py_repo / "docs" / "guide.md").write_text("# guide\n")
    git(py_repo, "add", "docs")
    git(py_repo, "commit", "-qm", "docs")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "guide.md").write_text("outside, never touched\n")
    state = discover(py_repo, "rw")
    checkpoints = Checkpoints(state)
    start = snapshot_tree(state.repo)
    (tmp_path / "session-tmp").mkdir()
    workspace = Workspace(py_repo, tmp_dir=tmp_path / "session-tmp")
    bwrap = shutil.which("bwrap")
    wrap = make_sandbox(workspace, SandboxSettings()).wrap if bwrap and probe_bwrap(bwrap) is None else None
    model = ReplayModel(write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Bash", command=f"mv docs d2 && ln -s {outside} docs && echo x >> calc.py")), turn("", answer="done")]))
    agent = Agent(model, ToolRunner(workspace, wrap=wrap), Approver(PolicyEngine.load(workspace, None), mode="all"), Quiet(),
                  before_action=checkpoints.before_action)
    assert agent.run("go").exit_reason == "agent"
    assert (py_repo / "docs").is_symlink()

    last = checkpoints.taken[-1]  # what undo goes back to (SessionCore.next_undo)
    result = checkpoints.rewind(last.step, last.action)
    assert not (py_repo / "docs").is_symlink() and (py_repo / "docs" / "guide.md").read_text() == "# guide\n"
    assert not (py_repo / "d2").exists()
    assert "docs/guide.md" in result.restored
    assert snapshot_tree(state.repo) == start
    assert (outside / "guide.md").read_text() == "outside, never touched\n"
