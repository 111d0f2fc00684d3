"""Prompt text from a GGUF's own chat template (``tokenizer.chat_template``), rendered with Jinja2.

The template is rendered the way Hugging Face ``apply_chat_template`` (and so vLLM) renders it:
a sandboxed environment with ``trim_blocks``/``lstrip_blocks``, ``raise_exception``, a ``tojson``
that keeps non-ASCII text, the Leaf tools, ``enable_thinking=True``, and tool-call arguments passed
as dicts (Qwen3.5's template iterates them with ``|items``).

``ChatTemplate.suffix`` renders only messages that come after an assistant turn, in exactly the text
the template would give them in the whole conversation: that is what lets the llama.cpp backend
append to its token transcript instead of re-rendering (and re-evaluating) everything.
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
class Suffix:
    """The text new messages add after an assistant turn.

    Attributes:
        close: what ends the assistant turn (``<|im_end|>`` for ChatML templates).
        messages: the new messages' own text, starting right after ``close``.
        generation_prompt: what opens the next assistant turn (``<|im_start|>assistant\\n<think>\\n``).
    """

    close: str
    messages: str
    generation_prompt: str


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
        body = self.render(stand_in + new_messages, tools, add_generation_prompt=False)
        full = self.render(stand_in + new_messages, tools, add_generation_prompt=True)
        if not full.startswith(body) or body.count(_SENTINEL) != 1:
            return None
        after = body.split(_SENTINEL, 1)[1]
        close = self.end_of_turn if self.end_of_turn and after.startswith(self.end_of_turn) else ""
        if not close:
            return None
        return Suffix(close=close, messages=after[len(close):], generation_prompt=full[len(body):])
