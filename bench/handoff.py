"""Drafting a hand-off from a 60,000-token conversation, without the model.

Usage: python bench/handoff.py [--tokens 60000] [--runs 5]

Builds a Leaf transcript of about ``--tokens`` tokens (4 characters a token: Read and Bash steps
whose observations are 40 lines each, a patch touching 50 files), then times ``draft_handoff`` on it
against ``json.dumps`` of the same messages (the floor: touching every message once). The last line
is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.agent.handoff import draft_handoff  # noqa: E402
from frogtui.agent.saved import Conversation  # noqa: E402


def transcript(tokens: int) -> tuple[list[dict], str]:
    messages: list[dict] = [{"role": "system", "content": "s"}, {"role": "user", "content": "Fix the failing tests."}]
    chars, step = 0, 0
    while chars < tokens * 4:
        step += 1
        tool, args = ("Read", {"file_path": f"src/mod{step % 50}.py"}) if step % 2 else ("Bash", {"command": "python -m pytest -q"})
        body = "".join(f"{i}. line {i} of some source file with text\n" for i in range(1, 41))
        observation = f"src/mod{step % 50}.py\n{body}" if tool == "Read" else f"Exit code: 1\nSTDOUT:\n{body}\nSTDERR:\n"
        messages.append({"role": "assistant", "content": "", "reasoning_content": "thinking " * 40,
                         "tool_calls": [{"id": f"c{step}", "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": observation})
        chars += len(observation) + 400
    patch = "".join(f"diff --git a/src/mod{i}.py b/src/mod{i}.py\n--- a/src/mod{i}.py\n+++ b/src/mod{i}.py\n@@ -1 +1 @@\n-a\n+b\n"
                    for i in range(50))
    return messages, patch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    messages, patch = transcript(args.tokens)
    drafts, dumps = [], []
    for _ in range(args.runs):
        started = time.perf_counter()
        text = draft_handoff(Conversation.read({"messages": messages}), patch=patch)  # read as a saved one, then drafted
        drafts.append(time.perf_counter() - started)
        started = time.perf_counter()
        json.dumps(messages)
        dumps.append(time.perf_counter() - started)
    result = {"tokens": args.tokens, "messages": len(messages), "handoff_chars": len(text),
              "draft_ms_median": round(statistics.median(drafts) * 1000, 2),
              "json_dumps_ms_median": round(statistics.median(dumps) * 1000, 2)}
    print(f"hand-off of a {args.tokens}-token conversation ({len(messages)} messages): "
          f"{result['draft_ms_median']} ms (json.dumps of the same: {result['json_dumps_ms_median']} ms)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
