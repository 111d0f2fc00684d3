"""Helpers for tests: real git commands, replay files, raw model turns."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def write_replay(path: Path, turns: list[str]) -> Path:
    """Write a replay JSONL file with one ``{"content": ...}`` object per turn."""
    path.write_text("".join(json.dumps({"content": t}) + "\n" for t in turns), encoding="utf-8")
    return path


def xml_call(name: str, **params: object) -> str:
    """One tool call in the Qwen3.5 XML format, as the model writes it."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def turn(reasoning: str, *calls: str, answer: str = "") -> str:
    """A raw assistant turn: reasoning closed by </think>, an optional answer, then calls."""
    text = f"{reasoning}\n</think>\n\n{answer}"
    if calls:
        text += ("\n\n" if answer else "") + "\n".join(calls)
    return text


class SlowModel:
    """Streams a good message one piece at a time, waiting ``delay`` between pieces (a slow CPU)."""

    name = "slow"
    context_size = None
    opens_reasoning = False

    def __init__(self, pieces: list[str], delay: float) -> None:
        self.pieces, self.delay, self.turns = pieces, delay, 0

    def stream_turn(self, messages, tools, *, max_tokens, cancel):
        from frogtui.protocol import TurnEnd, Usage

        self.turns += 1
        for piece in self.pieces:
            if cancel.wait(self.delay):
                yield TurnEnd("cancelled", Usage())
                return
            yield piece
        yield TurnEnd("stop", Usage(generated_tokens=len(self.pieces)))

    def close(self) -> None:
        pass


def running(marker: str) -> bool:
    """Whether a process whose command line holds ``marker`` is running (one that ends while its
    ``/proc`` entry is read is not: ProcessLookupError, and the like, are skipped)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False
