"""Run then undo (``vcs.in_place``, the last fallback): the command runs on the tree itself, what it
changed is moved into the proposal's upper layer from git's view and the tree put back. The cases
where git's view and a folder's shape part: a folder replaced by a link (out of the repository), a
file replaced by a folder, files git ignores (made: captured; changed: not put back, and said)."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.tools.landing import land, outcome
from tests.approval.test_proposals import Proposer, lines
from tests.overlay import needs_bwrap
from tests.support import git

pytestmark = needs_bwrap


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "d").mkdir(parents=True)
    (root / "src" / "d" / "keep.txt").write_text("keep\n")
    (root / "docs").mkdir()
    (root / "docs" / "b.md").write_text("# b\n")
    (root / ".gitignore").write_text(".venv/\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (root / ".venv" / "bin" / "activate").write_text("# activate\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


@pytest.fixture
def propose(tree: Path, tmp_path: Path) -> Proposer:
    return Proposer(tree, tmp_path, "undo")


def files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): ("-> " + str(p.readlink()) if p.is_symlink() else p.read_text() if p.is_file() else "/")
            for p in sorted(root.rglob("*")) if ".git" not in p.relative_to(root).parts}


def test_a_folder_replaced_by_a_link_out_is_read_back_and_the_tree_put_back(tree: Path, propose: Proposer) -> None:
    before = files(tree)
    proposal = propose("rm -r src/d && ln -s /etc src/d")
    assert not proposal.failed, proposal.failed
    assert lines(proposal) == ["deleted src/d/ (a folder with 1 file(s): keep.txt)", "added src/d -> /etc"]
    assert files(tree) == before
    assert land(proposal).ok and (tree / "src" / "d").readlink() == Path("/etc")


def test_a_file_replaced_by_a_folder_is_read_back_and_the_tree_put_back(tree: Path, propose: Proposer) -> None:
    before = files(tree)
    proposal = propose("rm docs/b.md && mkdir docs/b.md && echo x > docs/b.md/inner")
    assert not proposal.failed, proposal.failed
    assert lines(proposal) == ["modified docs/b.md/ (was a file)", "added docs/b.md/inner"]
    assert files(tree) == before
    assert land(proposal).ok and (tree / "docs" / "b.md" / "inner").read_text() == "x\n"


def test_ignored_files_made_are_captured_and_those_changed_are_named_as_not_put_back(tree: Path, propose: Proposer) -> None:
    proposal = propose("echo '#!/bin/sh' > .venv/bin/tool && chmod +x .venv/bin/tool && echo changed >> .venv/bin/activate")
    assert not (tree / ".venv" / "bin" / "tool").exists(), "made by the command: moved out, judged before it lands"
    (effect,) = proposal.effects
    assert effect.path == ".venv/bin/tool" and effect.runs_later
    assert proposal.not_undone == (".venv/bin/activate",)
    assert (tree / ".venv" / "bin" / "activate").read_text() == "# activate\nchanged\n", "git holds no copy: it stays"
    told = outcome(proposal, False, "rejected", None, by="person").observation
    assert told.startswith("Note: this command ran on the working tree itself") and ".venv/bin/activate" in told


def test_an_ignored_file_the_command_unignores_is_left_where_it_is(tree: Path, propose: Proposer) -> None:
    """Emptying ``.gitignore`` makes ``.venv``'s files new to git's view: they were there before,
    and git holds no copy of them, so they are never moved out (rejected, they would be lost);
    the ``.gitignore`` change is read back and put back as any file's."""
    proposal = propose("printf '' > .gitignore && echo more >> .venv/bin/activate")
    assert not proposal.failed, proposal.failed
    assert lines(proposal) == ["modified .gitignore"]
    assert (tree / ".gitignore").read_text() == ".venv/\n"
    assert (tree / ".venv" / "pyvenv.cfg").read_text() == "home = /usr\n"
    assert (tree / ".venv" / "bin" / "activate").read_text() == "# activate\nmore\n"
    assert proposal.not_undone == (".venv/bin/activate",)


def test_a_nested_repository_the_command_makes_is_read_back_with_its_git_folder(tree: Path, propose: Proposer) -> None:
    """git's view leaves a nested repository out, so its files would have stayed in the tree
    unjudged: its ``.git`` is moved out first, then its files are read back as any others, and
    the ``.git`` itself is an effect that runs later (asked about by name)."""
    before = files(tree)
    proposal = propose("git init -q src/x && echo '#!/bin/sh' > src/x/run.sh && echo y > src/x/f")
    assert not proposal.failed, proposal.failed
    assert files(tree) == before and not (tree / "src" / "x").exists()
    found = {effect.path: effect for effect in proposal.effects}
    assert {"src/x", "src/x/f", "src/x/run.sh"} <= set(found) and any(p.startswith("src/x/.git") for p in found)
    assert all(e.runs_later.startswith("in git's own folder") for p, e in found.items() if p.startswith("src/x/.git/") and e.after
               and e.after.kind != "dir")
