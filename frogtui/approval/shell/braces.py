"""Bash brace expansion of an unquoted word, done before the analysis decides: ``{rm,-rf,/}`` is
``rm -rf /`` and ``rm -rf {.git,x}`` deletes ``.git``. Pure."""
from __future__ import annotations

import re


class TooManyWords(ValueError):
    """The expansion would make more words than the analyser looks at."""


MAXBRACE_WORDS = 256
BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")


def brace_expand(text: str) -> list[str]:
    """Bash brace expansion of an unquoted word: ``a{b,c}`` -> ``ab ac``; ``{1..3}`` -> ``1 2 3``."""
    depth, start = 0, -1
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                body, head, tail = text[start + 1 : i], text[:start], text[i + 1 :]
                choices = _split_top(body)
                if len(choices) < 2:
                    seq = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([a-zA-Z])\.\.([a-zA-Z])", body)
                    if not seq:
                        return [head + "{" + body + "}" + t for t in brace_expand(tail)]
                    if seq.group(4):
                        a, b = ord(seq.group(4)), ord(seq.group(5))
                        choices = [chr(c) for c in (range(a, b + 1) if a <= b else range(a, b - 1, -1))]
                    else:
                        a, b, step = int(seq.group(1)), int(seq.group(2)), abs(int(seq.group(3) or 1)) or 1
                        if abs(b - a) // step > MAXBRACE_WORDS:
                            raise TooManyWords(f"brace expansion makes more than {MAXBRACE_WORDS} words")
                        choices = [str(c) for c in (range(a, b + 1, step) if a <= b else range(a, b - 1, -step))]
                out: list[str] = []
                for choice in choices:
                    for rest in brace_expand(choice + tail):
                        out.append(head + rest)
                        if len(out) > MAXBRACE_WORDS:
                            raise TooManyWords(f"brace expansion makes more than {MAXBRACE_WORDS} words")
                return out
    return [text]


def _split_top(body: str) -> list[str]:
    parts, depth, last = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[last:i])
            last = i + 1
    return [*parts, body[last:]] if parts else [body]
