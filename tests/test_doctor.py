"""``frogtui doctor`` says exactly what the sandbox confines, and warns when a piece is missing
(issue 9, build item 8). Real bubblewrap where it works; a fake one that cannot start otherwise.
Each line is marked (✓, ! or ✗), ``--model`` checks another spec (issue 11)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from frogtui import doctor
from frogtui.approval.sandbox import probe_bwrap
from frogtui.config import config_dir
from tests.support import write_replay

BWRAP = shutil.which("bwrap")


@pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here")
def test_doctor_lists_what_the_sandbox_confines(py_repo: Path) -> None:
    lines = doctor._sandbox_lines(py_repo, None)
    assert lines[0].startswith("bubblewrap: /")
    for piece in ("user namespace, no capabilities", ".git read-only", "secret store(s) hidden", "/run and sockets hidden",
                  "allowlisted environment", "network off"):
        assert piece in lines[1], piece
    assert lines[2:] == ["read-only default: on; the commands it allows run with everything read-only, an empty temp folder, no network"]


def test_doctor_warns_when_the_sandbox_is_off(py_repo: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    lines = doctor._sandbox_lines(py_repo, None)
    assert lines[1] == "sandbox: Bash runs without a sandbox"
    assert lines[2] == 'sandbox: WARNING Bash runs without a sandbox: [sandbox] bash = "none" in the rules'
    assert lines[3].startswith('sandbox: WARNING the read-only default is off: Bash has no sandbox ([sandbox] bash = "none" in the rules)')


def test_doctor_marks_the_failing_line_and_takes_model(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.jsonl"
    assert doctor.main(["--repo", str(py_repo), "--model", f"replay:{missing}"]) == 1
    lines = capsys.readouterr().out.splitlines()
    failing = [line for line in lines if line.startswith("✗ ")]
    assert failing == [f"✗ model: replay:{missing} (file not found)"]
    assert all(line[:2] in ("✓ ", "! ", "✗ ") for line in lines[:-1]), lines
    assert lines[-1].startswith("not ready: fix the line marked ✗")
    replay = write_replay(tmp_path / "ok.jsonl", ["hi"])
    assert doctor.main(["--repo", str(py_repo), "--model", f"replay:{replay}"]) == 0
    out = capsys.readouterr().out
    assert f"✓ model: replay:{replay} (found)" in out and "✗" not in out and out.splitlines()[-1] == "ready: frogtui can run here"
