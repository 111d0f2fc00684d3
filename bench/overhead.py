"""Generation through frogtui's model process against llama.cpp in one process, on the same prompt.

Usage: python bench/overhead.py MODEL.gguf [--runs 3] [--tokens 128] [--n-ctx 4096] [--threads N]

Three sides, alternating runs, same load and sampling settings (LEAF.md defaults):
- ``process``: frogtui's ``LocalModel`` (llama.cpp in its own process, text streamed over a pipe);
- ``inproc``: the same engine (``LlamaCppModel``) inside this process, as frogtui ran it before;
- ``raw``: ``Llama.create_completion`` on the same prompt text, in this process.

Figures:
- generation speed = generated tokens / (wall time of the turn - time to its first token), so
  every side includes sampling, detokenizing, Python and (for ``process``) the pipe; the totals
  weigh runs by their tokens;
- a follow-up's time to first token (a user message after the answer: only its own tokens are
  evaluated), ``process`` against ``inproc``;
- model-ready time: ``from_spec`` until the model can take a turn (``process`` includes starting
  the interpreter, importing llama_cpp and the first load's probe, ``inproc`` the load alone).
Every side loads with llama.cpp's extra weight buffers as frogtui chose them for this CPU, build and
quantisation (the model process's choice: on a CPU where they crash, AMX, the others would die of
SIGSEGV on their first token with them on); ``extra_buffers`` says what each side's llama.cpp got.
The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import llama_cpp  # noqa: E402

from frogtui.config import Config, LlamaSettings, Sampling  # noqa: E402
from frogtui.models.llama_cpp import KV_CACHE_TYPES, LlamaCppModel, extra_weight_buffers  # noqa: E402
from frogtui.models.local import LocalModel  # noqa: E402
from frogtui.protocol import TurnEnd  # noqa: E402
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS  # noqa: E402

TASK = "Write a detailed explanation of how a hash map handles collisions, with examples."


def turn(model: object, messages: list[dict[str, object]], tokens: int) -> tuple[float, int, float, str]:
    """(seconds to the first token, tokens generated, generation tok/s, the text) of one turn."""
    started = time.perf_counter()
    first = None
    text = []
    generated = 0
    for item in model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=tokens, cancel=threading.Event()):  # type: ignore[attr-defined]
        if isinstance(item, TurnEnd):
            generated = item.usage.generated_tokens
        else:
            first = first or time.perf_counter()
            text.append(item)
    end = time.perf_counter()
    first = first or end
    return first - started, generated, (generated - 1) / (end - first) if generated > 1 and end > first else 0.0, "".join(text)


def raw_turn(raw: llama_cpp.Llama, prompt: str, tokens: int, sampling: Sampling) -> tuple[int, float]:
    started = time.perf_counter()
    first = None
    generated = 0
    for _chunk in raw.create_completion(
        prompt, max_tokens=tokens, temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k,
        min_p=sampling.min_p, repeat_penalty=sampling.repeat_penalty, stop=["<|im_end|>"], stream=True,
    ):
        first = first or time.perf_counter()
        generated += 1
    end = time.perf_counter()
    first = first or started
    return generated, (generated - 1) / (end - first) if generated > 1 and end > first else 0.0


def weighted(counts: list[int], speeds: list[float]) -> float:
    time_s = sum(c / s for c, s in zip(counts, speeds, strict=True) if s)
    return sum(c for c, s in zip(counts, speeds, strict=True) if s) / time_s if time_s else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, help="threads on every side (default: the model process's choice)")
    args = parser.parse_args()
    sampling = Sampling(seed=None)
    settings = LlamaSettings(n_ctx=args.n_ctx, n_threads=args.threads, n_threads_batch=args.threads)
    config = Config(llama=settings, sampling=sampling)
    quiet = lambda line: None  # noqa: E731
    started = time.perf_counter()
    process = LocalModel.from_spec(args.model, config, report=quiet)
    ready = {"process": time.perf_counter() - started}
    facts = process.inspect()  # the same thread counts on every side (the defaults depend on the load at each load)
    settings = dataclasses.replace(settings, n_threads=facts["n_threads"], n_threads_batch=facts["n_threads_batch"])
    config = Config(llama=settings, sampling=sampling)
    extra = bool(process.info and process.info.extra_buffers)  # frogtui's choice here (setting, remembered, or the probe)
    started = time.perf_counter()
    inproc = LlamaCppModel.from_spec(args.model, config, report=quiet, extra_buffers=extra)
    ready["inproc"] = time.perf_counter() - started
    with extra_weight_buffers(extra):
        raw = llama_cpp.Llama(
            args.model, n_ctx=inproc.llm.n_ctx(), n_batch=settings.n_batch, n_ubatch=settings.n_batch, flash_attn=settings.flash_attn,
            type_k=KV_CACHE_TYPES[settings.cache_type_k], type_v=KV_CACHE_TYPES[settings.cache_type_v],
            n_threads=inproc.llm.n_threads, n_threads_batch=inproc.llm.n_threads_batch, seed=1, verbose=False,
        )
    loaded_with = {"process": extra, "inproc": bool(inproc.llm.model_params.use_extra_bufts), "raw": bool(raw.model_params.use_extra_bufts)}
    print("extra weight buffers: " + ", ".join(f"{n} {'on' if v else 'off'}" for n, v in loaded_with.items()))
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": TASK}]
    prompt = inproc.template.render(messages, TOOL_SCHEMAS, add_generation_prompt=True)
    speeds: dict[str, list[float]] = {"process": [], "inproc": [], "raw": []}
    counts: dict[str, list[int]] = {"process": [], "inproc": [], "raw": []}
    follow_ttft: dict[str, list[float]] = {"process": [], "inproc": []}
    for run in range(1, args.runs + 1):
        for name, model in (("process", process), ("inproc", inproc)):
            _, generated, speed, text = turn(model, messages, args.tokens)
            counts[name].append(generated)
            speeds[name].append(speed)
            follow = messages + [{"role": "assistant", "content": text}, {"role": "user", "content": f"Shorter, please ({run})."}]
            ttft, _, _, _ = turn(model, follow, 4)
            follow_ttft[name].append(ttft)
        generated, speed = raw_turn(raw, prompt, args.tokens, sampling)
        counts["raw"].append(generated)
        speeds["raw"].append(speed)
        print(f"run {run}: " + "   ".join(f"{n} {speeds[n][-1]:7.1f} tok/s ({counts[n][-1]})" for n in speeds)
              + "   follow-up first token: " + "  ".join(f"{n} {follow_ttft[n][-1] * 1000:.1f} ms" for n in follow_ttft))
    total = {n: weighted(counts[n], speeds[n]) for n in speeds}
    result = {
        **{f"{n}_tok_s": round(v, 2) for n, v in total.items()},
        "process_vs_raw": round(total["process"] / total["raw"], 3) if total["raw"] else None,
        "process_vs_inproc": round(total["process"] / total["inproc"], 3) if total["inproc"] else None,
        **{f"follow_up_ttft_ms_{n}": round(1000 * sorted(v)[len(v) // 2], 1) for n, v in follow_ttft.items()},
        **{f"ready_s_{n}": round(v, 3) for n, v in ready.items()},
        "threads": [settings.n_threads, settings.n_threads_batch],
        "extra_buffers": loaded_with,
    }
    print(json.dumps(result))
    process.close()
    inproc.close()
    raw.close()


if __name__ == "__main__":
    main()
