"""The parameters of one Qwen3.5 XML tool call, read by the tool's schema.

For Leaf's own parameters a value ends at ``</parameter>`` only when what follows is another
parameter of that tool (one not set yet) or ``</function>``, so a Write whose content holds
``</parameter>`` lines keeps them; an opening ``<parameter=NAME>`` of a known, not-yet-set parameter
inside a value that was never closed closes it (the model forgot ``</parameter>``). When the text can
be read as more than one call, or as none, it is an error the model sees: a call is never guessed.

A name the schema does not know is read the way vLLM, llama.cpp and SGLang read every name: a
``</parameter>`` followed by ``<parameter=NAME>`` of an unknown NAME always ends the value before it
(the model meant a parameter, and the call's error will name it), and the value of an unknown
name that was never closed ends at the next ``<parameter=...>`` or at ``</function>`` (for a tool
that is not Leaf's every name is unknown). Values of unknown names are trimmed (they are only ever
shown, in the error).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

OPEN = re.compile(r"<parameter=([^>\n]*)>")
CLOSE = "</parameter>"
END = "</function>"
MAX_READINGS = 2_000
"""How many partial readings the search may try before the call is called ambiguous."""


class CallError(ValueError):
    """Why the parameters cannot be read as exactly one call (the message is the observation)."""


def read_parameters(
    name: str, inner: str, known: Collection[str], required: Collection[str], *, tool_known: bool = True
) -> dict[str, str]:
    """The parameters of the call to ``name`` whose body (after ``<function=NAME>``) is ``inner``.

    Args:
        known: The tool's parameter names.
        required: The names a complete call has: when several readings exist and exactly one of
            them is complete, it is the call.
        tool_known: False for a tool that is not Leaf's: every name is then read the servers' way.

    Raises:
        CallError: No reading, or more than one.
    """
    body = inner
    end = body.rfind(END)
    if end >= 0 and not body[end + len(END) :].strip():
        body = body[:end]
    budget = [MAX_READINGS]
    names = _Names(frozenset(known), tool_known)
    readings = [r for r in _readings(body, _skip(body, 0), frozenset(), names, budget) if _plausible(r, known)]
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


@dataclass(frozen=True)
class _Names:
    """The parameter names of the tool being read."""

    known: frozenset[str]
    tool_known: bool

    def opens_new(self, name: str, key: str, used: frozenset[str]) -> bool:
        """Whether ``<parameter=name>`` after the value of ``key`` can start the next parameter."""
        return (name in self.known or self.unknown(key)) and name != key and name not in used

    def unknown(self, name: str) -> bool:
        return not self.tool_known or name not in self.known


def _readings(text: str, pos: int, used: frozenset[str], names: _Names, budget: list[int]) -> list[dict[str, str]]:
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
    for value_end, next_pos in _value_ends(text, start, key, used, names):
        value = text[start:value_end]
        if names.unknown(key):
            value = value.strip()
        else:
            value = value[1:] if value.startswith("\n") else value
            value = value[:-1] if value.endswith("\n") else value
        for rest in _readings(text, next_pos, used | {key}, names, budget):
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


def _value_ends(text: str, start: int, key: str, used: frozenset[str], names: _Names) -> list[tuple[int, int]]:
    """Where the value of ``key`` (from ``start``) may end: (end of the value, where the next
    parameter starts or the end of the text)."""
    ends: list[tuple[int, int]] = []
    n = start
    closed = False
    while True:
        close = text.find(CLOSE, n)
        opener = None if closed else _next_opener(text, n, key, used, names)
        if opener is not None and (close < 0 or opener < close):
            return [(opener, opener)]  # an unclosed value meets the next parameter: it ends there
        if close < 0:
            if not closed and names.unknown(key):
                return [(len(text), len(text))]  # the servers' reading: an unclosed value runs to </function>
            return ends
        after = _skip(text, close + len(CLOSE))
        follower = OPEN.match(text, after)
        if after >= len(text):
            ends.append((close, after))
        elif follower is not None and names.unknown(follower.group(1).strip()):
            ends.append((close, after))
            return ends  # an unknown name after </parameter> is a parameter the model meant: the value ends here
        elif follower is not None and names.opens_new(follower.group(1).strip(), key, used):
            ends.append((close, after))
        closed = True
        n = close + len(CLOSE)


def _next_opener(text: str, n: int, key: str, used: frozenset[str], names: _Names) -> int | None:
    for match in OPEN.finditer(text, n):
        if names.opens_new(match.group(1).strip(), key, used):
            return match.start()
    return None
