"""Start-up of the app: it paints before the policy, git, the agent loop or a model is imported
(they come with the session, on the worker that prepares it). Checked in a fresh interpreter."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("frogtui.approval", "frogtui.vcs", "frogtui.agent.loop", "frogtui.agent.session_core", "git", "bashlex", "llama_cpp")


def heavy_after(code: str, tmp_path: Path) -> list[str]:
    """The modules of ``HEAVY`` that a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    env = {**os.environ, **{name: str(tmp_path / name.lower()) for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_importing_the_app_imports_no_policy_git_loop_or_model(tmp_path: Path) -> None:
    assert heavy_after("import frogtui.ui.app, frogtui.ui.launch", tmp_path) == []


def test_building_the_app_imports_none_of_them_either(tmp_path: Path) -> None:
    code = (
        "from pathlib import Path\nfrom frogtui.config import Config\nfrom frogtui.ui.app import FrogApp\n"
        "app = FrogApp(Config(repo=Path('.'), model_spec='replay:none.jsonl'))"
    )
    assert heavy_after(code, tmp_path) == []
