"""The kernel's word that nothing in the working tree changed (``vcs.watch``), which lets a
checkpoint of an unchanged tree skip ``git status``: every change a command could make counts,
reads do not, and whatever it cannot vouch for counts as a change. Real inotify, real git, real
bubblewrap where it works."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.vcs import snapshot as snapshots
from frogtui.vcs import watch
from frogtui.vcs.snapshot import open_repo, snapshot
from frogtui.vcs.watch import TreeWatch, mount_problem
from tests.vcs.cases import git
from tests.vcs.test_snapshot import CHANGES, fresh_snapshot, make_repo, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write(root / "src" / "a.py", "a = 1\n")
    write(root / "docs" / "deep" / "readme.md", "hello\n")
    return root


def quiet_after(watcher: TreeWatch) -> bool:
    """Whether the watch, drained once, then says nothing changed."""
    watcher.changed()
    return not watcher.changed()


def test_every_change_counts_and_reads_do_not(tree: Path) -> None:
    watcher = TreeWatch(tree)
    assert watcher.changed()  # the first look: nothing is vouched for yet
    assert not watcher.changed() and watcher.folders == 4
    (tree / "src" / "a.py").read_text()
    subprocess.run(["cat", str(tree / "src" / "a.py")], capture_output=True, check=True)
    subprocess.run(["ls", "-laR", str(tree)], capture_output=True, check=True)
    os.stat(tree / "docs" / "deep" / "readme.md")
    assert not watcher.changed(), "reading is not a change"
    changes = [
        lambda: write(tree / "src" / "a.py", "a = 2\n"),
        lambda: write(tree / "new.txt", "new\n"),
        lambda: (tree / "src" / "a.py").chmod(0o755),
        lambda: os.utime(tree / "new.txt", (1, 1)),
        lambda: (tree / "link").symlink_to("src/a.py"),
        lambda: (tree / "new.txt").unlink(),
        lambda: (tree / "docs" / "deep" / "readme.md").rename(tree / "docs" / "moved.md"),
        lambda: os.link(tree / "src" / "a.py", tree / "docs" / "hard.py"),
    ]
    for i, change in enumerate(changes):
        change()
        assert watcher.changed(), f"change {i} not seen"
        assert not watcher.changed()


def test_a_folder_made_moved_or_deleted_is_followed(tree: Path) -> None:
    watcher = TreeWatch(tree)
    watcher.changed()
    (tree / "x" / "y").mkdir(parents=True)
    assert watcher.changed()
    write(tree / "x" / "y" / "z.txt", "in a new folder\n")  # watched before changed() returned
    assert watcher.changed()
    (tree / "x").rename(tree / "moved")  # stale paths below: watched again from the top
    assert watcher.changed() and watcher.ok
    write(tree / "moved" / "y" / "later.txt", "in the moved folder\n")
    assert watcher.changed()
    shutil.rmtree(tree / "moved")
    assert watcher.changed() and quiet_after(watcher)
    shutil.copytree(tree / "docs", tree / "copied")  # a folder made with files already in it
    assert watcher.changed()
    write(tree / "copied" / "deep" / "again.md", "x\n")
    assert watcher.changed()


def test_the_repositorys_own_git_folder_is_left_out_a_nested_ones_is_not(tree: Path) -> None:
    git(tree, "init", "-q")
    git(tree, "add", ".")
    git(tree, "commit", "-q", "-m", "base")
    nested = tree / "vendor" / "lib"
    write(nested / "lib.py", "x = 1\n")
    git(nested, "init", "-q")
    git(nested, "add", ".")
    git(nested, "commit", "-q", "-m", "lib")
    watcher = TreeWatch(tree)
    watcher.changed()
    git(tree, "status")
    git(tree, "commit", "-q", "--allow-empty", "-m", "another")
    assert not watcher.changed(), "the repository's own .git is not the working tree"
    git(nested, "commit", "-q", "--allow-empty", "-m", "moved HEAD")  # a nested repository's HEAD moved: its gitlink would
    assert watcher.changed()


def test_a_mapped_file_written_by_a_process_counts_once_the_process_ends(tree: Path) -> None:
    """Writes through a memory mapping are not reported; the mapping's release is."""
    watcher = TreeWatch(tree)
    watcher.changed()
    code = (
        "import mmap, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\nm = mmap.mmap(fd, 0)\nos.close(fd)\n"
        "m[0:1] = b'b'\nm.flush()\n"
    )
    subprocess.run([sys.executable, "-c", code, str(tree / "src" / "a.py")], check=True)
    assert (tree / "src" / "a.py").read_text() == "b = 1\n"
    assert watcher.changed()


