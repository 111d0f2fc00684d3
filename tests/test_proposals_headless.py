"""Proposals end to end, headless (``frogtui run`` through ``cli.main``, a replay model, a real git
repository, real bubblewrap on a real overlay): a command the rules would ask about runs on a
copy-on-write view, and what it did lands only as the path rules allow (issue 31's done-when).
Each runs on every way a proposal can run (``tests.overlay.WAYS``: the kernel's overlay,
fuse-overlayfs, and the command run on the tree then undone), forced by ``[bash] proposals``."""
from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frogtui.cli import main
from frogtui.config import config_dir
from tests.overlay import WAYS, needs_bwrap, needs_fuse, needs_overlay
from tests.support import git, running, turn, write_replay, xml_call

SRC_ALLOWED = '[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "src" / "d" / "sub").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "src" / "a.py").write_text("x = 1\n")
    (repo / "src" / "c.py").write_text("y = 1\n")
    (repo / "src" / "d" / "old.py").write_text("old\n")
    (repo / "src" / "d" / "sub" / "deep.txt").write_text("deep\n")
    (repo / "src" / "tool.sh").write_text("echo tool\n")
    (repo / "src" / "move_me.txt").write_text("moving\n")
    (repo / "docs" / "b.md").write_text("# b\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    return repo


def run(repo: Path, commands: list[str], mode: str = "policy", way: str = "overlay") -> dict:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(f'[bash]\nproposals = "{way}"\n{SRC_ALLOWED}')
    turns = [turn(f"step {n}", xml_call("Bash", command=command)) for n, command in enumerate(commands)] + [turn("done", answer="done")]
    replay = write_replay(repo.parent / "replay.jsonl", turns)
    trajectory = repo.parent / "trajectory.json"
    code = main(["run", "go", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", mode, "--trajectory", str(trajectory)])
    assert code == 0
    logs = sorted((Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions").glob("*/session.log"), key=os.path.getmtime)
    assert f"proposals: {WAY_LINES[way]}" in logs[-1].read_text(), "the way asked for ran"
    return json.loads(trajectory.read_text())


WAY_LINES = {"overlay": "on, kernel overlay", "fuse": "on, fuse-overlayfs", "undo": "WARNING on, run then undo from the checkpoint"}


def observations(trajectory: dict) -> list[str]:
    return [o["observation"] for step in trajectory["steps"] for o in step["observations"]]


def approvals(trajectory: dict) -> list[dict]:
    return [a for step in trajectory["steps"] for a in step["approvals"]]


def snapshot(root: Path) -> dict[str, tuple[str, int, bytes | str | None]]:
    """Every entry of a tree but .git: its kind, mode and content (a link's target)."""
    found: dict[str, tuple[str, int, bytes | str | None]] = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (top == str(root) and d == ".git")]
        for name in [*dirs, *files]:
            path = os.path.join(top, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", 0, os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", stat.S_IMODE(st.st_mode), None)
            else:
                found[rel] = ("file", stat.S_IMODE(st.st_mode), Path(path).read_bytes())
    return found


@pytest.mark.parametrize("way", WAYS)
def test_allowed_effects_land_a_denied_one_stops_the_whole_command(repo: Path, way: str) -> None:
    """``sed -i`` on src/a.py lands (the Write rule allows src/**); ``rm docs/b.md`` does not (a
    Write there is asked about, and the run is headless), and the model is told docs/b.md; a
    command with both effects lands neither."""
    trajectory = run(repo, [
        "sed -i 's/1/2/' src/a.py",
        "rm docs/b.md",
        "sed -i 's/1/3/' src/c.py && rm docs/b.md",
    ], way=way)
    assert (repo / "src" / "a.py").read_text() == "x = 2\n"
    assert (repo / "docs" / "b.md").read_text() == "# b\n"
    assert (repo / "src" / "c.py").read_text() == "y = 1\n", "one effect was not allowed: none lands"
    first, second, third = approvals(trajectory)
    assert (first["decision"], first["by"], first["rule"]) == ("allow", "rule", "Write: src/**")
    assert first["reason"].startswith("ran as a proposal")
    assert (second["decision"], second["by"]) == ("deny", "mode")
    assert (third["decision"], third["by"]) == ("deny", "mode")
    seen = observations(trajectory)
    assert seen[0].startswith("Exit code: 0")
    where = "on the working tree, and its changes were taken back until approved" if way == "undo" else "on a copy of the repository"
    assert seen[1].startswith(f"PermissionError: this command ran as a proposal, {where}, and none of its changes"), seen[1]
    assert "docs/b.md" in seen[1] and "Write: ask (default)" in seen[1]
    assert "deleted docs/b.md: needs a person" in seen[2] and "modified src/c.py: allowed (Write: src/**)" in seen[2]
    assert git(repo, "status", "--porcelain") == " M src/a.py\n"
    assert "+x = 2" in trajectory["output_patch"] and "docs/b.md" not in trajectory["output_patch"], "a landing is a step of the run"


@pytest.mark.parametrize("way", WAYS)
def test_what_lands_is_what_the_command_run_directly_leaves(repo: Path, tmp_path: Path, way: str) -> None:
    """An opaque folder (``rm -r d; mkdir d``), a rename, a mode change and a new link land
    exactly as the same commands run directly on a copy leave the tree."""
    commands = [
        "rm -r src/d && mkdir src/d && touch src/d/new",
        "mv src/move_me.txt src/moved.txt",
        "chmod +x src/tool.sh",
        "ln -s a.py src/link.py",
        "mkdir -p src/e/f && printf 'x\\0y' > src/e/f/bin.dat && chmod 700 src/e",
    ]
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    for command in commands:
        subprocess.run(["bash", "-c", command], cwd=copy, check=True)
    trajectory = run(repo, commands, way=way)
    assert [a["decision"] for a in approvals(trajectory)] == ["allow"] * len(commands)
    assert all(a["reason"].startswith("ran as a proposal") for a in approvals(trajectory))
    assert snapshot(repo) == snapshot(copy)


@pytest.mark.parametrize("way", WAYS)
def test_a_proposal_has_no_capabilities_and_no_network(repo: Path, way: str) -> None:
    trajectory = run(repo, ["grep CapEff /proc/self/status; echo devices: $(tail -n +3 /proc/net/dev | cut -d: -f1); touch src/cap"],
                     way=way)
    (seen,) = observations(trajectory)
    assert seen.startswith("Exit code: 0\nSTDOUT:\nCapEff:"), "nothing of the view's own (fuse-overlayfs's notes) in the output"
    assert "CapEff:\t0000000000000000" in seen
    assert "devices: lo\n" in seen, "a network namespace of its own: the loopback device only"
    assert (repo / "src" / "cap").exists()


def mounts() -> list[str]:
    return sorted(Path("/proc/self/mountinfo").read_text().splitlines())


@pytest.mark.parametrize("way", [pytest.param("overlay", marks=needs_overlay), pytest.param("fuse", marks=needs_fuse)])
def test_kill_9_during_a_proposal_leaves_the_tree_and_the_mount_table(repo: Path, tmp_path: Path, way: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(f'[bash]\nproposals = "{way}"\n')
    marker = f"31.4159{len(way)}"
    replay = write_replay(tmp_path / "r.jsonl", [turn("x", xml_call("Bash", command=f"rm docs/b.md; touch src/new; sleep {marker}")),
                                                turn("done", answer="done")])
    before_mounts, before_tree = mounts(), snapshot(repo)
    proc = subprocess.Popen([sys.executable, "-m", "frogtui", "run", "go", "--repo", str(repo), "--model", f"replay:{replay}",
                             "--approve", "policy"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
    sessions = Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions"
    deadline = time.monotonic() + 30
    while not list(sessions.glob("*/proposals/*/upper/src/new")):
        assert time.monotonic() < deadline and proc.poll() is None, "the proposal never ran"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while running(marker):
        assert time.monotonic() < deadline, "a process of the proposal outlived frogtui"
        time.sleep(0.02)
    assert mounts() == before_mounts
    deadline = time.monotonic() + 5
    while running(str(sessions)):
        assert time.monotonic() < deadline, "a process of the view (fuse-overlayfs) outlived frogtui"
        time.sleep(0.02)
    assert snapshot(repo) == before_tree
    assert git(repo, "status", "--porcelain") == ""


@needs_bwrap
def test_kill_9_during_a_proposal_run_in_place_leaves_its_checkpoint(repo: Path, tmp_path: Path) -> None:
    """Run then undo: the command runs on the tree itself, so ``kill -9`` mid-command leaves what it
    did so far in the tree; the step's checkpoint, taken before it ran, holds the tree before it
    (undo goes back to it), and nothing of the command outlives frogtui."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[bash]\nproposals = "undo"\n')
    marker = "31.41593"
    replay = write_replay(tmp_path / "r.jsonl", [turn("x", xml_call("Bash", command=f"rm docs/b.md; touch src/new; sleep {marker}")),
                                                turn("done", answer="done")])
    start_tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    proc = subprocess.Popen([sys.executable, "-m", "frogtui", "run", "go", "--repo", str(repo), "--model", f"replay:{replay}",
                             "--approve", "policy"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ.copy())
    deadline = time.monotonic() + 30
    while not (repo / "src" / "new").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the command never ran"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while running(marker):
        assert time.monotonic() < deadline, "a process of the command outlived frogtui"
        time.sleep(0.02)
    assert not (repo / "docs" / "b.md").exists(), "it ran on the tree: what it did so far is there"
    (session,) = (Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions").iterdir()
    from frogtui.vcs.verify import recorded_under

    checkpoints = recorded_under(f"refs/frogtui/{session.name}")
    assert checkpoints.get(f"refs/frogtui/{session.name}/1") == start_tree, checkpoints
    # the next frogtui in this repository says so, once (it said nothing: the command's changes sat
    # in the tree as if the person had made them)
    again = write_replay(tmp_path / "again.jsonl", [turn("done", answer="done")])
    told = [subprocess.run([sys.executable, "-m", "frogtui", "run", "go", "--repo", str(repo), "--model", f"replay:{again}"],
                           capture_output=True, text=True, env=os.environ.copy(), check=False) for _ in range(2)]
    assert told[0].returncode == 0, told[0].stderr
    line = f"session {session.name} was stopped while a command ran on the working tree (run then undo), before its changes were put back"
    assert line in told[0].stderr and "rm docs/b.md; touch src/new" in told[0].stderr, told[0].stderr
    assert f"refs/frogtui/{session.name}/1" in told[0].stderr, told[0].stderr
    assert line not in told[1].stderr, "said once"


def test_a_proposal_past_the_entry_cap_lands_nothing_and_the_model_is_told_why(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the upper layer's entry cap at 1 (500,000 in use), a command's effects are not all
    read: none lands, though the rules allow every one, and the model is told why."""
    from frogtui.tools.proposals import ProposalRunner

    monkeypatch.setattr(ProposalRunner, "max_entries", 1)
    trajectory = run(repo, ["sed -i 's/1/2/' src/a.py && touch src/new.py"])
    assert (repo / "src" / "a.py").read_text() == "x = 1\n" and not (repo / "src" / "new.py").exists()
    (approval,) = approvals(trajectory)
    assert (approval["decision"], approval["rule"]) == ("deny", "too large to review")
    (seen,) = observations(trajectory)
    assert seen.startswith("PermissionError: this command ran as a proposal, on a copy of the repository, and none of its changes")
    assert "more than 1 files and folders changed, more than frogtui reads to review" in seen
    assert git(repo, "status", "--porcelain") == ""


@needs_bwrap
def test_run_then_undo_is_off_where_git_converts_file_contents_and_the_file_is_untouched(repo: Path) -> None:
    """Put back from git, a CRLF file under ``* text=auto`` came back LF after a rejected command:
    there, run then undo is not a way, the session's line says why, and the command is asked
    about by its text (``--approve policy``: not run), the person's bytes as they were."""
    (repo / ".gitattributes").write_text("* text=auto\n")
    mine = b"x = 1\r\n# my edit\r\n"
    (repo / "src" / "a.py").write_bytes(mine)
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(f'[bash]\nproposals = "undo"\n{SRC_ALLOWED}')
    replay = write_replay(repo.parent / "replay.jsonl", [turn("go", xml_call("Bash", command="sed -i 's/1/2/' src/a.py")),
                                                         turn("done", answer="done")])
    assert main(["run", "go", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", "policy"]) == 0
    logs = sorted((Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions").glob("*/session.log"), key=os.path.getmtime)
    line = next(line for line in logs[-1].read_text().splitlines() if "proposals: " in line)
    assert "proposals: WARNING off (run then undo cannot put every file back as it was here: git converts file contents: " in line
    assert "has the attribute text=auto" in line
    assert (repo / "src" / "a.py").read_bytes() == mine


@needs_bwrap
def test_where_git_can_no_longer_put_files_back_a_command_is_asked_about_by_its_text(repo: Path) -> None:
    """A ``.gitattributes`` that converts, made during the session, turns run then undo off for the
    commands after it: each is asked about by its text as where proposals are off (under
    ``--approve policy``, the rules' ask: not run), not failed with an ``OSError`` (which the
    person was never asked about, and which a model could only retry)."""
    mine = b"x = 1\r\n# my edit\r\n"
    (repo / "src" / "a.py").write_bytes(mine)
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(f'[bash]\nproposals = "undo"\n{SRC_ALLOWED}'
                                             '[[rules]]\ntool = "Write"\nmatch = ".gitattributes"\ndecision = "allow"\n')
    turns = [turn("step 0", xml_call("Write", file_path=".gitattributes", content="* text=auto\n")),
             turn("step 1", xml_call("Bash", command="sed -i 's/1/2/' src/a.py")), turn("done", answer="done")]
    replay = write_replay(repo.parent / "replay.jsonl", turns)
    trajectory = repo.parent / "trajectory.json"
    argv = ["run", "go", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", "policy", "--trajectory", str(trajectory)]
    assert main(argv) == 0
    said = observations(json.loads(trajectory.read_text()))
    assert (repo / ".gitattributes").read_text() == "* text=auto\n", said
    assert not said[1].startswith("OSError") and "PermissionError" in said[1], said[1]
    assert (repo / "src" / "a.py").read_bytes() == mine
