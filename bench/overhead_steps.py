"""What the harness adds to each step, against the bare tool and the bare command, headless and in
the app, at the start of a session and 200 steps in.

Usage: python bench/overhead_steps.py [--steps 200] [--runs 3] [--kinds read,bash] [--fronts headless,app]

Builds a small git repository in a temp folder (XDG folders there too), then for each kind of
step (``Read calc.py``; ``Bash true``, sandboxed as configured, bubblewrap by default) replays
STEPS model turns of that call plus a final answer, ``--approve all``, through ``frogtui run``'s
``run_task`` (headless) and through the app driven by Pilot (headless terminal). The replay model
records when the loop asks it for each turn: a step's time is the gap between two asks (the tool,
checkpoint, approval, trace, trajectory and UI work; the replay model itself takes microseconds).
A run's total is from the first ask until the front end has shown the end (``run_task`` returned;
the app shows the run ended and is idle, polled every 5 ms): the app's UI may lag its agent thread.
For the app, ``drawn_s`` is until the next frame after that has been drawn as well: an upper bound
of when the person sees the end (the run's last frame may come just before the idle state is
seen, or just after; a frame asked for later, such as the git state's, may be the one waited for).
Overhead = step time - the bare operation, timed in the same process beforehand: the Read tool
(``ToolRunner.run``) for Read; ``subprocess.run`` of the same sandboxed argv for Bash.

Reports, per front end and kind, the median step time and overhead over steps 1-10 and over the
last 10 steps, the whole run, and the app / headless ratio of whole runs. Runs alternate between
the front ends. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.config import Config, Limits
from frogtui.headless import run_task
from frogtui.models.replay import ReplayModel
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner, Workspace
from frogtui.tools.bash import shell_argv

CALLS = {
    "read": '<tool_call>\n<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter>\n</function>\n</tool_call>',
    "bash": '<tool_call>\n<function=Bash>\n<parameter=command>\ntrue\n</parameter>\n</function>\n</tool_call>',
}


class TimedReplay(ReplayModel):
    """The replay model, noting when each turn is asked for (the edge of the system)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.asked: list[float] = []
        self.done = 0.0
        """When the front end had shown the end of the run (run_task returned; the app showed it)."""
        self.drawn = 0.0
        """The app: when the screen had drawn that end too (the next frame after ``done``)."""

    def stream_turn(self, *args: Any, **kwargs: Any) -> Any:
        self.asked.append(time.perf_counter())
        return super().stream_turn(*args, **kwargs)


def make_repo(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=env)


def write_replay(path: Path, kind: str, steps: int) -> Path:
    turns = [{"content": f"Step {i}.\n</think>\n\n{CALLS[kind]}"} for i in range(steps)]
    turns.append({"content": "Done.\n</think>\n\nDone."})
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return path


def bare_ms(kind: str, repo: Path, tmp: Path, runs: int = 30) -> float:
    """The median time of the operation alone: the Read tool, or the sandboxed ``true``."""
    from frogtui.approval import load_rules, make_sandbox

    workspace = Workspace(repo, tmp_dir=tmp)
    sandbox = make_sandbox(workspace, load_rules(repo).sandbox) if kind == "bash" else None
    runner, call = ToolRunner(workspace), ToolCall("b", "Read", {"file_path": "calc.py"})
    argv = shell_argv("true")  # what run_bash runs, wrapped by the same sandbox
    argv = sandbox.wrap(argv) if sandbox is not None and sandbox.wrap is not None else argv

    def action() -> object:
        return runner.run(call) if kind == "read" else subprocess.run(argv, cwd=repo, capture_output=True, check=False)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def headless(config: Config, model: TimedReplay) -> None:
    run_task("go", config, model, stderr=io.StringIO(), stdout=io.StringIO())
    model.done = time.perf_counter()


def in_app(config: Config, model: TimedReplay) -> None:
    from frogtui.ui.app import FrogApp

    async def drive() -> None:
        app = FrogApp(config, model_loader=lambda spec, config, report=None: model)
        async with app.run_test(size=(120, 40)):
            while getattr(app, "model", None) is None:
                await asyncio.sleep(0.02)
            prompt = app.query_one("#prompt")
            prompt.value = "go"  # type: ignore[attr-defined]
            await prompt.action_submit()  # type: ignore[attr-defined]
            deadline = time.monotonic() + 600
            while getattr(app, "busy", False) or getattr(app, "last_exit_reason", None) is None:
                if time.monotonic() > deadline:
                    raise SystemExit("the app did not finish the run in 10 minutes")
                await asyncio.sleep(0.005)
            model.done = time.perf_counter()
            drawn = asyncio.Event()
            app.call_after_refresh(drawn.set)  # after the next frame (at once when nothing is left to draw)
            await asyncio.wait_for(drawn.wait(), timeout=10)
            model.drawn = time.perf_counter()

    asyncio.run(drive())


def summary(model: TimedReplay, bare: float, window: int = 10) -> dict[str, float]:
    asked = model.asked
    steps = [(b - a) * 1000 for a, b in zip(asked, asked[1:], strict=False)]
    first, last = statistics.median(steps[:window]), statistics.median(steps[-window:])
    row = {"step_1_ms": round(first, 2), "step_last_ms": round(last, 2), "overhead_1_ms": round(first - bare, 2),
           "overhead_last_ms": round(last - bare, 2), "total_s": round(model.done - asked[0], 3)}
    return row | ({"drawn_s": round(model.drawn - asked[0], 3)} if model.drawn else {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default="read,bash")
    parser.add_argument("--fronts", default="headless,app")
    args = parser.parse_args()
    fronts = {"headless": headless, "app": in_app}
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(tmp / name.lower())
        results: dict[str, Any] = {"steps": args.steps, "runs": args.runs}
        for kind in args.kinds.split(","):
            repo = tmp / f"repo-{kind}"
            make_repo(repo)
            bare = bare_ms(kind, repo, tmp / "t")
            results[f"{kind}_bare_ms"] = round(bare, 2)
            per_front: dict[str, list[dict[str, float]]] = {f: [] for f in args.fronts.split(",")}
            for run in range(args.runs):
                for front in per_front if run % 2 == 0 else reversed(list(per_front)):
                    replay = write_replay(tmp / f"{kind}.jsonl", kind, args.steps)
                    model = TimedReplay(replay)
                    config = Config(repo=repo, model_spec=f"replay:{replay}", approve="all", limits=Limits(max_steps=args.steps + 1))
                    fronts[front](config, model)
                    if len(model.asked) != args.steps + 1:
                        raise SystemExit(f"{front}: the run asked for {len(model.asked)} turns, not {args.steps + 1}")
                    row = summary(model, bare)
                    per_front[front].append(row)
                    print(f"{kind} {front} run {run + 1}: " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
            for front, rows in per_front.items():
                results[f"{kind}_{front}"] = {k: round(statistics.median(r[k] for r in rows), 2) for k in rows[0]}
            if {"headless", "app"} <= per_front.keys():
                pairs = list(zip(per_front["app"], per_front["headless"], strict=False))
                results[f"{kind}_app_to_headless"] = round(statistics.median(a["total_s"] / h["total_s"] for a, h in pairs), 2)
                results[f"{kind}_app_drawn_to_headless"] = round(statistics.median(a["drawn_s"] / h["total_s"] for a, h in pairs), 2)
        print(json.dumps(results))


if __name__ == "__main__":
    main()
