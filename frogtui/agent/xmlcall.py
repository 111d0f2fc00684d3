"""The parameters of one Qwen3.5 XML tool call, read by the tool's schema.

A value ends at ``</parameter>`` only when what follows is another parameter of that tool (one not
set yet) or ``</function>``, so a Write whose content holds ``</parameter>`` lines keeps them; an
opening ``<parameter=NAME>`` of a known, not-yet-set parameter inside a value that was never closed
closes it (the model forgot ``</parameter>``). When the text can be read as more than one call, or
as none, it is an error the model sees: a call is never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Collection

OPEN = re.compile(r"<parameter=([^>\n]*)>")
CLOSE = "</parameter>"
END = "</function>"
MAX_READINGS = 2_000
"""How many partial readings the search may try before the call is called ambiguous."""


class CallError(ValueError):
    """Why the parameters cannot be read as exactly one call (the message is the observation)."""


def read_parameters(name: str, inner: str, known: Collection[str], required: Collection[str]) -> dict[str, str]:
    """The parameters of the call to ``name`` whose body (after ``<function=NAME>``) is ``inner``.

    Args:
        known: The tool's parameter names (only these end a value).
        required: The names a complete call has: when several readings exist and exactly one of
            them is complete, it is the call.

    Raises:
        CallError: No reading, or more than one.
    """
    body = inner
    end = body.rfind(END)
    if end >= 0 and not body[end + len(END) :].strip():
        body = body[:end]
    budget = [MAX_READINGS]
    readings = [r for r in _readings(body, _skip(body, 0), frozenset(), frozenset(known), budget) if _plausible(r, known)]
    if budget[0] <= 0:
        raise CallError(f"ValueError: the parameters of {name} cannot be read unambiguously (too many ways to read them)")
    if not readings:
        if OPEN.search(body) and CLOSE not in body[OPEN.search(body).end() :]:  # type: ignore[union-attr]
            raise CallError(f"ValueError: a parameter of {name} is not closed with </parameter>")
        raise CallError(f"ValueError: the parameters of {name} cannot be read: expected <parameter=NAME>VALUE</parameter>")
    complete = [r for r in readings if set(required) <= set(r)]
    if len(readings) == 1:
        return readings[0]
    if len(complete) == 1:
        return complete[0]
    raise CallError(
        f"ValueError: the parameters of {name} can be read in more than one way (a value contains </parameter> followed by "
        "<parameter=...>); nothing was run"
    )


def _skip(text: str, n: int) -> int:
    while n < len(text) and text[n].isspace():
        n += 1
    return n


def _readings(text: str, pos: int, used: frozenset[str], known: frozenset[str], budget: list[int]) -> list[dict[str, str]]:
    """Every reading of ``text[pos:]`` as parameters (stops early past two: that is ambiguous)."""
    budget[0] -= 1
    if budget[0] <= 0:
        return []
    if pos >= len(text):
        return [{}]
    opener = OPEN.match(text, pos)
    if opener is None:
        return []
    key = opener.group(1).strip()
    if key in used:
        return []
    start = opener.end()
    out: list[dict[str, str]] = []
    for value_end, next_pos in _value_ends(text, start, key, used, known):
        value = text[start:value_end]
        value = value[1:] if value.startswith("\n") else value
        value = value[:-1] if value.endswith("\n") else value
        for rest in _readings(text, next_pos, used | {key}, known, budget):
            out.append({key: value, **rest})
            if budget[0] <= 0:
                return out
    return out


_SWALLOWED = re.compile(re.escape(CLOSE) + r"\s*<parameter=([^>\n]*)>")


def _plausible(reading: dict[str, str], known: Collection[str]) -> bool:
    """False when a value holds ``</parameter><parameter=K>`` for a parameter K of the tool that
    the reading never sets: the model wrote K, and this reading would lose it."""
    for key, value in reading.items():
        for match in _SWALLOWED.finditer(value):
            name = match.group(1).strip()
            if name in known and name != key and name not in reading:
                return False
    return True


def _value_ends(text: str, start: int, key: str, used: frozenset[str], known: frozenset[str]) -> list[tuple[int, int]]:
    """Where the value of ``key`` (from ``start``) may end: (end of the value, where the next
    parameter starts or the end of the text)."""
    ends: list[tuple[int, int]] = []
    n = start
    closed = False
    while True:
        close = text.find(CLOSE, n)
        opener = _next_known_opener(text, n, key, used, known)
        if opener is not None and not closed and (close < 0 or opener < close):
            return [(opener, opener)]  # an unclosed value meets the next parameter: it ends there
        if close < 0:
            return ends
        after = _skip(text, close + len(CLOSE))
        if after >= len(text):
            ends.append((close, after))
        else:
            follower = OPEN.match(text, after)
            if follower is not None and _opens_new(follower.group(1).strip(), key, used, known):
                ends.append((close, after))
        closed = True
        n = close + len(CLOSE)


def _next_known_opener(text: str, n: int, key: str, used: frozenset[str], known: frozenset[str]) -> int | None:
    for match in OPEN.finditer(text, n):
        if _opens_new(match.group(1).strip(), key, used, known):
            return match.start()
    return None


def _opens_new(name: str, key: str, used: frozenset[str], known: frozenset[str]) -> bool:
    return name in known and name != key and name not in used
