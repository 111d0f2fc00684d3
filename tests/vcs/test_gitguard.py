"""frogtui's own git never runs repository-controlled code and never wanders (issue 9, findings 1
and 4): hooks planted in an in-tree hooks path or through a planted ``commondir`` do not run at a
checkpoint, a vanished ``.git`` stops with one line instead of writing to a parent repository, and
the person's own commit from review still runs their hooks. Real git, no sandbox (the case of
``bash = "none"``)."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.gitguard import RepositoryChanged, control_files_changed
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession
from tests.vcs.cases import git

BASH = ToolCall(id="c1", name="Bash", arguments={"command": "…"})
HOOKS = ("post-index-change", "reference-transaction", "pre-commit", "post-checkout", "fsmonitor-watchman")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "outer" / "repo"
    root.mkdir(parents=True)
    (root / "f.txt").write_text("a\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    return root


def plant_hooks(folder: Path, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        (folder / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        (folder / name).chmod(0o755)


def test_in_tree_hooks_path_does_not_run_at_a_checkpoint(repo: Path, tmp_path: Path) -> None:
    """husky's layout: core.hooksPath = .husky/_ — a Write there must not run at the next checkpoint."""
    git(repo, "config", "core.hooksPath", ".husky/_")
    git(repo, "config", "core.fsmonitor", str(repo / ".husky" / "_" / "fsmonitor-watchman"))
    marker = tmp_path / "ran.txt"
    state = discover(repo, "husky")
    plant_hooks(repo / ".husky" / "_", marker)  # what a sandboxed Write can do
    checkpoints = Checkpoints(state)
    checkpoints.before_action(1, BASH)
    (repo / "f.txt").write_text("b\n")
    checkpoints.rewind(1)
    assert not marker.exists(), marker.read_text()


def test_planted_commondir_stops_the_session_and_runs_nothing(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "evil"
    shutil.copytree(repo / ".git", evil)
    (evil / "config").write_text(f"[core]\n\trepositoryformatversion = 0\n\thooksPath = {evil / 'hooks'}\n")
    plant_hooks(evil / "hooks", marker)
    state = discover(repo, "planted")
    (repo / ".git" / "commondir").write_text(str(evil) + "\n")
    with pytest.raises(RepositoryChanged, match="commondir changed during the session"):
        Checkpoints(state).before_action(1, BASH)
    assert not marker.exists()


def test_vanished_git_never_finds_the_parent_repository(repo: Path) -> None:
    outer = repo.parent
    git(outer, "init", "-q")
    state = discover(repo, "vanish")
    shutil.rmtree(repo / ".git")  # pytest --basetemp=.git, without the sandbox
    with pytest.raises(RepositoryChanged) as caught:
        Checkpoints(state).before_action(1, BASH)
    assert "\n" not in str(caught.value) and "vanished" in str(caught.value)
    assert git(outer, "for-each-ref") == ""


def test_the_persons_commit_still_runs_their_hooks(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    plant_hooks(repo / ".git" / "hooks", marker)
    state = discover(repo, "mine")
    (repo / "f.txt").write_text("b\n")
    review = ReviewSession(state)
    review.commit(review.load(), "Change f")
    assert "pre-commit" in marker.read_text()


def test_git_controlling_files_are_named() -> None:
    paths = ["src/a.py", ".gitattributes", "sub/.gitattributes", ".husky/pre-commit", ".pre-commit-config.yaml", "hooks/x", ".gitmodules"]
    assert control_files_changed(paths, hooks_path="hooks") == paths[1:]


def test_the_persons_hooks_see_a_plain_git_environment(repo: Path, tmp_path: Path) -> None:
    """Their hooks' own git calls must not inherit frogtui's pinned GIT_DIR or hardening."""
    marker = tmp_path / "env.txt"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nenv | grep -E '^GIT_(DIR|WORK_TREE|CONFIG_COUNT|CEILING)' > {marker}; true\n")
    hook.chmod(0o755)
    state = discover(repo, "env")
    (repo / "f.txt").write_text("c\n")
    review = ReviewSession(state)
    review.commit(review.load(), "Change f")
    assert marker.read_text() == ""


def test_the_trajectory_patch_runs_no_textconv(repo: Path, tmp_path: Path) -> None:
    from frogtui.vcs.repository import session_patch

    marker = tmp_path / "textconv-ran"
    git(repo, "config", "diff.shown.textconv", f"sh -c 'touch {marker}; cat \"$0\"'")
    (repo / ".gitattributes").write_text("*.txt diff=shown\n")
    state = discover(repo, "textconv")
    (repo / "f.txt").write_text("b\n")
    assert "+b" in session_patch(state)() and not marker.exists()


@pytest.mark.parametrize("hooks_path", [".husky", "ABSOLUTE"])
def test_an_automatic_commit_never_runs_a_hook_the_run_wrote(repo: Path, tmp_path: Path, hooks_path: str) -> None:
    """Red team (rt9): ``frogtui run --approve all --commit`` with an in-tree hooks path (husky):
    the model rewrote ``.husky/pre-commit`` (a Write; the floor guards only ``.git/hooks``) and the
    automatic commit ran it outside the sandbox, with no person to review it. Now the commit is not
    made and one line says why; the changes stay for the person."""
    from frogtui.vcs.review import commit_run

    marker = tmp_path / "HOOK_RAN"
    (repo / ".husky").mkdir()
    (repo / ".husky" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (repo / ".husky" / "pre-commit").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "husky")
    git(repo, "config", "core.hooksPath", str(repo / ".husky") if hooks_path == "ABSOLUTE" else hooks_path)
    state = discover(repo, "auto")
    (repo / ".husky" / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (repo / "f.txt").write_text("b\n")
    out = io.StringIO()
    assert commit_run(state, None, exit_reason="agent", trailer="", out=out) is False
    assert not marker.exists()
    assert ".husky/pre-commit" in out.getvalue() and out.getvalue().count("\n") == 1, out.getvalue()
    assert git(repo, "log", "-1", "--format=%s").strip() == "husky" and (repo / "f.txt").read_text() == "b\n"
