"""Streaming parser for raw model text: reasoning, answer and tool calls, token by token.

Accepts the Qwen3.5 XML call format::

    <tool_call>
    <function=Read>
    <parameter=file_path>
    src/app.py
    </parameter>
    </function>
    </tool_call>

and the JSON-in-tags format of other Qwen-family templates
(``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``). Text inside ``<think>…</think>`` is
reasoning, calls written there included: like the inference servers FrogNano was trained behind,
they are shown with the reasoning and never run. ``</tool_call>`` ends a call only when the call
reads as closed (``call_ends``): a call written inside a parameter value (a Write of a document that
shows one) is content, never a call, and any other ``<tool_call>`` in a value is text; when the turn
ends with a call still open, ``finish`` reads it again (a call shown in a value that never closed
was text after all). Parameter values are read by the tool's schema
(``xmlcall``): what cannot be read as exactly one call is an error the model sees. A call is
complete the moment its ``</tool_call>`` arrives; any split of the same text into pieces gives the
same reasoning, answer and calls.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from frogtui.agent.xmlcall import CallError, read_parameters
from frogtui.protocol import ToolCall
from frogtui.tools.schemas import SCHEMAS_BY_NAME, convert_arguments

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"


@dataclass(frozen=True)
class TextPiece:
    kind: Literal["reasoning", "answer"]
    text: str


Parsed = TextPiece | ToolCall

_TAGS = {
    "reasoning": (THINK_CLOSE,),  # a call written while reasoning is reasoning: shown, never run
    "answer": (THINK_OPEN, CALL_OPEN),
    "call": (CALL_CLOSE,),
}
_FUNCTION = re.compile(r"<function=([^>\n]*)>\n?(.*)\Z", re.DOTALL)


class StreamParser:
    """Feed it raw text as it is generated; it returns what became certain.

    Args:
        opens_reasoning: the prompt already opened ``<think>``, so text is reasoning until ``</think>``.
        step: step number used in generated call ids (``call_<step>_<n>``).
    """

    def __init__(self, *, opens_reasoning: bool = True, step: int = 1) -> None:
        self.state: Literal["reasoning", "answer", "call"] = "reasoning" if opens_reasoning else "answer"
        self._text_state: Literal["reasoning", "answer"] = self.state  # type: ignore[assignment]
        self.step = step
        self.pending = ""
        self.call_body = ""
        self.reasoning = ""
        self.answer = ""
        self.calls: list[ToolCall] = []
        self._at_start = opens_reasoning
        self.saw_think_close = False

    # public API -----------------------------------------------------------------
    def feed(self, text: str) -> list[Parsed]:
        self.pending += text
        out: list[Parsed] = []
        while self._step(out, final=False):
            pass
        return out

    def finish(self) -> list[Parsed]:
        """Flush at the end of the turn. A call still open is read again: when a call written inside
        one of its values was never closed, that ``<tool_call>`` was text, and the call ends at the
        first ``</tool_call>`` where it reads as a whole, valid call (the text after it is read
        again too); otherwise it becomes a call with an error."""
        out: list[Parsed] = []
        while self._step(out, final=True):
            pass
        while self.state == "call":
            body, self.call_body = self.call_body, ""
            self.state = self._text_state
            end = _first_valid_end(body)
            if end is None:
                out.append(self._make_call(CALL_OPEN + body, None, "ValueError: the tool call was cut off before </tool_call>"))
                break
            out.append(self._parse_call(body[:end], CALL_OPEN + body[: end + len(CALL_CLOSE)]))
            self.pending = body[end + len(CALL_CLOSE) :]
            while self._step(out, final=True):
                pass
        return out

    @property
    def final_answer(self) -> str:
        """The answer text, or the reasoning when the model never closed ``</think>``."""
        answer = self.answer.strip()
        if not answer and not self.saw_think_close and not self.calls:
            return self.reasoning.strip()
        return answer

    # machinery --------------------------------------------------------------------
    def _step(self, out: list[Parsed], final: bool) -> bool:
        if not self.pending:
            return False
        if self._at_start and self.state == "reasoning":
            stripped = self.pending.lstrip()
            if not stripped:
                return False if not final else self._drop_pending()
            if THINK_OPEN.startswith(stripped) and not final and len(stripped) < len(THINK_OPEN):
                return False  # wait: might be an explicit <think>
            if stripped.startswith(THINK_OPEN):
                self.pending = stripped[len(THINK_OPEN):]
            self._at_start = False
        tags = _TAGS[self.state]
        hit, tag = _earliest(self.pending, tags)
        if hit < 0:
            keep = 0 if final else _partial_suffix(self.pending, tags)
            chunk, self.pending = self.pending[: len(self.pending) - keep], self.pending[len(self.pending) - keep:]
            self._consume(chunk, out)
            return False
        before, self.pending = self.pending[:hit], self.pending[hit + len(tag):]
        self._consume(before, out)
        if tag == CALL_OPEN:
            self._text_state = self.state  # type: ignore[assignment]
            self.state = "call"
            self.call_body = ""
        elif tag == CALL_CLOSE and not call_ends(self.call_body):
            self.call_body += CALL_CLOSE  # written inside a parameter value: content, not the end of the call
        elif tag == CALL_CLOSE:
            raw = CALL_OPEN + self.call_body + CALL_CLOSE
            self.state = self._text_state
            out.append(self._parse_call(self.call_body, raw))
            self.call_body = ""
        elif tag == THINK_CLOSE:
            self.state = "answer"
            self.saw_think_close = True
        elif tag == THINK_OPEN:
            self.state = "reasoning"
        return True

    def _drop_pending(self) -> bool:
        self.pending = ""
        return False

    def _consume(self, chunk: str, out: list[Parsed]) -> None:
        if not chunk:
            return
        if self.state == "call":
            self.call_body += chunk
            return
        if self.state == "reasoning":
            if not self.reasoning:
                chunk = chunk.lstrip()
            if chunk:
                self.reasoning += chunk
                out.append(TextPiece("reasoning", chunk))
        else:
            if not self.answer:
                chunk = chunk.lstrip()
            if chunk:
                self.answer += chunk
                out.append(TextPiece("answer", chunk))

    def _make_call(self, raw: str, name: str | None, error: str | None, arguments: dict | None = None) -> ToolCall:
        call = ToolCall(
            id=f"call_{self.step}_{len(self.calls) + 1}",
            name=name or "",
            arguments=arguments or {},
            raw=raw,
            error=error,
        )
        self.calls.append(call)
        return call

    def _parse_call(self, body: str, raw: str) -> ToolCall:
        name, arguments, error = parse_call_body(body)
        if error is None and name is not None:
            arguments, error = convert_arguments(name, arguments)
        return self._make_call(raw, name, error, arguments)


def parse_call_body(body: str) -> tuple[str | None, dict, str | None]:
    """Parse the text between ``<tool_call>`` and ``</tool_call>``: (name, raw arguments, error)."""
    text = body.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            return None, {}, f"ValueError: the tool call is not valid JSON ({err.msg} at char {err.pos})"
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            return None, {}, 'ValueError: a JSON tool call needs {"name": ..., "arguments": {...}}'
        args = obj.get("arguments", obj.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError as err:
                return obj["name"], {}, f"ValueError: the arguments of {obj['name']} are not valid JSON ({err.msg})"
        if not isinstance(args, dict):
            return obj["name"], {}, f"ValueError: the arguments of {obj['name']} must be an object"
        return obj["name"], args, None
    match = _FUNCTION.match(text)
    if not match:
        return None, {}, "ValueError: could not parse the tool call: expected <function=NAME> or a JSON object"
    name = match.group(1).strip()
    schema = SCHEMAS_BY_NAME.get(name)
    try:
        args = read_parameters(
            name, match.group(2), (schema or {}).get("properties", {}), (schema or {}).get("required", ()), tool_known=schema is not None
        )
    except CallError as err:
        return name, {}, None if schema is None else str(err)  # an unknown tool's error is that it is unknown
    return name, args, None


_CALL_TAGS = re.compile(re.escape(CALL_OPEN) + "|" + re.escape(CALL_CLOSE))
_CALL_START = re.compile(r"\s*(?:<function=|\{)")


def call_ends(body: str) -> bool:
    """Whether a ``</tool_call>`` right after ``body`` ends the call: not while a call written
    inside the body is still open (a Write of a document that shows a call), nor while a parameter
    value is open (``</tool_call>`` is then part of the value)."""
    depth = 0
    for tag in _CALL_TAGS.finditer(body):
        if tag.group() == CALL_CLOSE:
            depth = max(depth - 1, 0)
        elif _writes_a_call(body, tag.start(), tag.end()):
            depth += 1
    return not depth and _reads_closed(body.strip())


def _reads_closed(text: str) -> bool:
    """Whether the call text ``text`` is closed: no parameter value or JSON string left open."""
    if text.startswith("{"):
        try:
            json.loads(text)
        except json.JSONDecodeError as err:
            return not err.msg.startswith("Unterminated string")
        return True
    return "<parameter=" not in text or text.endswith(("</function>", "</parameter>"))


def _first_valid_end(body: str) -> int | None:
    """Where in ``body`` (a call never closed by the end of the turn) the first ``</tool_call>``
    is after which the call reads as a whole call that converts without error; None when none."""
    for close in re.finditer(re.escape(CALL_CLOSE), body):
        prefix = body[: close.start()]
        if not _reads_closed(prefix.strip()):
            continue
        name, arguments, error = parse_call_body(prefix)
        if error is None and name is not None and convert_arguments(name, arguments)[1] is None:
            return close.start()
    return None


def _writes_a_call(body: str, start: int, end: int) -> bool:
    """Whether the ``<tool_call>`` at ``body[start:end]`` starts a call written inside the body: it
    begins a line and a function or a JSON object follows. Anywhere else (``"<tool_call>"`` in
    code, a mention in prose) it is text and leaves the end of the call alone."""
    line = body.rfind("\n", 0, start)
    return line >= 0 and not body[line + 1 : start].strip() and _CALL_START.match(body, end) is not None


def _earliest(text: str, tags: tuple[str, ...]) -> tuple[int, str]:
    best, best_tag = -1, ""
    for tag in tags:
        i = text.find(tag)
        if i >= 0 and (best < 0 or i < best):
            best, best_tag = i, tag
    return best, best_tag


def _partial_suffix(text: str, tags: tuple[str, ...]) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of a tag."""
    longest = 0
    for tag in tags:
        for n in range(min(len(tag) - 1, len(text)), longest, -1):
            if text.endswith(tag[:n]):
                longest = n
                break
    return longest


def format_call(name: str, arguments: dict) -> str:
    """One call in the Qwen3.5 XML format, as the model writes it (what ``parse_call_body`` reads)."""
    body = "".join(
        f"<parameter={key}>\n{value if isinstance(value, str) else json.dumps(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    return f"{CALL_OPEN}\n<function={name}>\n{body}</function>\n{CALL_CLOSE}"


def parse_text(text: str, *, opens_reasoning: bool = True, step: int = 1) -> StreamParser:
    """Parse a whole turn at once (same result as feeding it piece by piece)."""
    parser = StreamParser(opens_reasoning=opens_reasoning, step=step)
    parser.feed(text)
    parser.finish()
    return parser
