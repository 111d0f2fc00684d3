"""Start-up: each command imports only what it needs (checked in a fresh interpreter)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("llama_cpp", "httpx", "huggingface_hub", "tqdm", "textual", "numpy", "openai")


def modules_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=os.environ.copy(), check=False)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "argv, allowed",
    [
        (["--help"], set()),
        (["run", "--help"], set()),
        (["policy", "check", "ls -la"], set()),
    ],
)
def test_a_command_imports_no_model_stack_and_no_ui_it_does_not_use(argv: list[str], allowed: set[str]) -> None:
    code = (
        "import contextlib, io\nfrom frogtui import cli\n"
        f"with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    cli.main({argv!r})"
    )
    loaded = modules_after(code)
    assert loaded & set(HEAVY) == allowed
