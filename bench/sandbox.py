"""Cost of one sandboxed Bash command: ``true`` through frogtui's Bash tool (``run_bash`` with the
bubblewrap wrapper and the tool's environment) against ``subprocess.run`` of the same argv.

Usage: python bench/sandbox.py [--runs 40]

Both sides run the identical argv (``wrap(["bash", ..., "true"])``) in a throwaway repository,
alternating, after two warm-up runs each; the figures are medians in milliseconds. The last line is
one JSON object.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.approval import SandboxSettings, make_sandbox  # noqa: E402
from frogtui.tools import ToolRunner  # noqa: E402
from frogtui.tools.bash import run_bash, shell_argv  # noqa: E402
from frogtui.tools.workspace import Workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-sandbox-") as folder:
        root = Path(folder) / "repo"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        tmp_dir = Path(folder) / "tmp"
        tmp_dir.mkdir()
        workspace = Workspace(root, tmp_dir=tmp_dir)
        sandbox = make_sandbox(workspace, SandboxSettings())
        if sandbox.wrap is None:
            raise SystemExit(f"no sandbox here: {sandbox.warning}")
        runner = ToolRunner(workspace, wrap=sandbox.wrap)
        env = runner.bash_env()
        times: dict[str, list[float]] = {"tool": [], "subprocess": [], "wrap": []}
        for run in range(args.runs + 2):
            start = time.perf_counter()
            argv = sandbox.wrap(shell_argv("true"))
            wrapped = time.perf_counter()
            subprocess.run(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True)
            bare = time.perf_counter()
            result = run_bash("true", str(root), wrap=sandbox.wrap, env=env)
            tool = time.perf_counter()
            assert result.exit_code == 0, result.observation
            if run >= 2:
                times["wrap"].append((wrapped - start) * 1000)
                times["subprocess"].append((bare - wrapped) * 1000)
                times["tool"].append((tool - bare) * 1000)
        medians = {name: round(statistics.median(values), 2) for name, values in times.items()}
        print(f"sandboxed `true`: tool {medians['tool']} ms, subprocess.run {medians['subprocess']} ms, "
              f"building the argv {medians['wrap']} ms (medians of {args.runs})")
        print(json.dumps({**{f"{k}_ms": v for k, v in medians.items()}, "ratio": round(medians["tool"] / medians["subprocess"], 3),
                          "runs": args.runs, "argv_len": len(argv)}))


if __name__ == "__main__":
    main()
