"""Token-level text handling that needs no llama.cpp: incremental detokenizing and tokenizing
template output so that control-token text inside messages stays text."""
from __future__ import annotations

import codecs
import re
from collections.abc import Callable

Tokenize = Callable[[str, bool], list[int]]
"""``tokenize(text, special)``: the model's tokenizer; ``special`` parses control-token text."""


class TokenTextDecoder:
    """Turns sampled tokens into text incrementally: a character whose UTF-8 bytes are split across
    tokens comes out whole, once its last byte arrives.

    Args:
        piece: returns the bytes of one token.
    """

    def __init__(self, piece: Callable[[int], bytes]) -> None:
        self.piece = piece
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, token: int) -> str:
        return self._decoder.decode(self.piece(token))

    def flush(self) -> str:
        """Whatever is left (an incomplete character becomes U+FFFD)."""
        return self._decoder.decode(b"", final=True)

    def decode_tokens(self, tokens: list[int]) -> list[str]:
        """The pieces ``feed`` gives for each token in turn (for tests and tools)."""
        return [self.feed(t) for t in tokens] + [self.flush()]


def tokenize_keeping_text(
    text: str, literal: tuple[tuple[int, int], ...] | None, control_texts: tuple[str, ...], tokenize: Tokenize
) -> list[int]:
    """Tokenize template output; control-token text inside ``literal`` spans stays text.

    The template's own ``<|im_start|>``/``<|im_end|>`` become control tokens, but the same
    characters inside a message (a file the model read, the user's text) must not: they would end
    the turn early in the model's eyes (prompt injection) and desynchronise the transcript.
    ``literal`` None means the spans are unknown; the text is then tokenized as is.
    """
    if not text:
        return []
    if not literal or not any(c in text[a:b] for a, b in literal for c in control_texts):
        return tokenize(text, True)
    return split_at_control_tokens(text, literal, control_texts, tokenize)


def split_at_control_tokens(
    text: str, literal: tuple[tuple[int, int], ...], control_texts: tuple[str, ...], tokenize: Tokenize
) -> list[int]:
    """llama.cpp's own scheme (split at control tokens, tokenize the pieces between as plain text),
    but splitting only at control tokens outside the ``literal`` spans."""
    pattern = re.compile("|".join(re.escape(c) for c in control_texts))
    tokens: list[int] = []
    start = 0
    for match in pattern.finditer(text):
        if any(a < match.end() and match.start() < b for a, b in literal):
            continue
        if start < match.start():
            tokens += tokenize(text[start:match.start()], False)
        tokens += tokenize(match.group(), True)
        start = match.end()
    if start < len(text):
        tokens += tokenize(text[start:], False)
    return tokens