def test_what_it_cannot_vouch_for_counts_as_changed(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "MAX_FOLDERS", 2)
    big = TreeWatch(tree)
    assert big.changed() and big.changed() and big.changed()
    assert big.given_up == "more than 2 folders" and big.folders == 0
    monkeypatch.setattr(watch, "_libc", lambda: None)
    blind = TreeWatch(tree)
    assert blind.changed() and blind.changed() and blind.given_up == "no inotify"
    monkeypatch.undo()
    (tree / "locked").mkdir()
    (tree / "locked" / "inner").mkdir()
    (tree / "locked").chmod(0)
    try:
        if os.access(tree / "locked", os.R_OK):  # root reads it anyway
            pytest.skip("running as root: every folder can be read")
        unreadable = TreeWatch(tree)
        assert unreadable.changed() and unreadable.changed() and "locked" in (unreadable.given_up or "")
    finally:
        (tree / "locked").chmod(0o755)


def test_an_overflowing_queue_counts_and_the_tree_is_watched_again(tree: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    watcher = TreeWatch(tree)
    watcher.changed()
    first, second = tree / "src" / "a.py", tree / "docs" / "deep" / "readme.md"
    for i in range(limit // 2 + 10):  # two files in turn: the kernel merges only repeats of one event
        os.utime(first, (i, i))
        os.utime(second, (i, i))
    assert watcher.changed() and watcher.ok
    assert not watcher.changed()
    write(tree / "src" / "after.py", "x\n")
    assert watcher.changed()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def snapshot_tree(handle, watched: bool = True) -> str:  # type: ignore[no-untyped-def]
    """The snapshot a sandboxed session's checkpoint takes (the watch trusted)."""
    return snapshot(handle, watched=watched).tree


def git_runs(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    runs: list[object] = []
    execute = snapshots.git.Git.execute

    def counted(self, command, *args, **kwargs):
        runs.append(command)
        return execute(self, command, *args, **kwargs)

    monkeypatch.setattr(snapshots.git.Git, "execute", counted)
    return runs


def test_an_unchanged_snapshot_runs_no_git_and_each_change_is_still_seen(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    handle = open_repo(repo)
    assert handle is not None
    first = snapshot_tree(handle)
    runs = git_runs(monkeypatch)
    assert snapshot_tree(handle) == first and runs == []
    for name, change in CHANGES:  # test_snapshot's: every change a command could make
        change(repo)
        expected = fresh_snapshot(repo)
        assert snapshot_tree(handle) == expected, name
        for _ in range(3):  # on a busy machine a change's last events may come after the first look: one more git
            seen = len(runs)
            assert snapshot_tree(handle) == expected, name
            if len(runs) == seen:
                break
        seen = len(runs)
        assert snapshot_tree(handle) == expected, name  # unchanged since: from the watch
        assert len(runs) == seen, f"{name}: git ran for an unchanged tree"


def test_a_sandboxed_commands_writes_are_seen(repo: Path, tmp_path: Path) -> None:
    from frogtui.approval import load_rules, make_sandbox
    from frogtui.tools import Workspace
    from frogtui.tools.bash import shell_argv

    (tmp_path / "t").mkdir()
    sandbox = make_sandbox(Workspace(repo, tmp_dir=tmp_path / "t"), load_rules(repo).sandbox)
    if sandbox.wrap is None:
        pytest.skip(f"no sandbox here: {sandbox.warning}")
    handle = open_repo(repo)
    assert handle is not None
    before = snapshot_tree(handle)
    assert snapshot_tree(handle) == before
    command = "echo more >> src/a.py && mkdir -p new/deep && echo x > new/deep/f.txt && chmod +x data.txt"
    subprocess.run(sandbox.wrap(shell_argv(command)), cwd=repo, check=True, capture_output=True)
    after = snapshot_tree(handle)
    assert after != before and after == fresh_snapshot(repo)
    subprocess.run(sandbox.wrap(shell_argv("echo again > new/deep/f.txt")), cwd=repo, check=True, capture_output=True)
    assert snapshot_tree(handle) == fresh_snapshot(repo) != after


def test_a_repository_with_submodules_always_asks_git(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A submodule's HEAD lives in .git/modules, which is not watched."""
    upstream = tmp_path / "upstream"
    write(upstream / "lib.py", "x = 1\n")
    git(upstream, "init", "-q")
    git(upstream, "add", ".")
    git(upstream, "commit", "-q", "-m", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "lib")
    git(repo, "commit", "-q", "-m", "submodule")
    handle = open_repo(repo)
    assert handle is not None
    snapshot_tree(handle)
    runs = git_runs(monkeypatch)
    git(repo / "lib", "commit", "-q", "--allow-empty", "-m", "moved")  # only .git/modules/lib changes
    assert snapshot_tree(handle) == fresh_snapshot(repo)
    assert runs, "git was not asked"


def test_only_the_last_repositories_are_watched(tmp_path: Path) -> None:
    roots = []
    for i in range(snapshots.MAX_WATCHED + 2):
        root = tmp_path / f"r{i}"
        write(root / "f.txt", f"{i}\n")
        git(root, "init", "-q")
        roots.append(root)
    handles = [open_repo(root) for root in roots]
    for handle in handles:
        snapshot_tree(handle)  # type: ignore[arg-type]
    watched = [p for p in snapshots._indexes.values() if p.watch is not None]
    assert len(watched) <= snapshots.MAX_WATCHED
    write(roots[0] / "f.txt", "changed\n")  # the first one's watch was closed: git says
    assert snapshot_tree(handles[0]) == fresh_snapshot(roots[0])  # type: ignore[arg-type]


def test_repointing_the_excludes_file_is_seen(repo: Path, tmp_path: Path) -> None:
    """Found in review: the excludes file's path was read once; git's settings naming another
    changed nothing in the tree, so the watch vouched for a tree that had a file un-ignored."""
    (tmp_path / "ignore-tmp").write_text("*.tmp\n")
    (tmp_path / "ignore-none").write_text("")
    git(repo, "config", "core.excludesFile", str(tmp_path / "ignore-tmp"))
    write(repo / "secret.tmp", "x\n")
    handle = open_repo(repo)
    assert handle is not None
    assert snapshot_tree(handle) == snapshot_tree(handle) == fresh_snapshot(repo)
    git(repo, "config", "core.excludesFile", str(tmp_path / "ignore-none"))
    assert snapshot_tree(handle) == fresh_snapshot(repo)
    git(repo, "config", "core.excludesFile", str(tmp_path / "ignore-tmp"))
    assert snapshot_tree(handle) == fresh_snapshot(repo)


def test_a_snapshot_that_fails_midway_leaves_the_next_one_exact(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review: the watch's events were read, then an error other than git's (no temp
    folder, a full disk) left the old tree to be taken as the next snapshot."""
    import tempfile

    handle = open_repo(repo)
    assert handle is not None
    snapshot_tree(handle)
    write(repo / "data.txt", "changed\n")
    monkeypatch.setattr(tempfile, "tempdir", str(repo / "no such folder"))
    with pytest.raises(FileNotFoundError):
        snapshot_tree(handle)
    monkeypatch.undo()
    assert snapshot_tree(handle) == fresh_snapshot(repo)
    assert snapshot_tree(handle) == fresh_snapshot(repo)


def test_what_the_kernel_cannot_see_is_left_to_git_outside_the_sandbox(repo: Path, tmp_path: Path) -> None:
    """Found in review: a write through a hard link from outside the tree, or through a mapping
    still open, sends no event. A session whose commands are not sandboxed takes every checkpoint
    from git (``watched=False``, the default)."""
    import mmap

    handle = open_repo(repo)
    assert handle is not None
    snapshot_tree(handle, watched=False)
    os.link(repo / "data.txt", tmp_path / "outside")
    with open(tmp_path / "outside", "a") as outside:
        outside.write("through the link\n")
    assert snapshot_tree(handle, watched=False) == fresh_snapshot(repo)
    fd = os.open(repo / "src" / "a.py", os.O_RDWR)
    mapping = mmap.mmap(fd, 0)
    try:
        mapping[0:1] = b"b"
        mapping.flush()
        assert snapshot_tree(handle, watched=False) == fresh_snapshot(repo)
    finally:
        mapping.close()
        os.close(fd)


def test_a_tree_with_a_mount_inside_or_on_a_network_file_system_is_not_watched(tree: Path) -> None:
    table = (b"27 1 254:0 / / rw - ext4 /dev/vda rw\n"
             b"40 27 0:50 / /srv/nfs rw - nfs4 host:/export rw\n"
             b"41 27 0:51 / /home/me/repo/build\\040dir rw - tmpfs tmpfs rw\n")
    assert mount_problem(b"/home/me/other", table) is None
    assert mount_problem(b"/srv/nfs/repo", table) == "on a nfs4 file system (changes made elsewhere are not reported)"
    assert mount_problem(b"/home/me/repo", table) == "a file system is mounted inside the tree, at /home/me/repo/build dir"
    if os.geteuid() != 0:
        pytest.skip("mounting needs root")
    watcher = TreeWatch(tree)
    assert watcher.changed() and not watcher.changed()
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(tree / "src")], check=True)
    try:
        assert watcher.changed() and watcher.changed() and "mounted inside the tree" in (watcher.blocked or "")
    finally:
        subprocess.run(["umount", str(tree / "src")], check=True)
    assert watcher.changed() and not watcher.changed() and watcher.blocked is None


@pytest.mark.parametrize("bash", ["bwrap", "none"])
def test_only_a_sandboxed_sessions_checkpoints_trust_the_watch(py_repo: Path, tmp_path: Path, bash: str) -> None:
    from frogtui.config import Config
    from frogtui.session.core import SessionCore

    rules = tmp_path / "rules.toml"
    rules.write_text(f'[sandbox]\nbash = "{bash}"\n')
    core = SessionCore(Config(repo=py_repo, model_spec="replay:none.jsonl", rules_file=rules))
    core.prepare()
    assert core.checkpoints is not None
    if bash == "bwrap" and not core.sandboxed:
        pytest.skip(f"no sandbox here: {core.sandbox.warning if core.sandbox else ''}")
    assert core.checkpoints.watched is (bash == "bwrap")
