"""Run then undo (``vcs.in_place``, the last fallback): the command runs on the tree itself, what it
changed is moved into the proposal's upper layer from git's view and the tree put back. The cases
where git's view and a folder's shape part: a folder replaced by a link (out of the repository), a
file replaced by a folder, files git ignores (made: captured; changed: not put back, and said)."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.tools.landing import land, outcome
from frogtui.vcs.in_place import cannot_put_back
from frogtui.vcs.snapshot import open_repo
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
    assert lines(proposal) == ["modified src/d -> /etc (was a folder with 1 file(s): keep.txt)"]  # one effect for one path
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


@pytest.mark.parametrize("setting", ["* text=auto\n", "*.txt eol=crlf\n", "*.txt ident\n", "[attr]conv text\n*.txt conv\n",
                                     "core.autocrlf", "ignored"])
def test_a_repository_where_git_converts_file_contents_is_never_run_in_place(tree: Path, tmp_path: Path, setting: str) -> None:
    """Put back from git, a file whose content git converts (line endings, ``$Id$``) would not
    come back as the person's bytes: a CRLF file with their edit came back LF after a rejected
    ``sed -i``. The command does not run there, and the person is told why (their file untouched)."""
    if setting == "core.autocrlf":
        git(tree, "config", "core.autocrlf", "true")
    elif setting == "ignored":  # git reads a .gitattributes it ignores all the same
        (tree / ".gitattributes").write_text("* text=auto\n")
        (tree / ".gitignore").write_text(".venv/\n.gitattributes\n")
    else:
        (tree / ".gitattributes").write_text(setting)
    mine = b"line one\r\nmy edit\r\n"
    (tree / "notes.txt").write_bytes(mine)
    propose = Proposer(tree, tmp_path, "undo")
    with pytest.raises(OSError, match="cannot put every file back as it was here: git converts file contents") as raised:
        propose("printf 'x\\n' >> notes.txt")
    assert str(raised.value).endswith("; the command did not run (with [bash] proposals = false in your rules, such a command "
                                      "is asked about by its text before it runs)")
    assert (tree / "notes.txt").read_bytes() == mine


@pytest.mark.parametrize("setting", ["*.png binary\n*.py diff=python\n", "*.bin -text\n", "*.big filter=lfs diff=lfs merge=lfs -text\n"])
def test_attributes_that_convert_nothing_leave_run_then_undo_on(tree: Path, tmp_path: Path, setting: str) -> None:
    (tree / ".gitattributes").write_text(setting)
    mine = b"line one\r\nmy edit\r\n"
    (tree / "notes.txt").write_bytes(mine)
    proposal = Proposer(tree, tmp_path, "undo")("printf 'x\\n' >> notes.txt")
    assert not proposal.failed, proposal.failed
    assert lines(proposal) == ["modified notes.txt"] or lines(proposal) == ["added notes.txt"], lines(proposal)
    assert (tree / "notes.txt").read_bytes() == mine, "put back byte for byte"


@pytest.fixture
def with_submodule(tree: Path, tmp_path: Path) -> Path:
    """``tree`` with a submodule ``sub`` (its ``f`` committed there) and the person's uncommitted work in it."""
    source = tmp_path / "sub-source"
    source.mkdir()
    (source / "f").write_text("sub\n")
    git(source, "init", "-q")
    git(source, "add", "-A")
    git(source, "commit", "-qm", "sub")
    git(tree, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    git(tree, "commit", "-qm", "with sub")
    (tree / "sub" / "mine.txt").write_text("my work in the submodule\n")
    return tree


@pytest.mark.parametrize("command", ["rm -rf sub", "echo changed >> sub/f", "rm -rf sub && echo x > sub"])
def test_a_repository_with_a_submodule_is_never_run_in_place(with_submodule: Path, tmp_path: Path, command: str) -> None:
    """git's snapshot holds a submodule as its commit, not its files: a command run in place that
    removed ``sub`` left it empty when rejected (the person's uncommitted work in it lost), and
    one that edited ``sub/f`` left the edit in the tree, never judged. The command does not run."""
    tree = with_submodule
    before = {p: (tree / p).read_text() for p in ("sub/f", "sub/mine.txt")}
    propose = Proposer(tree, tmp_path, "undo")
    with pytest.raises(OSError, match="submodule sub"):
        propose(command)
    assert {p: (tree / p).read_text() for p in before} == before


def test_a_repository_holding_a_nested_repository_is_never_run_in_place(tree: Path, tmp_path: Path) -> None:
    """A nested repository (not a submodule) is left out of git's snapshot: ``rm -rf vendor/lib``
    run in place and rejected lost it, history and all, and nothing said so. The command does not
    run, and where one is there when the session starts, run then undo is not a way (off, said why)."""
    nested = tree / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "work.txt").write_text("mine\n")
    propose = Proposer(tree, tmp_path, "undo")
    with pytest.raises(OSError, match="the nested repository vendor/lib"):
        propose("rm -rf vendor/lib")
    assert (nested / "work.txt").read_text() == "mine\n" and (nested / ".git").is_dir()
    assert "the nested repository vendor/lib" in cannot_put_back(open_repo(tree))


