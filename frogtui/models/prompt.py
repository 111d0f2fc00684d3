"""Prompt text from a GGUF's own chat template (``tokenizer.chat_template``), rendered with Jinja2.

The template is rendered the way Hugging Face ``apply_chat_template`` (and so vLLM) renders it:
a sandboxed environment with ``trim_blocks``/``lstrip_blocks``, ``raise_exception``, a ``tojson``
that keeps non-ASCII text, the Leaf tools, ``enable_thinking=True``, and tool-call arguments passed
as dicts (Qwen3.5's template iterates them with ``|items``).

``ChatTemplate.suffix`` renders only messages that come after an assistant turn, in exactly the text
the template would give them in the whole conversation: that is what lets the llama.cpp backend
append to its token transcript instead of re-rendering (and re-evaluating) everything.

Every render also says where the messages' own text lies (``Rendered.literal``): a file the model
reads may contain ``<|im_end|>``, and that text must be tokenized as text, never as the control
token the template itself writes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from frogtui.errors import ModelError

_SENTINEL = "\u2063frogtui-turn-boundary\u2063"
"""Content of the stand-in assistant message that ``suffix`` renders before the new messages."""
_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
"""Private-use characters around the stand-ins that locate message text in a render."""

Span = tuple[int, int]


def _raise_exception(message: str) -> None:
    raise jinja2.TemplateError(message)


def _tojson(value: Any, indent: int | None = None, separators: Any = None, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI-format messages as chat templates expect them: tool-call arguments as dicts.

    Arguments that are not a JSON object (malformed text) are passed as ``{}`` so rendering
    never fails on them; the loop already turned such calls into error observations.
    """
    out = []
    for message in messages:
        calls = message.get("tool_calls")
        if not calls:
            out.append(message)
            continue
        converted = []
        for call in calls:
            function = dict(call.get("function", call))
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except json.JSONDecodeError:
                    arguments = {}
            function["arguments"] = arguments if isinstance(arguments, dict) else {}
            converted.append({**call, "function": function})
        out.append({**message, "tool_calls": converted})
    return out


@dataclass(frozen=True)
class Rendered:
    """A rendered prompt and where the messages' own text lies in it.

    Attributes:
        text: the template's output.
        literal: ``(start, end)`` character spans of text that came from messages (user text, tool
            observations, the assistant's text and tool-call arguments), in order. Control tokens
            written there are text, not tokens. None when the spans could not be located (a
            template that transforms message text in ways not recognised).
    """

    text: str
    literal: tuple[Span, ...] | None


def _mark_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Replace every message string (except the system prompt) by a unique stand-in."""
    originals: list[str] = []

    def mark(text: Any) -> Any:
        if not isinstance(text, str) or not text:
            return text
        originals.append(text)
        return f"{_MARK_OPEN}{len(originals) - 1}{_MARK_CLOSE}"

    marked = []
    for message in template_messages(messages):
        if message.get("role") == "system":
            marked.append(message)
            continue
        m = {**message, "content": mark(message.get("content"))}
        if "reasoning_content" in message:
            m["reasoning_content"] = mark(message["reasoning_content"])
        if message.get("tool_calls"):
            m["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": {k: mark(v) for k, v in c["function"]["arguments"].items()}}}
                for c in message["tool_calls"]
            ]
        marked.append(m)
    return marked, originals


def _transforms(text: str) -> list[str]:
    """What a template may have made of a message's text (as is, or trimmed)."""
    out: list[str] = []
    for candidate in (text, text.strip(), text.rstrip(), text.lstrip(), text.strip("\n")):
        if candidate not in out:
            out.append(candidate)
    return out


def locate_literal(text: str, skeleton: str, originals: list[str]) -> tuple[Span, ...] | None:
    """Find where each original string went in ``text``, given the render with stand-ins.

    Returns:
        The spans in ``text``, or None when ``text`` is not the skeleton with each stand-in
        replaced by (a trimmed form of) its original.
    """
    parts: list[str] = []
    order: list[int] = []
    rest = skeleton
    while _MARK_OPEN in rest:
        head, _, tail = rest.partition(_MARK_OPEN)
        number, sep, rest = tail.partition(_MARK_CLOSE)
        if not sep or not number.isdigit() or int(number) >= len(originals):
            return None
        parts.append(head)
        order.append(int(number))
    parts.append(rest)
    if len(set(order)) != len(order):
        return None

    if not text.startswith(parts[0]):
        return None
    spans: list[Span] = []
    pos = len(parts[0])
    for i, number in enumerate(order):
        follow = parts[i + 1]
        for candidate in _transforms(originals[number]):
            if text.startswith(candidate + follow, pos) and (i + 1 < len(order) or pos + len(candidate) + len(follow) == len(text)):
                spans.append((pos, pos + len(candidate)))
                pos += len(candidate) + len(follow)
                break
        else:
            return None
    return tuple(spans) if pos == len(text) else None


