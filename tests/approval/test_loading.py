"""Reading the rules files (``approval/loading.py``) against a hostile repository: its
``.frogtui.toml`` is read before anything is sandboxed, so it must not hang or exhaust frogtui."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest


def _two_gigabytes() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


LOAD = "from pathlib import Path; from frogtui.approval.loading import load_rules; print(load_rules(Path({repo!r})).notes[0])"


@pytest.mark.parametrize("kind", ["symlink to /dev/zero", "FIFO", "too big"])
def test_a_project_file_that_is_not_a_small_regular_file_is_one_line(py_repo: Path, kind: str) -> None:
    """Red team (rt9): git stores a symlink ``.frogtui.toml -> /dev/zero`` (a clone brings it);
    frogtui read it whole at start and ate all memory; a FIFO (left by a sandboxed ``mkfifo``)
    blocked it for good."""
    project = py_repo / ".frogtui.toml"
    if kind == "FIFO":
        os.mkfifo(project)
    elif kind == "too big":
        project.write_text("# padding\n" * 400_000)
    else:
        project.symlink_to("/dev/zero")
    done = subprocess.run([sys.executable, "-c", LOAD.format(repo=str(py_repo))], capture_output=True, text=True, timeout=30,
                          check=False, preexec_fn=_two_gigabytes)
    assert done.returncode == 0 and "MemoryError" not in done.stderr, done.stderr[-500:]  # ignored, with a note: never a lock-out
    assert done.stdout.startswith(f"ignored .frogtui.toml: {project}: cannot read the rules file"), done.stdout[-500:]
