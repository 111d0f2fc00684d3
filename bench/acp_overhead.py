"""What ``frogtui acp`` adds per agent step, against the same loop without ACP.

Usage: python bench/acp_overhead.py [--steps 40] [--runs 3] [--words 150]

A throwaway git repository and a replay model of STEPS steps (each: WORDS words of reasoning, a
short answer, one Read that the rules allow) run twice per round: in-process through the headless
wiring, its trace going to memory (the baseline), and through a ``frogtui acp`` subprocess driven by the
SDK's client (every reasoning delta, tool call and usage update crosses the pipe as JSON and is
parsed by the client). Times are from the prompt to its answer; on both sides a first prompt (one
turn, no call) loads the model and builds the agent before the clock starts. Overhead per step =
(ACP - baseline) / steps: the median over runs, and the fastest ACP run against the fastest
baseline (the figure least disturbed by other load on the machine). The last line is one JSON object.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp import spawn_agent_process  # noqa: E402
from acp.helpers import text_block  # noqa: E402

from frogtui.config import load_config  # noqa: E402
from frogtui.models import load_model  # noqa: E402
from frogtui.run_trace import start_traced  # noqa: E402
from frogtui.session.core import SessionCore  # noqa: E402


class QuietClient:
    """Counts what arrives; never asked anything (every Read is allowed by the rules)."""

    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
        self.updates += 1

    async def request_permission(self, *args: object, **kwargs: object) -> object:
        raise RuntimeError("the bench session asks nothing")


def make_repo(folder: Path, steps: int, words: int) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("".join(f"line {n}: some text\n" for n in range(40)))
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    reasoning = " ".join(f"word{n}" for n in range(words))
    call = "<tool_call>\n<function=Read>\n<parameter=file_path>\nnotes.txt\n</parameter>\n</function>\n</tool_call>"
    warm_up = "Ready.\n</think>\n\nReady."
    turns = [warm_up] + [f"{reasoning}\n</think>\n\nReading again.\n\n{call}" for _ in range(steps)] + [f"{reasoning}\n</think>\n\nDone."]
    (folder / "replay.jsonl").write_text("".join(json.dumps({"content": t}) + "\n" for t in turns))
    return repo


def baseline(repo: Path, replay: Path) -> float:
    config = load_config(repo=repo, model_spec=f"replay:{replay}")
    core = SessionCore(config, model=load_model(config.model_spec, config))
    start_traced(core, io.StringIO())
    core.send("warm up")
    started = time.perf_counter()
    result = core.send("read notes.txt many times")
    elapsed = time.perf_counter() - started
    assert result.exit_reason == "agent", result.exit_reason
    return elapsed


async def through_acp(repo: Path, replay: Path) -> tuple[float, int]:
    client = QuietClient()
    env = dict(os.environ)
    async with spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "frogtui",
        "acp",
        "--model",
        f"replay:{replay}",
        env=env,
        cwd=repo,
        transport_kwargs={"stderr": subprocess.DEVNULL},
    ) as (conn, _process):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(repo))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("warm up")])  # loads the model; not timed
        started = time.perf_counter()
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("read notes.txt many times")])
        elapsed = time.perf_counter() - started
    assert response.stop_reason == "end_turn", response.stop_reason
    return elapsed, client.updates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--words", type=int, default=150)
    args = parser.parse_args()
    per_step: list[float] = []
    bases: list[float] = []
    acps: list[float] = []
    with tempfile.TemporaryDirectory(prefix="frogtui-acp-bench-") as tmp:
        os.environ.setdefault("XDG_STATE_HOME", str(Path(tmp) / "state"))
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")  # default rules: Read is allowed
        for run in range(1, args.runs + 1):
            folder = Path(tmp) / f"run{run}"
            folder.mkdir()
            repo = make_repo(folder, args.steps, args.words)
            base = baseline(repo, folder / "replay.jsonl")
            acp_s, updates = asyncio.run(through_acp(repo, folder / "replay.jsonl"))
            bases.append(base)
            acps.append(acp_s)
            per_step.append((acp_s - base) / (args.steps + 1))
            print(
                f"run {run}: baseline {base * 1000:8.1f} ms   acp {acp_s * 1000:8.1f} ms   {updates} updates   "
                f"overhead {per_step[-1] * 1000:6.2f} ms/step"
            )
    median = statistics.median(per_step)
    best = (min(acps) - min(bases)) / (args.steps + 1)  # fastest of each side: the least disturbed by other load
    figures = {"steps": args.steps + 1, "words_per_step": args.words, "runs": args.runs}
    figures |= {"overhead_ms_per_step_median": round(median * 1000, 3), "overhead_ms_per_step_best": round(best * 1000, 3)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
