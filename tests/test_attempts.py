"""``frogtui run TASK --attempts N`` end to end: real git repositories, real bubblewrap where the
sandbox matters, replay models (a shared replay model plays attempt 1's turns, then attempt 2's)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from frogtui.config import sessions_dir
from tests.approval.test_sandbox import needs_bwrap
from tests.support import git, turn, write_replay, xml_call

CHECK = "python -m pytest -q"


def frogtui(*args: str, timeout: int = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "frogtui", *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def fix_turns(first: str, second: str) -> list[str]:
    """Attempt 1 changes add() to ``first``, attempt 2 to ``second``; attempt 2 also writes NOTE.txt."""
    return [
        turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string=first)), turn("", answer="attempt one done"),
        turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string=second),
             xml_call("Write", file_path="NOTE.txt", content="from attempt two\n")),
        turn("", answer="attempt two done"),
    ]


def person_state(repo: Path) -> dict[str, str]:
    """What the person sees: status, diff, staged diff and every file's hash outside .git."""
    state = {"status": git(repo, "status", "--porcelain"), "diff": git(repo, "diff"), "cached": git(repo, "diff", "--cached")}
    for path in sorted(repo.rglob("*")):
        if ".git" not in path.relative_to(repo).parts and path.is_file():
            state[str(path.relative_to(repo))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def parent_record() -> tuple[Path, dict]:
    """The parent session folder (the one with attempts.json) and its record."""
    (record,) = list(sessions_dir().glob("*/attempts.json"))
    return record.parent, json.loads(record.read_text())


@pytest.fixture
def person_repo(py_repo: Path) -> Path:
    """py_repo with the person's own work: an uncommitted untracked file and a staged change."""
    (py_repo / "notes.txt").write_text("my own work\n")
    (py_repo / "README").write_text("staged\n")
    git(py_repo, "add", "README")
    return py_repo


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
def test_pick_best_applies_the_passing_attempt_and_the_tree_held_nothing_before(person_repo: Path, tmp_path: Path) -> None:
    # the check runs outside a sandbox here ([sandbox] bash = "none") so it can look at the person's
    # working tree at the moment it runs: it fails if anything of either attempt is there
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "rules.toml"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text('[sandbox]\nbash = "none"\n')
    original = tmp_path / "calc.orig"
    shutil.copy(person_repo / "calc.py", original)
    check = f"cmp {person_repo}/calc.py {original} && test ! -e {person_repo}/NOTE.txt && {CHECK}"
    replay = write_replay(tmp_path / "r.jsonl", fix_turns("a * b", "a + b"))
    index_before = (person_repo / ".git" / "index").read_bytes()
    proc = frogtui("run", "fix add", "--repo", str(person_repo), "--model", f"replay:{replay}", "--approve", "all",
                   "--attempts", "2", "--check", check, "--pick", "best")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "attempt two done\n"
    assert "[attempt 1] check failed" in proc.stderr and "[attempt 2] check passed" in proc.stderr
    assert "applied attempt 2 to the working tree" in proc.stderr
    assert (person_repo / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (person_repo / "NOTE.txt").read_text() == "from attempt two\n"
    assert (person_repo / ".git" / "index").read_bytes() == index_before, "the person's index is never written"
    assert git(person_repo, "status", "--porcelain") == "A  README\n M calc.py\n?? NOTE.txt\n?? notes.txt\n"
    assert git(person_repo, "worktree", "list", "--porcelain").count("worktree ") == 1, "the attempts' worktrees are removed"
    folder, record = parent_record()
    assert record["picked"] == 2 and [r["passed"] for r in record["results"]] == [False, True]
    assert record["results"][1]["files"] == 2 and record["results"][1]["added"] == 2
    for result in record["results"]:  # one Leaf trajectory per attempt, in its own session folder
        data = json.loads((sessions_dir() / result["session"] / "trajectory.json").read_text())
        assert data["exit_reason"] == "agent" and data["n_steps"] == 2
    # the pick is one checkpointed step of the parent session: its checkpoint holds the tree before it
    checkpoint = f"refs/frogtui/{folder.name}/1"
    assert git(person_repo, "show", f"{checkpoint}:calc.py") == "def add(a, b):\n    return a - b\n"
    assert git(person_repo, "show", f"{checkpoint}:notes.txt") == "my own work\n"


@needs_bwrap
def test_without_pick_attempts_stay_as_branches_and_the_tree_is_untouched(person_repo: Path, tmp_path: Path) -> None:
    replay = write_replay(tmp_path / "r.jsonl", fix_turns("a * b", "a + b"))
    before = person_state(person_repo)
    proc = frogtui("run", "fix add", "--repo", str(person_repo), "--model", f"replay:{replay}", "--approve", "all",
                   "--attempts", "2", "--check", CHECK)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert person_state(person_repo) == before
    folder, record = parent_record()
    assert record["picked"] is None and [r["passed"] for r in record["results"]] == [False, True]
    branches = git(person_repo, "branch", "--list", "frogtui/*", "--format=%(refname:short)").split()
    assert branches == [f"frogtui/{folder.name}/attempt-1", f"frogtui/{folder.name}/attempt-2"]
    assert git(person_repo, "show", f"{branches[1]}:calc.py") == "def add(a, b):\n    return a + b\n"
    assert git(person_repo, "show", f"{branches[0]}:calc.py") == "def add(a, b):\n    return a * b\n"
    # the base held the person's uncommitted work (untracked and staged), and its parent is HEAD
    assert git(person_repo, "show", f"{branches[1]}:notes.txt") == "my own work\n"
    assert git(person_repo, "rev-parse", f"{branches[1]}~2") == git(person_repo, "rev-parse", "HEAD")
    assert f"git diff {branches[1]}~1 {branches[1]} | git apply" in proc.stderr
    table = proc.stderr[proc.stderr.index("attempts: 2; check:"):]
    assert " 1  failed      1      +1      -1     2" in table and " 2  passed      2      +2      -1     2" in table
    assert "FAILED test_calc.py::test_add" in table  # the failed check's output tail


def test_identical_patches_are_grouped_and_pick_best_needs_a_pass(py_repo: Path, tmp_path: Path) -> None:
    same = turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a * b"))
    replay = write_replay(tmp_path / "r.jsonl", [same, turn("", answer="one"), same, turn("", answer="two")])
    proc = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all",
                   "--attempts", "2", "--check", CHECK, "--pick", "best")
    assert proc.returncode == 1, proc.stderr
    assert "(same patch as #1)" in proc.stderr
    assert "no attempt passed the check: nothing applied" in proc.stderr
    assert git(py_repo, "status", "--porcelain") == ""


@needs_bwrap
def test_a_check_is_proposed_from_the_repository_and_a_rule_of_the_persons_runs_it(py_repo: Path, tmp_path: Path) -> None:
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "rules.toml"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text('[[rules]]\ntool = "Bash"\nmatch = "python -m pytest *"\ndecision = "allow"\n')
    replay = write_replay(tmp_path / "r.jsonl", fix_turns("a + b", "a + b"))
    proc = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all", "--attempts", "1")
    assert proc.returncode == 0, proc.stderr
    assert "no --check given; proposed from the repository: python -m pytest -q" in proc.stderr
    assert "[attempt 1] check passed" in proc.stderr


CONFTEST = "import pathlib\npathlib.Path({marker!r}).write_text('conftest.py ran')\n"


@pytest.mark.parametrize(("sandbox", "mode"), [("none", "policy"), ("bwrap", "all")])
def test_a_proposed_check_nobody_approved_never_runs_headless(py_repo: Path, tmp_path: Path, sandbox: str, mode: str) -> None:
    """Without bwrap the repository's conftest.py ran on the host under --approve policy, where the
    same command from the model is denied: a proposed check is a question, and headless nobody answers."""
    marker = tmp_path / "conftest-ran"
    (py_repo / "conftest.py").write_text(CONFTEST.format(marker=str(marker)))
    git(py_repo, "add", "conftest.py")
    git(py_repo, "commit", "-q", "-m", "conftest")
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "rules.toml"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text(f'[sandbox]\nbash = "{sandbox}"\n')
    replay = write_replay(tmp_path / "r.jsonl", [turn("", answer="done")])
    proc = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", mode, "--attempts", "1")
    assert "proposed from the repository: python -m pytest -q" in proc.stderr
    assert "the proposed check is not run: no rule of yours allows it" in proc.stderr, proc.stderr
    assert 'give it with --check "python -m pytest -q" to run it' in proc.stderr
    assert "check passed" not in proc.stderr and "check failed" not in proc.stderr
    assert not marker.exists()
    _, record = parent_record()
    assert record["check"] == "" and record["check_refused"] == "python -m pytest -q"


def test_a_rule_allows_a_proposed_check_only_inside_the_sandbox(py_repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "conftest-ran"
    (py_repo / "conftest.py").write_text(CONFTEST.format(marker=str(marker)))
    git(py_repo, "add", "conftest.py")
    git(py_repo, "commit", "-q", "-m", "conftest")
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "rules.toml"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text('[sandbox]\nbash = "none"\n[[rules]]\ntool = "Bash"\nmatch = "python -m pytest *"\ndecision = "allow"\n')
    replay = write_replay(tmp_path / "r.jsonl", [turn("", answer="done")])
    proc = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}", "--attempts", "1")
    assert "the proposed check is not run: Bash runs without a sandbox here" in proc.stderr, proc.stderr
    assert not marker.exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--attempts", "9"], "--attempts must be between 1 and 8"),
    (["--attempts", "0"], "--attempts must be between 1 and 8"),
    (["--pick", "best"], "--check and --pick go with --attempts N"),
    (["--attempts", "2", "--commit"], "--commit cannot go with --attempts"),
])
def test_attempts_usage_errors(py_repo: Path, flags: list[str], message: str) -> None:
    proc = frogtui("run", "t", "--repo", str(py_repo), "--model", "replay:/nonexistent", *flags)
    assert proc.returncode == 2 and message in proc.stderr


