"""Prefix reuse across agent steps: frogtui's backend against llama-cpp-python's create_chat_completion.

Usage: python bench/prefix_reuse.py MODEL.gguf [--steps 20] [--n-ctx 65536] [--obs-lines 20]

Drives ``--steps`` agent steps through frogtui's llama.cpp backend in its own process
(``LocalModel``, as frogtui runs it; assistant turns fed as if generated, Read observations of
realistic size), then a follow-up user message, and prints per step
the tokens the new messages added and the tokens evaluated. The same message sequence goes through
``Llama.create_chat_completion`` (max_tokens=1) on a second instance of the model in the same run;
its evaluated tokens are read from llama.cpp's perf counters. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import llama_cpp  # noqa: E402

from frogtui.config import Config, LlamaSettings, Sampling  # noqa: E402
from frogtui.models.llama_cpp import extra_weight_buffers  # noqa: E402
from frogtui.models.local import LocalModel  # noqa: E402
from frogtui.models.prompt import ChatTemplate, template_messages  # noqa: E402
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS  # noqa: E402


def observation(step: int, lines: int) -> str:
    body = "\n".join(f"{i}. def handler_{step}_{i}(request, *, retries=3):  return dispatch(request, {i})" for i in range(1, lines + 1))
    return f"src/service/module_{step}.py\n{body}"


def assistant(step: int) -> dict[str, Any]:
    args = (
        {"file_path": f"src/service/module_{step}.py"}
        if step % 3
        else {"command": f"python -m pytest -q tests/test_{step}.py", "description": "run the tests"}
    )
    return {
        "role": "assistant",
        "content": "",
        "reasoning_content": f"Step {step}: the failure points at module {step}; I will inspect it before editing anything.",
        "tool_calls": [
            {
                "id": f"call_{step}_1",
                "type": "function",
                "function": {"name": "Read" if step % 3 else "Bash", "arguments": json.dumps(args)},
            }
        ],
    }


def as_generated(template: ChatTemplate, messages: list[dict[str, Any]], message: dict[str, Any]) -> str:
    before = template.render(messages, TOOL_SCHEMAS, add_generation_prompt=True)
    after = template.render(messages + [message], TOOL_SCHEMAS, add_generation_prompt=False)
    return after[len(before) :].rstrip("\n")


def naive_evaluated(llm: llama_cpp.Llama, messages: list[dict[str, Any]]) -> int:
    before = llama_cpp.llama_perf_context(llm.ctx)
    llm.create_chat_completion(messages=template_messages(messages), tools=TOOL_SCHEMAS, max_tokens=1, temperature=0.0)
    after = llama_cpp.llama_perf_context(llm.ctx)
    return (after.n_p_eval + after.n_eval) - (before.n_p_eval + before.n_eval)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--n-ctx", type=int, default=65536)
    parser.add_argument("--obs-lines", type=int, default=20)
    args = parser.parse_args()
    config = Config(llama=LlamaSettings(n_ctx=args.n_ctx), sampling=Sampling(seed=1))
    model = LocalModel.from_spec(args.model, config, report=lambda line: print(line, file=sys.stderr))
    n_ctx = model.context_size or args.n_ctx
    with extra_weight_buffers(bool(model.info and model.info.extra_buffers)):  # frogtui's choice for this CPU (AMX: off)
        naive = llama_cpp.Llama(args.model, n_ctx=n_ctx, n_batch=config.llama.n_batch, flash_attn=True, verbose=False)
    template = ChatTemplate(str(naive.metadata["tokenizer.chat_template"]), eos_token="<|im_end|>")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "The test suite fails in src/service; find the bug and fix it."},
    ]
    totals = {"steps": 0, "added_tokens": 0, "evaluated_tokens": 0, "naive_evaluated_tokens": 0}
    end = 0
    print(f"{'step':>5} {'added':>7} {'evaluated':>10} {'naive':>7}")

    def one(label: str, message: dict[str, Any]) -> tuple[int, int, int]:
        nonlocal end
        usage = model.feed_assistant_turn(messages, TOOL_SCHEMAS, as_generated(template, messages, message))
        added = usage.prompt_tokens - end
        end = usage.prompt_tokens + usage.generated_tokens
        naive_eval = naive_evaluated(naive, messages)
        print(f"{label:>5} {added:>7} {usage.evaluated_tokens:>10} {naive_eval:>7}")
        return added, usage.evaluated_tokens, naive_eval

    for step in range(1, args.steps + 1):
        message = assistant(step)
        added, evaluated, naive_eval = one(str(step), message)
        totals["steps"] += 1
        totals["added_tokens"] += added
        totals["evaluated_tokens"] += evaluated
        totals["naive_evaluated_tokens"] += naive_eval
        messages.append(message)
        messages.append({"role": "tool", "tool_call_id": f"call_{step}_1", "content": observation(step, args.obs_lines)})
    final = {"role": "assistant", "content": "Fixed: dispatch() now retries.", "reasoning_content": "The tests pass now."}
    added, evaluated, naive_eval = one("final", final)
    totals["naive_evaluated_tokens"] += naive_eval
    messages += [final, {"role": "user", "content": "Thanks. Please also add a regression test for the retry."}]
    added, evaluated, naive_eval = one("follow", {"role": "assistant", "content": "ok"})
    totals.update(followup_added_tokens=added, followup_evaluated_tokens=evaluated, naive_followup_evaluated_tokens=naive_eval)
    totals["naive_evaluated_tokens"] += naive_eval
    print(json.dumps(totals))
    model.close()
    naive.close()


if __name__ == "__main__":
    main()
