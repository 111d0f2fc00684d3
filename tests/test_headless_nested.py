"""`frogtui run` with nested git repositories (issue 9, the open sandbox findings): a sandboxed
command that creates one (empty, or with a planted ``core.fsmonitor``) does not break the run's
checkpoints and runs nothing; the run says so in one line, and ``--commit`` refuses. A start in a
repository that already holds one works, with one warning line. Real git, real bubblewrap, replay
model, as a subprocess."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support import git, turn, write_replay, xml_call
from tests.test_headless import frogtui


def needs_bwrap() -> None:
    from frogtui.approval.sandbox import probe_bwrap

    if shutil.which("bwrap") is None or probe_bwrap(shutil.which("bwrap") or "") is not None:
        pytest.skip("bubblewrap is not usable here")


def test_a_run_that_creates_nested_repositories_goes_on_says_so_and_is_not_committed(py_repo: Path, tmp_path: Path) -> None:
    needs_bwrap()
    marker = tmp_path / "PWNED"
    plant = (
        "import subprocess\n"
        "for folder in ('nest', 'x'):\n"
        "    subprocess.run(['git', 'init', '-q', folder], check=True)\n"
        f"subprocess.run(['git', '-C', 'nest', 'config', 'core.fsmonitor', 'touch {marker}'], check=True)\n"
        "open('calc.py', 'w').write('def add(a, b):\\n    return a + b\\n')\n"
    )
    (py_repo / "plant.py").write_text(plant)
    turns = [turn("", xml_call("Bash", command="python3 plant.py")), turn("", xml_call("Bash", command="true")),
             turn("", xml_call("Write", file_path="more.txt", content="m\n")), turn("", answer="done")]
    out = tmp_path / "traj.json"
    proc = frogtui("run", "t", "--repo", str(py_repo), "--model", f"replay:{write_replay(tmp_path / 'r.jsonl', turns)}",
                   "--approve", "all", "--trajectory", str(out), "--commit")
    assert proc.returncode == 1, proc.stderr
    assert "exit_reason=agent" in proc.stderr and "Traceback" not in proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "nested git repository" in line and "core.fsmonitor" in line]
    assert len(warned) == 2 and "nest/, x/" in warned[0], proc.stderr  # the checkpoint's line, then --commit's
    (refused,) = [line for line in proc.stderr.splitlines() if line.startswith("frogtui: --commit:")]
    assert "not committing" in refused and "nest/" in refused
    assert json.loads(out.read_text())["exit_reason"] == "agent"
    assert git(py_repo, "rev-list", "--count", "HEAD") == "1\n" and "return a + b" in (py_repo / "calc.py").read_text()
    assert (py_repo / "more.txt").exists() and (py_repo / "nest" / ".git").is_dir()
    assert not marker.exists()


def test_a_start_in_a_repository_holding_an_empty_nested_repository_works(py_repo: Path, tmp_path: Path) -> None:
    git(py_repo / "x" if (py_repo / "x").mkdir() is None else py_repo, "init", "-q")
    turns = [turn("", xml_call("Write", file_path="new.py", content="x = 1\n")), turn("", answer="ok")]
    out = tmp_path / "t.json"
    proc = frogtui("run", "t", "--repo", str(py_repo), "--model", f"replay:{write_replay(tmp_path / 'r.jsonl', turns)}",
                   "--approve", "all", "--trajectory", str(out))
    assert proc.returncode == 0, proc.stderr
    (warned,) = [line for line in proc.stderr.splitlines() if "nested git repository" in line]
    assert warned.startswith("frogtui: warning: ") and "x/" in warned
    assert "new.py" in json.loads(out.read_text())["output_patch"]
