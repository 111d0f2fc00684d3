"""The conversation as the tokens a local model actually evaluated and sampled (append-only).

The agent loop passes the whole message list at every step. ``Transcript`` remembers how many
messages its tokens already stand for (and a digest of each), so the backend can tell which
messages are new and append only their tokens. The assistant turn the model generated is kept as
the sampled tokens, never re-tokenized: re-rendering would change whitespace or drop ``<think>``
blocks, and any divergence forces a hybrid model to re-evaluate everything.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


def message_digest(message: dict[str, Any]) -> str:
    """A stable digest of one message (used to notice a rewritten history)."""
    return hashlib.sha1(json.dumps(message, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


@dataclass
class Transcript:
    """Token bookkeeping of one conversation.

    Attributes:
        tokens: prompt and generated tokens, in order; ``tokens[:evaluated]`` are in the model's cache.
        evaluated: how many tokens the model has evaluated (its cache holds exactly those).
        consumed: how many messages ``tokens`` stand for (the last is followed by a generation prompt).
        digests: digest of each consumed message.
        tools_digest: digest of the tool schemas rendered into the system turn.
        open_turn: the tokens end with an assistant turn this backend opened (and maybe generated),
            so the next message list's message number ``consumed`` is that turn.
        boundaries: token positions just after each user message (where checkpoints are saved).
    """

    tokens: list[int] = field(default_factory=list)
    evaluated: int = 0
    consumed: int = 0
    digests: list[str] = field(default_factory=list)
    tools_digest: str = ""
    open_turn: bool = False
    boundaries: list[int] = field(default_factory=list)

    def new_messages(self, messages: list[dict[str, Any]], tools_digest: str) -> list[dict[str, Any]] | None:
        """The messages that follow the assistant turn this transcript ends with.

        Returns:
            The new messages (tool results and/or a user message), or None when the history does
            not extend this transcript (a new conversation, edited history, other tools): then the
            whole conversation must be rendered again.
        """
        if not self.open_turn or self.consumed == 0 or tools_digest != self.tools_digest:
            return None
        if len(messages) <= self.consumed + 1 or messages[self.consumed].get("role") != "assistant":
            return None
        if any(message_digest(m) != d for m, d in zip(messages, self.digests, strict=False)):
            return None
        new = messages[self.consumed + 1:]
        if any(m.get("role") not in ("tool", "user") for m in new):
            return None
        return new

    def commit(self, messages: list[dict[str, Any]], tokens: list[int], *, boundary: int | None, tools_digest: str) -> None:
        """Record that ``tokens`` now stand for ``messages`` plus a generation prompt."""
        start = self.consumed
        self.digests = self.digests[:start] + [message_digest(m) for m in messages[start:]]
        self.consumed = len(messages)
        self.tokens = tokens
        self.tools_digest = tools_digest
        self.open_turn = True
        if boundary is not None:
            self.boundaries.append(boundary)

    def reset_history(self) -> None:
        """Forget which messages the tokens stand for (the tokens and cache stay for prefix reuse)."""
        self.consumed = 0
        self.digests = []
        self.open_turn = False
        self.boundaries = []


def transcript_dict(t: Transcript) -> dict[str, Any]:
    """``t`` as plain data (saved beside the model's state: ``models/saved_state.py``)."""
    return {"tokens": list(t.tokens), "evaluated": t.evaluated, "consumed": t.consumed, "digests": list(t.digests),
            "tools_digest": t.tools_digest, "open_turn": t.open_turn, "boundaries": list(t.boundaries)}


def transcript_from(data: dict[str, Any]) -> Transcript:
    """The transcript ``transcript_dict`` wrote.

    Raises:
        ValueError: the data is not such a transcript (a damaged file).
    """
    try:
        t = Transcript(
            tokens=[int(x) for x in data["tokens"]], evaluated=int(data["evaluated"]), consumed=int(data["consumed"]),
            digests=[str(d) for d in data["digests"]], tools_digest=str(data["tools_digest"]), open_turn=bool(data["open_turn"]),
            boundaries=[int(b) for b in data["boundaries"]],
        )
    except (KeyError, TypeError) as err:
        raise ValueError(f"not a saved transcript: {err}") from None
    if not 0 < t.evaluated <= len(t.tokens) or t.consumed != len(t.digests):
        raise ValueError("not a saved transcript: its counts disagree")
    return t