@pytest.mark.parametrize("command", ["echo more >> src/key.txt", "rm src/key.txt", "sed -i s/k/K/ src/key.txt && chmod +x src/key.txt"])
def test_a_file_put_back_gets_the_mode_it_had(tree: Path, propose: Proposer, command: str) -> None:
    """Put back from git, a file the person keeps at 0600 came back 0644 (git's mode, the umask's):
    readable by every user of the machine after a rejected command."""
    key = tree / "src" / "key.txt"
    key.write_text("key\n")
    key.chmod(0o600)
    (tree / "src" / "d" / "keep.txt").chmod(0o640)
    proposal = propose(command + " && chmod 644 src/d/keep.txt && echo x >> src/d/keep.txt")
    assert not proposal.failed, proposal.failed
    assert key.read_text() == "key\n" and oct(key.stat().st_mode & 0o7777) == oct(0o600)
    assert oct((tree / "src" / "d" / "keep.txt").stat().st_mode & 0o7777) == oct(0o640)


def test_when_reading_back_fails_part_way_the_persons_files_are_put_back(tree: Path, propose: Proposer) -> None:
    """A path the command made that cannot be moved into the layer folder (its name too long
    there, where the tree's is not) failed the capture after the changed files were moved out and
    before any was put back: the person's own version of ``docs/b.md`` was gone from the tree (only
    the checkpoint held it). Put back first, whatever fails after."""
    (tree / "docs" / "b.md").write_text("# b\nmy edit\n")
    room = 4090 - len(str(tree)) - len("//f")  # under the tree it fits PATH_MAX (4096), under the layer folder it does not
    deep = "/".join(["d" * 200] * (room // 201) + ["e" * (room % 201 or 1)])
    proposal = propose(f"echo evil >> docs/b.md && rm src/d/keep.txt && mkdir -p {deep} && touch {deep}/f")
    assert proposal.failed and "could not be read back" in proposal.failed
    assert (tree / "docs" / "b.md").read_text() == "# b\nmy edit\n"
    assert (tree / "src" / "d" / "keep.txt").read_text() == "keep\n"


def test_a_repository_where_git_ignores_file_modes_is_never_run_in_place(tree: Path, tmp_path: Path) -> None:
    """``core.fileMode = false`` (repositories from Windows, some shared folders) makes git blind to
    ``chmod +x``: run in place, the executable bit stayed in the tree with no effect read (under
    ``--approve policy``: "it changed nothing"), never judged, never put back. The command does not run."""
    git(tree, "config", "core.fileMode", "false")
    with pytest.raises(OSError, match=r"core.fileMode = false"):
        Proposer(tree, tmp_path, "undo")("chmod +x docs/b.md")
    assert not (tree / "docs" / "b.md").stat().st_mode & 0o111
    assert "core.fileMode = false" in cannot_put_back(open_repo(tree))


def test_a_repository_where_git_ignores_case_is_never_run_in_place(tree: Path, tmp_path: Path) -> None:
    """``core.ignoreCase = true`` on a file system that tells case apart: git takes a new
    ``docs/B.md`` for the tracked ``docs/b.md``, so run in place it stayed in the tree, no effect
    read, never judged. The command does not run."""
    git(tree, "config", "core.ignoreCase", "true")
    with pytest.raises(OSError, match=r"core.ignoreCase = true"):
        Proposer(tree, tmp_path, "undo")("echo evil > docs/B.md")
    assert sorted(p.name for p in (tree / "docs").iterdir()) == ["b.md"]


def test_too_many_ignored_files_to_see_is_never_run_in_place(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``vcs.ignored.MAX_FILES`` the ignored files are not all fingerprinted: a program a
    command planted in such a ``.venv/bin`` was not seen, so it stayed in the tree, no effect
    read, never judged. The command does not run; and one that makes that many ignored files
    itself is failed once the rest is put back (what it made there is said to be in the tree)."""
    from frogtui.vcs import ignored

    monkeypatch.setattr(ignored, "MAX_FILES", 8)
    for n in range(8):
        (tree / ".venv" / f"lib{n}.py").write_text("")
    propose = Proposer(tree, tmp_path, "undo")
    with pytest.raises(OSError, match=r"more than 8 files and folders git ignores \(\.venv\)"):
        propose("echo '#!/bin/sh' > .venv/bin/tool && chmod +x .venv/bin/tool")
    assert not (tree / ".venv" / "bin" / "tool").exists()

    monkeypatch.setattr(ignored, "MAX_FILES", 30)
    proposal = propose("echo evil >> docs/b.md && mkdir .venv/many && for n in $(seq 40); do touch .venv/many/$n; done")
    assert "more than 30 files and folders git ignores" in proposal.failed, proposal.failed
    assert (tree / "docs" / "b.md").read_text() == "# b\n", "put back all the same"


def test_the_persons_staged_and_unsaved_work_is_put_back_in_a_repository_with_no_commit(tmp_path: Path) -> None:
    """What held, pinned: in a repository with no commit yet, a file staged in one version and
    changed again in the working tree, and an untracked file, come back as the person had them
    (the working tree's versions, not the index's), and the person's index is not touched."""
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("staged\n")
    git(root, "add", "a.txt")
    (root / "a.txt").write_text("working\n")
    (root / "u.txt").write_text("untracked\n")
    index = (root / ".git" / "index").read_bytes()
    proposal = Proposer(root, tmp_path, "undo")("echo evil > a.txt && rm u.txt && echo n > new.txt")
    assert not proposal.failed, proposal.failed
    assert lines(proposal) == ["modified a.txt", "added new.txt", "deleted u.txt"] or sorted(lines(proposal)) == sorted(
        ["modified a.txt", "added new.txt", "deleted u.txt"]), lines(proposal)
    assert (root / "a.txt").read_text() == "working\n" and (root / "u.txt").read_text() == "untracked\n"
    assert not (root / "new.txt").exists()
    assert (root / ".git" / "index").read_bytes() == index