def test_policy_approval_denies_in_each_attempt(py_repo: Path, tmp_path: Path) -> None:
    replay = write_replay(tmp_path / "r.jsonl", fix_turns("a + b", "a + b"))
    proc = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}", "--attempts", "2", "--check", CHECK)
    assert proc.returncode == 1
    assert proc.stderr.count("deny Edit by") == 2
    assert git(py_repo, "branch", "--list", "frogtui/*") != ""


@needs_bwrap
def test_an_attempts_bash_cannot_write_the_persons_tree_main_git_or_read_other_sessions(
    on_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = on_disk / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("x = 1\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "initial")
    monkeypatch.setenv("XDG_STATE_HOME", str(on_disk / "state"))
    other = sessions_dir() / "19990101-000000-secret"
    other.mkdir(parents=True)
    (other / "session.log").write_text("another session's log\n")
    before = person_state(repo)
    config_before = (repo / ".git" / "config").read_bytes()
    # a program, so the gate's floor (writes outside the repository) cannot see what it does: the sandbox must hold
    targets = [repo / "calc.py", repo / ".git" / "hooks" / "post-checkout", repo / ".git" / "config"]
    attack = "\n".join([
        "import glob, pathlib",
        f"targets = {[str(t)[::-1] for t in targets]!r}",
        "gitdir = pathlib.Path('.git').read_text().split()[1]",
        "for target in [t[::-1] for t in targets] + [gitdir + '/HEAD']:",
        "    try:",
        "        pathlib.Path(target).write_text('evil')",
        "    except OSError as err:",
        "        print('refused', err.strerror)",
        f"for path in glob.glob({str(sessions_dir())[::-1]!r}[::-1] + '/*/*'):",
        "    try:",
        "        print(pathlib.Path(path).read_text())",
        "    except OSError:",
        "        pass",
        "pathlib.Path('mine.txt').write_text('inside')",
    ])
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Write", file_path="attack.py", content=attack), xml_call("Bash", command="python3 attack.py")),
        turn("", answer="done"),
    ])
    proc = frogtui("run", "t", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", "all", "--attempts", "1", "--check", "true")
    assert proc.returncode == 0, proc.stderr
    assert person_state(repo) == before
    assert (repo / ".git" / "config").read_bytes() == config_before and not (repo / ".git" / "hooks" / "post-checkout").exists()
    folder, record = parent_record()
    data = json.loads((sessions_dir() / record["results"][0]["session"] / "trajectory.json").read_text())
    text = [m["content"] for m in data["messages"] if m["role"] == "tool"][-1]
    assert text.count("refused Read-only file system") == 4, "the person's tree, the main .git and the worktree's git dir are read-only"
    assert "another session's log" not in text, "other sessions are hidden from an attempt's sandbox"
    assert "base_seed" not in text, "the parent session's record is hidden too"
    branch = git(repo, "branch", "--list", "frogtui/*", "--format=%(refname:short)").split()[0]
    assert git(repo, "show", f"{branch}:mine.txt") == "inside", "the attempt's own worktree is writable"


@needs_bwrap
def test_kill_9_during_attempts_leaves_the_persons_tree_and_index_and_doctor_lists_the_worktrees(
    person_repo: Path, tmp_path: Path
) -> None:
    (person_repo / "calc.py").write_text("def add(a, b):\n    return a - b  # mine\n")
    git(person_repo, "add", "calc.py")
    (person_repo / "calc.py").write_text("def add(a, b):\n    return a - b  # mine, unstaged too\n")
    slow = turn("", xml_call("Write", file_path="half.txt", content="half\n"), xml_call("Bash", command="sleep 60"))
    replay = write_replay(tmp_path / "r.jsonl", [slow, turn("", answer="one"), slow, turn("", answer="two"), slow])
    before = person_state(person_repo)
    index_before = (person_repo / ".git" / "index").read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(person_repo), "--model", f"replay:{replay}", "--approve", "all",
         "--attempts", "3", "--check", "true"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 120
    while "[attempt 1] [1] allow Bash" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    assert "[attempt 1] [1] allow Bash" in seen, seen
    time.sleep(0.5)  # the sleep is running in attempt 1's sandbox, half.txt written in its worktree
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert person_state(person_repo) == before
    assert (person_repo / ".git" / "index").read_bytes() == index_before
    listed = [line[len("worktree "):] for line in git(person_repo, "worktree", "list", "--porcelain").splitlines()
              if line.startswith("worktree ")]
    leftovers = [p for p in listed if "frogtui-attempt" in p]
    assert len(leftovers) == 3 and (Path(leftovers[0]) / "half.txt").is_file()
    doctor = frogtui("doctor", "--repo", str(person_repo), "--model", "replay:/nonexistent")
    assert "attempt worktree(s) left by a stopped run" in doctor.stdout
    for path in leftovers:
        assert path in doctor.stdout
    assert "git worktree remove --force" in doctor.stdout


def test_a_trusted_project_rules_file_applies_to_each_attempt_as_to_a_single_run(py_repo: Path, tmp_path: Path) -> None:
    (py_repo / ".frogtui.toml").write_text('[[rules]]\ntool = "Edit"\nmatch = "calc.py"\ndecision = "allow"\n')
    git(py_repo, "add", ".frogtui.toml")
    git(py_repo, "commit", "-q", "-m", "rules")
    assert frogtui("policy", "trust", "--repo", str(py_repo)).returncode == 0
    replay = write_replay(tmp_path / "r.jsonl", fix_turns("a + b", "a + b"))
    single = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}")
    assert "allow Edit by rule" in single.stderr, single.stderr
    git(py_repo, "checkout", "-q", "--", "calc.py")
    proc = frogtui("run", "fix add", "--repo", str(py_repo), "--model", f"replay:{replay}", "--attempts", "1", "--check", CHECK)
    assert "[attempt 1] [1] allow Edit by rule" in proc.stderr, proc.stderr
    assert proc.returncode == 0


