"""Issue 10, finding group 1, end to end: ``frogtui run --approve policy`` with allow rules meant as
"let it read" runs none of the commands that would run other code (no marker file appears), while
the same commands do create their markers when everything is allowed (so the attacks are real);
and with no rules file at all, the read-only default lets a run inspect the repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from frogtui.cli import main
from frogtui.config import config_dir
from tests.support import git, turn, write_replay, xml_call

RULES = "".join(
    f'[[rules]]\ntool = "Bash"\nmatch = "{m}"\ndecision = "allow"\n\n'
    for m in ("printf *", "ls *", "git grep *", "git fetch *", "zip *", "awk *", "sed *", "rg *", "cat *")
)
ATTACKS = [
    ("printf -v PATH %s bin; ls", "M1", None),
    ("BASH_ENV=./evil.sh bash -c 'ls'", "M2", None),
    ("git grep -O'sh -c \"touch M3\"' add", "M3", None),
    ("git fetch --upload-pack='sh -c \"touch M4\"' .", "M4", None),
    ("zip -T -TT 'sh -c \"touch M5\"' x.zip calc.py", "M5", "zip"),
    ("awk 'BEGIN{system(\"touch M6\")}'", "M6", None),
    ("sed -n '1e touch M7' calc.py", "M7", None),
    ("rg --pre ./evil add", "M8", "rg"),
]


def plant(repo: Path) -> None:
    """The repository's own programs that an attack makes run."""
    (repo / "bin").mkdir()
    (repo / "bin" / "ls").write_text("#!/bin/sh\n: > M1\n")  # PATH is only bin: no touch
    (repo / "evil.sh").write_text("touch M2\n")
    (repo / "evil").write_text('#!/bin/sh\ntouch M8\ncat "$1"\n')
    for script in ("bin/ls", "evil"):
        (repo / script).chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "tools")


def run(repo: Path, replay: Path, mode: str) -> dict:
    trajectory = repo.parent / f"trajectory-{mode}.json"
    code = main(["run", "go", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", mode, "--trajectory", str(trajectory)])
    assert code == 0
    return json.loads(trajectory.read_text())


def replay_of(tmp_path: Path, commands: list[str]) -> Path:
    turns = [turn(f"try {n}", xml_call("Bash", command=c)) for n, c in enumerate(commands)]
    return write_replay(tmp_path / "replay.jsonl", [*turns, turn("done", answer="done")])


@pytest.mark.slow
def test_read_rules_run_no_other_code_under_approve_policy(py_repo: Path, tmp_path: Path) -> None:
    plant(py_repo)
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(RULES + '[sandbox]\nbash = "none"\n')  # the policy alone stops them
    trajectory = run(py_repo, replay_of(tmp_path, [a for a, _, _ in ATTACKS]), "policy")
    decided = [a for step in trajectory["steps"] for a in step["approvals"]]
    assert [a["decision"] for a in decided] == ["deny"] * len(ATTACKS), decided
    assert [m for _, m, _ in ATTACKS if (py_repo / m).exists()] == []


@pytest.mark.slow
def test_the_same_commands_do_run_code_when_everything_is_allowed(py_repo: Path, tmp_path: Path) -> None:
    """Without the sandbox (which confines some of them), so that only the policy stands between."""
    plant(py_repo)
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    attacks = [(a, m) for a, m, tool in ATTACKS if tool is None or shutil.which(tool)]
    run(py_repo, replay_of(tmp_path, [a for a, _ in attacks]), "all")
    assert [m for _, m in attacks if not (py_repo / m).exists()] == []


def test_a_run_without_rules_inspects_the_repository(py_repo: Path, tmp_path: Path) -> None:
    commands = ["ls -la", "git status", "git log --oneline -3", "cat calc.py", "grep -n add calc.py", "echo x > out.txt"]
    trajectory = run(py_repo, replay_of(tmp_path, commands), "policy")
    decided = [(a["decision"], a["rule"]) for step in trajectory["steps"] for a in step["approvals"]]
    assert decided == [("allow", "read-only")] * 5 + [("deny", "Write: ask (default)")]
    assert not (py_repo / "out.txt").exists()


REVIEW_ATTACKS = [
    ("test -v 'a[$(touch N1)]'", "N1"),  # a subscript is evaluated as arithmetic
    ("git grep --open='sh -c \"touch N2\"' add", "N2"),  # --open is --open-files-in-pager
]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["policy", "all"])
def test_review_attacks_run_nothing_under_the_read_only_default(py_repo: Path, tmp_path: Path, mode: str) -> None:
    """No rules file: the read-only default must not run them; with everything allowed they do run."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    trajectory = run(py_repo, replay_of(tmp_path, [a for a, _ in REVIEW_ATTACKS]), mode)
    created = [m for _, m in REVIEW_ATTACKS if (py_repo / m).exists()]
    if mode == "policy":
        decided = [a["decision"] for step in trajectory["steps"] for a in step["approvals"]]
        assert "allow" not in decided and created == [], (decided, created)
    else:
        assert created == [m for _, m in REVIEW_ATTACKS]
