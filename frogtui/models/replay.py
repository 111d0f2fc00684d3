"""The replay model: plays back recorded model turns from a JSONL file.

Each line is ``{"content": "<raw text exactly as the model emitted it>"}`` (optionally with
``"finish_reason": "length"``). The text goes through the same streaming parser as a live model.
When the file runs out the model answers with an empty turn, so the run ends with ``agent``.
It is a user feature (reproduce a run, demo, bug report) and the test double.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from frogtui.errors import ModelLoadError
from frogtui.protocol import ModelItem, TurnEnd, Usage

_PIECE = re.compile(r"\s+|[^\s<]+|<")


class ReplayModel:
    """Replays recorded turns.

    Args:
        path: the JSONL file.
        piece_delay: seconds to sleep between streamed pieces (demo pacing; 0 in tests).
    """

    opens_reasoning = True
    context_size: int | None = None

    def __init__(self, path: str | Path, piece_delay: float = 0.0) -> None:
        self.path = Path(path)
        self.name = f"replay:{self.path.name}"
        self.piece_delay = piece_delay
        self.turns = load_replay(self.path)
        self.position = 0

    def stream_turn(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[ModelItem]:
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        if self.position >= len(self.turns):
            yield TurnEnd("stop", Usage(prompt_tokens=prompt_chars // 4, evaluated_tokens=prompt_chars // 4))
            return
        turn = self.turns[self.position]
        self.position += 1
        generated = 0
        for piece in _PIECE.findall(turn["content"]):
            if cancel.is_set():
                yield TurnEnd("cancelled", Usage(prompt_tokens=prompt_chars // 4, generated_tokens=generated))
                return
            if generated >= max_tokens:
                yield TurnEnd("length", Usage(prompt_tokens=prompt_chars // 4, generated_tokens=generated))
                return
            generated += 1
            if self.piece_delay:
                cancel.wait(self.piece_delay)
            yield piece
        finish = turn.get("finish_reason", "stop")
        yield TurnEnd(
            "length" if finish == "length" else "stop",
            Usage(prompt_tokens=prompt_chars // 4, evaluated_tokens=prompt_chars // 4, generated_tokens=generated),
        )

    def close(self) -> None:
        pass


def load_replay(path: Path) -> list[dict[str, Any]]:
    """Read and check a replay file.

    Raises:
        ModelLoadError: unreadable file, invalid JSON, or a line without a string ``content``.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ModelLoadError(f"cannot read replay file {path}: {getattr(err, 'strerror', None) or err}") from None
    turns = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            raise ModelLoadError(f"replay file {path}, line {number}: not valid JSON ({err.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("content"), str):
            raise ModelLoadError(f'replay file {path}, line {number}: expected {{"content": "<raw model text>"}}')
        turns.append(obj)
    return turns


def recorded_call(name: str, **params: object) -> str:
    """One tool call as FrogNano writes it (Qwen3.5's XML form), for a recorded turn."""
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def recorded_turn(reasoning: str, *calls: str, answer: str = "") -> str:
    """One recorded assistant turn: the reasoning, the answer, then the calls (``recorded_call``)."""
    return f"{reasoning}\n</think>\n\n{answer}" + ("\n\n" if answer and calls else "") + "\n".join(calls)
