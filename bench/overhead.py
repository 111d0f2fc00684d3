"""Generation speed through frogtui's backend against raw llama-cpp-python on the same prompt.

Usage: python bench/overhead.py MODEL.gguf [--runs 3] [--tokens 128] [--n-ctx 4096]

Alternates runs: frogtui's ``LlamaCppModel.stream_turn`` (template-rendered prompt, token loop,
incremental detokenizing) and ``Llama.create_completion(stream=True)`` on the same prompt text, with
the same sampling settings (LEAF.md defaults), each on its own instance with the same load settings.
Generation speed = generated tokens / (wall time of the call - llama.cpp's prompt-eval time), so both
sides include sampling, detokenizing and Python overhead. The totals weigh runs by their tokens.
The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import llama_cpp  # noqa: E402

from frogtui.config import Config, LlamaSettings, Sampling  # noqa: E402
from frogtui.models.llama_cpp import KV_CACHE_TYPES, LlamaCppModel  # noqa: E402
from frogtui.protocol import TurnEnd  # noqa: E402
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS  # noqa: E402

TASK = "Write a detailed explanation of how a hash map handles collisions, with examples."


def generation_speed(llm: llama_cpp.Llama, generated: int, wall_s: float) -> float:
    """Tokens per second of the generation phase: wall time of the call minus llama.cpp's prompt time."""
    prompt_s = llama_cpp.llama_perf_context(llm.ctx).t_p_eval_ms / 1000
    gen_s = wall_s - prompt_s
    return generated / gen_s if generated and gen_s > 0 else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=4096)
    args = parser.parse_args()
    sampling = Sampling(seed=None)
    settings = LlamaSettings(n_ctx=args.n_ctx)
    model = LlamaCppModel.from_spec(args.model, Config(llama=settings, sampling=sampling), report=lambda line: print(line, file=sys.stderr))
    raw = llama_cpp.Llama(
        args.model, n_ctx=model.llm.n_ctx(), n_batch=settings.n_batch, n_ubatch=settings.n_batch, flash_attn=settings.flash_attn,
        type_k=KV_CACHE_TYPES[settings.cache_type_k], type_v=KV_CACHE_TYPES[settings.cache_type_v],
        n_threads=model.llm.n_threads, n_threads_batch=model.llm.n_threads_batch, seed=1, verbose=False,
    )
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": TASK}]
    prompt = model.template.render(messages, TOOL_SCHEMAS, add_generation_prompt=True)
    speeds: dict[str, list[float]] = {"frogtui": [], "raw": []}
    counts: dict[str, list[int]] = {"frogtui": [], "raw": []}
    for run in range(1, args.runs + 1):
        llama_cpp.llama_perf_context_reset(model.llm.ctx)
        started = time.perf_counter()
        for item in model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=args.tokens, cancel=threading.Event()):
            if isinstance(item, TurnEnd):
                counts["frogtui"].append(item.usage.generated_tokens)
        speeds["frogtui"].append(generation_speed(model.llm, counts["frogtui"][-1], time.perf_counter() - started))
        llama_cpp.llama_perf_context_reset(raw.ctx)
        started = time.perf_counter()
        result = raw.create_completion(
            prompt, max_tokens=args.tokens, temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k,
            min_p=sampling.min_p, repeat_penalty=sampling.repeat_penalty, stop=["<|im_end|>"],
        )
        counts["raw"].append(int(result["usage"]["completion_tokens"]))
        speeds["raw"].append(generation_speed(raw, counts["raw"][-1], time.perf_counter() - started))
        print(f"run {run}: frogtui {speeds['frogtui'][-1]:8.1f} tok/s ({counts['frogtui'][-1]} tokens)   "
              f"raw {speeds['raw'][-1]:8.1f} tok/s ({counts['raw'][-1]} tokens)")
    frog = sum(c for c in counts["frogtui"]) / sum(c / s for c, s in zip(counts["frogtui"], speeds["frogtui"], strict=True) if s)
    rawv = sum(c for c in counts["raw"]) / sum(c / s for c, s in zip(counts["raw"], speeds["raw"], strict=True) if s)
    print(json.dumps({"frogtui_tok_s": round(frog, 2), "raw_tok_s": round(rawv, 2), "ratio": round(frog / rawv, 3) if rawv else None}))
    model.close()
    raw.close()


if __name__ == "__main__":
    main()