@needs_bwrap
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_ctrl_c_sigterm_or_sighup_during_attempts_removes_the_worktrees_and_leaves_the_tree(
        person_repo: Path, tmp_path: Path, signum: int) -> None:
    slow = turn("", xml_call("Write", file_path="half.txt", content="half\n"), xml_call("Bash", command="sleep 60"))
    replay = write_replay(tmp_path / "r.jsonl", [slow, turn("", answer="one"), slow, turn("", answer="two")])
    before = person_state(person_repo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(person_repo), "--model", f"replay:{replay}", "--approve", "all",
         "--attempts", "2", "--check", "true"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + 120
    while "[attempt 1] [1] allow Bash" not in seen and time.monotonic() < deadline:
        seen += proc.stderr.readline()
    time.sleep(0.5)
    proc.send_signal(signum)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 1, rest  # as for Ctrl+C: an interrupt, not a death by the signal
    assert [line for line in rest.splitlines() if line.startswith("frogtui:")] == ["frogtui: stopped"], rest
    assert "Traceback" not in rest
    assert person_state(person_repo) == before
    assert "frogtui-attempt" not in git(person_repo, "worktree", "list", "--porcelain")
    _, record = parent_record()
    assert record["picked"] is None and [r["exit_reason"] for r in record["results"]] == ["stopped", "stopped"]