@dataclass(frozen=True)
class Suffix:
    """The text new messages add after an assistant turn.

    Attributes:
        close: what ends the assistant turn (``<|im_end|>`` for ChatML templates).
        messages: the new messages' own text, starting right after ``close``.
        generation_prompt: what opens the next assistant turn (``<|im_start|>assistant\\n<think>\\n``).
        literal: spans of message text within ``messages`` (see ``Rendered.literal``).
    """

    close: str
    messages: str
    generation_prompt: str
    literal: tuple[Span, ...] | None = ()


class ChatTemplate:
    """A compiled chat template.

    Args:
        source: the Jinja2 template text (``tokenizer.chat_template``).
        bos_token: text of the BOS token (templates may print it).
        eos_token: text of the EOS token.
        end_of_turn: text of the token that ends a turn (``<|im_end|>``); defaults to ``eos_token``.

    Raises:
        ModelError: the template does not compile.
    """

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = "", end_of_turn: str | None = None) -> None:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._template = env.from_string(source)
        except jinja2.TemplateSyntaxError as err:
            raise ModelError(f"the model's chat template does not compile: {err}") from None
        self.source = source
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.end_of_turn = end_of_turn or eos_token

    def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, *, add_generation_prompt: bool) -> str:
        """Render a whole conversation (OpenAI-format messages; arguments may be JSON strings).

        Raises:
            ModelError: the template refused the messages.
        """
        try:
            return self._template.render(
                messages=template_messages(messages),
                tools=tools or None,
                add_generation_prompt=add_generation_prompt,
                enable_thinking=True,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except (jinja2.TemplateError, TypeError) as err:
            raise ModelError(f"the model's chat template failed to render the conversation: {err}") from None

    def render_marked(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, *, add_generation_prompt: bool) -> Rendered:
        """Render like ``render`` and locate the messages' own text in the result.

        Raises:
            ModelError: the template refused the messages.
        """
        text = self.render(messages, tools, add_generation_prompt=add_generation_prompt)
        marked, originals = _mark_messages(messages)
        if not originals:
            return Rendered(text, ())
        try:
            skeleton = self._template.render(
                messages=marked, tools=tools or None, add_generation_prompt=add_generation_prompt,
                enable_thinking=True, bos_token=self.bos_token, eos_token=self.eos_token,
            )
        except (jinja2.TemplateError, TypeError):
            return Rendered(text, None)
        return Rendered(text, locate_literal(text, skeleton, originals))

    def renders_tools(self, tools: list[dict[str, Any]]) -> bool:
        """True when the template puts the tool definitions into the prompt (a model whose template
        ignores them never learns it can call tools)."""
        names = [t["function"]["name"] for t in tools]
        try:
            text = self.render([{"role": "system", "content": "x"}, {"role": "user", "content": "x"}], tools, add_generation_prompt=True)
        except ModelError:
            return False
        return all(f'"{name}"' in text for name in names)

    def generation_prompt(self, system: dict[str, Any], tools: list[dict[str, Any]] | None) -> str:
        """The text that opens an assistant turn after a user message."""
        base = [system, {"role": "user", "content": "x"}]
        head = self.render(base, tools, add_generation_prompt=False)
        full = self.render(base, tools, add_generation_prompt=True)
        if not full.startswith(head):
            raise ModelError("the model's chat template renders the generation prompt inconsistently")
        return full[len(head):]

    def suffix(self, system: dict[str, Any], new_messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Suffix | None:
        """Render ``new_messages`` as they follow an assistant turn, plus the next generation prompt.

        The new messages are rendered after a stand-in conversation (the real system message and
        tools, a user message, an assistant turn) and cut after the stand-in assistant's content.
        With Qwen3.5's template, what follows an assistant turn does not depend on earlier turns.

        Returns:
            The three parts, or None when the template does not put the new messages right after
            the assistant's content (then the caller must re-render the whole conversation).
        """
        stand_in = [system, {"role": "user", "content": "x"}, {"role": "assistant", "content": _SENTINEL}]
        marked = self.render_marked(stand_in + new_messages, tools, add_generation_prompt=False)
        body = marked.text
        full = self.render(stand_in + new_messages, tools, add_generation_prompt=True)
        if not full.startswith(body) or body.count(_SENTINEL) != 1:
            return None
        at = body.index(_SENTINEL) + len(_SENTINEL)
        after = body[at:]
        close = self.end_of_turn if self.end_of_turn and after.startswith(self.end_of_turn) else ""
        if not close:
            return None
        start = at + len(close)
        literal = None
        if marked.literal is not None:
            literal = tuple((a - start, b - start) for a, b in marked.literal if a >= start)
        return Suffix(close=close, messages=body[start:], generation_prompt=full[len(body):], literal=literal)
