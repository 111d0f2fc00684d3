"""``frogtui doctor`` says exactly what the sandbox confines, and warns when a piece is missing
(issue 9, build item 8). Real bubblewrap where it works; a fake one that cannot start otherwise."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from frogtui import doctor
from frogtui.approval.sandbox import probe_bwrap
from frogtui.config import config_dir

BWRAP = shutil.which("bwrap")


@pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here")
def test_doctor_lists_what_the_sandbox_confines(py_repo: Path) -> None:
    lines = doctor._sandbox_lines(py_repo, None)
    assert lines[0].startswith("bubblewrap: /")
    for piece in ("user namespace, no capabilities", ".git read-only", "secret store(s) hidden", "/run and sockets hidden",
                  "allowlisted environment", "network off"):
        assert piece in lines[1], piece
    assert len(lines) == 2


def test_doctor_warns_when_the_sandbox_is_off(py_repo: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    lines = doctor._sandbox_lines(py_repo, None)
    assert lines[1] == "sandbox: Bash runs without a sandbox"
    assert lines[2] == 'sandbox: WARNING Bash runs without a sandbox: [sandbox] bash = "none" in the rules'
