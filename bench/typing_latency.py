"""Keystroke to screen while a local model generates: the model in its own process against in frogtui's.

Usage: python bench/typing_latency.py MODEL.gguf [--keys 40] [--runs 2] [--tokens 400]

The app (Pilot, 120x40, ``--approve all``) streams a long answer from MODEL; while it streams, a
letter is typed into the prompt every 50 ms. For each key: the time from the key being sent to
the first frame drawn after the prompt holds it (``Screen._refresh_layout``, timed as in
``bench/frames.py``). Two sides, alternating runs: ``process`` (frogtui's ``LocalModel``: llama.cpp
in its own process) and ``inproc`` (the same engine, ``LlamaCppModel``, inside the app's process,
as before: its token loop holds the GIL between llama.cpp calls). Also the model's tokens per
second while typing. The last line is one JSON object (medians and 90th percentiles).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual import events  # noqa: E402
from textual.screen import Screen  # noqa: E402

from frogtui.config import Config, Limits, LlamaSettings  # noqa: E402

TASK = "Write a very long story about a frog who learns to program, with many chapters."


def load(side: str, spec: str, config: Config, report: Any = None) -> Any:
    if side == "process":
        from frogtui.models.local import LocalModel

        return LocalModel.from_spec(spec, config, report=lambda line: None)
    from frogtui.models.llama_cpp import LlamaCppModel
    from frogtui.models.local import extra_buffers_choice

    extra = extra_buffers_choice(Path(spec), config)  # frogtui's choice for this CPU (AMX: off)
    return LlamaCppModel.from_spec(spec, config, report=lambda line: None, extra_buffers=extra)


def one_run(side: str, model_path: str, keys: int, tokens: int, repo: Path) -> dict[str, Any]:
    from frogtui.ui.app import FrogApp

    config = Config(repo=repo, model_spec=model_path, approve="all", llama=LlamaSettings(n_ctx=4096),
                    limits=Limits(max_tokens_per_turn=tokens))
    frames: list[float] = []
    original = Screen._refresh_layout

    def timed(self: Screen[Any], *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        frames.append(time.perf_counter())
        return result

    latencies: list[float] = []
    generated = {"tokens": 0, "seconds": 0.0}

    async def drive() -> None:
        app = FrogApp(config, model_loader=lambda spec, cfg, report=None: load(side, spec, cfg))
        async with app.run_test(size=(120, 40)):
            while getattr(app, "model", None) is None:
                await asyncio.sleep(0.05)
            prompt = app.query_one("#prompt")
            prompt.value = TASK  # type: ignore[attr-defined]
            await prompt.action_submit()  # type: ignore[attr-defined]
            started = time.perf_counter()
            while not app.busy:
                await asyncio.sleep(0.01)
            await asyncio.sleep(1.0)  # the prompt is evaluated; tokens stream now
            prompt.focus()
            for n in range(keys):
                if not app.busy:
                    break
                letter = "abcdefghijklmnopqrstuvwxyz"[n % 26]
                sent = time.perf_counter()
                app.post_message(events.Key(letter, letter))  # as the terminal driver posts it (Pilot.press waits for idle)
                give_up = sent + 5.0
                while not str(prompt.value).endswith(letter) and time.perf_counter() < give_up:  # type: ignore[attr-defined]
                    await asyncio.sleep(0.001)
                seen = len(frames)
                while len(frames) == seen and time.perf_counter() < give_up:
                    await asyncio.sleep(0.001)
                if time.perf_counter() >= give_up:
                    print(f"{side}: key {n} not shown within 5 s (focus: {app.focused}); stopping this run", file=sys.stderr)
                    break
                latencies.append(frames[-1] - sent)
                await asyncio.sleep(0.05)
            app.action_interrupt()
            while app.busy:
                await asyncio.sleep(0.02)
            steps = app.agent.trajectory.steps if app.agent is not None else []
            usage = steps[-1].usage if steps else None
            if usage:
                generated["tok_s"] = usage["gen_tok_s"] if isinstance(usage, dict) else usage.gen_tok_s
            generated["seconds"] = time.perf_counter() - started

    Screen._refresh_layout = timed  # type: ignore[method-assign]
    try:
        asyncio.run(drive())
    finally:
        Screen._refresh_layout = original  # type: ignore[method-assign]
    ms = sorted(x * 1000 for x in latencies)
    return {"side": side, "keys": len(ms), "median_ms": round(statistics.median(ms), 1) if ms else None,
            "p90_ms": round(ms[int(len(ms) * 0.9) - 1], 1) if ms else None, "tok_s": generated.get("tok_s")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--keys", type=int, default=40)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=400)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "README.md").write_text("a repository\n")
        for run in range(1, args.runs + 1):
            for side in ("process", "inproc"):
                row = one_run(side, args.model, args.keys, args.tokens, repo)
                rows.append(row)
                print(f"run {run}: {json.dumps(row)}", flush=True)
    result = {}
    for side in ("process", "inproc"):
        mine = [r for r in rows if r["side"] == side and r["median_ms"] is not None]
        result[f"{side}_median_ms"] = round(statistics.median(r["median_ms"] for r in mine), 1) if mine else None
        result[f"{side}_p90_ms"] = round(statistics.median(r["p90_ms"] for r in mine), 1) if mine else None
        result[f"{side}_tok_s"] = round(statistics.median(r["tok_s"] or 0 for r in mine), 1) if mine else None
    print(json.dumps(result))


if __name__ == "__main__":
    main()
