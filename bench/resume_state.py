"""Resume without re-reading: a resumed session's first turn with the model's saved state
against the same turn re-evaluating the whole conversation (issue 34, item 5).

Usage: python bench/resume_state.py MODEL.gguf [--turns 8] [--obs-lines 40] [--n-ctx 16384]

Builds a session of ``--turns`` turns through frogtui's backend in its own process
(``LocalModel``, generating 16 tokens a turn; each follow-up carries a Read-sized observation),
once saving the state after each turn in a session folder (``keep_state``) and once without:
the difference is what saving costs per turn. Then a fresh process resumes it with one more
message, twice: without the saved state (everything evaluated again, as before) and with it.
Prints the tokens evaluated and the seconds to the first new token of each; the last line is one
JSON object.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.config import Config, LlamaSettings, Sampling  # noqa: E402
from frogtui.models.local import LocalModel  # noqa: E402
from frogtui.protocol import TurnEnd  # noqa: E402
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS  # noqa: E402


def observation(turn: int, lines: int) -> str:
    body = "\n".join(f"{i:>6}\tdef handler_{turn}_{i}(request, *, retries=3):  return dispatch(request, {i})" for i in range(1, lines + 1))
    return f"Here is src/service/module_{turn}.py; what should change?\n{body}"


def turn(model: LocalModel, messages: list[dict[str, Any]]) -> tuple[str, TurnEnd, float]:
    started = time.perf_counter()
    items = list(model.stream_turn(messages, TOOL_SCHEMAS, max_tokens=16, cancel=threading.Event()))
    end = items[-1]
    assert isinstance(end, TurnEnd)
    return "".join(x for x in items if isinstance(x, str)), end, time.perf_counter() - started


def session(model: LocalModel, turns: int, lines: int) -> tuple[list[dict[str, Any]], float]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": "The test suite fails in src/service; find the bug."}]
    seconds = 0.0
    for number in range(1, turns + 1):
        text, _end, took = turn(model, messages)
        seconds += took
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": observation(number, lines)}]
    return messages, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--obs-lines", type=int, default=40)
    parser.add_argument("--n-ctx", type=int, default=16384)
    args = parser.parse_args()
    config = Config(llama=LlamaSettings(n_ctx=args.n_ctx), sampling=Sampling(seed=1))
    say: list[str] = []

    def load() -> LocalModel:
        return LocalModel.from_spec(args.model, config, report=say.append)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model-state"
        plain = load()
        _messages, without_saving = session(plain, args.turns, args.obs_lines)
        plain.close()
        saving = load()
        saving.keep_state(folder)
        messages, with_saving = session(saving, args.turns, args.obs_lines)
        saving.close()
        saved = sorted(folder.glob("*.state"))
        state_mb = saved[-1].stat().st_size / 1e6 if saved else 0.0
        resumed = messages  # ends with a new user message: the follow-up sent on resume
        results = {}
        for label, keep in (("reread", False), ("saved_state", True)):
            model = load()
            if keep:
                model.keep_state(folder)
            _text, end, took = turn(model, resumed)
            model.close()
            results[label] = {"prompt_tokens": end.usage.prompt_tokens, "evaluated_tokens": end.usage.evaluated_tokens,
                              "ttft_s": round(end.usage.ttft_s or 0.0, 3), "turn_s": round(took, 3)}
            print(f"{label:>12}: {end.usage.evaluated_tokens:>6} of {end.usage.prompt_tokens} tokens evaluated, "
                  f"first new token after {end.usage.ttft_s or 0:.3f} s")
    per_turn = (with_saving - without_saving) / args.turns
    print(f"saving the state: {per_turn * 1000:+.1f} ms a turn; the newest state file {state_mb:.1f} MB; {len(saved)} kept")
    print(json.dumps({"model": Path(args.model).name, "turns": args.turns, "save_ms_per_turn": round(per_turn * 1000, 1),
                      "state_mb": round(state_mb, 2), **results}))


if __name__ == "__main__":
    main()
