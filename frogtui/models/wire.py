"""The private protocol between frogtui and its model process (``models/runner.py``).

One JSON object a line, both ways. frogtui sends requests; each carries an ``op``, and those that
answer carry an ``id`` that their answers repeat:

- ``load`` (``path``, ``config``, ``extra_buffers``, ``probe``): ``report`` lines, then ``loaded``
  (the model's facts) or ``error``;
- ``turn`` (``id``, ``messages``, ``tools``, ``max_tokens``, ``seed`` or null): ``text`` pieces as they decode, then
  ``end`` (finish reason and usage) or ``error``;
- ``cancel`` (``id``): the turn with that id stops within one token (no answer of its own);
- ``feed`` (``id``, ``messages``, ``tools``, ``text``) and ``inspect`` (``id``, ``what``): one
  ``result`` or ``error`` (for benchmarks and tests: a turn recorded as if generated, the
  transcript's tokens and text);
- ``facts`` (``id``): one ``result``: the library's version, GPU offload, CPU features (no model);
- ``close``: the process frees the model and exits.

An ``error`` names one of the kinds below, so frogtui raises the same one-line error the model
raised in its own process. Nothing here imports llama.cpp.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from frogtui.errors import ContextOverflowError, ModelError, ModelLoadError
from frogtui.protocol import Usage

ERROR_KINDS: dict[str, type[ModelError]] = {
    "ModelError": ModelError,
    "ModelLoadError": ModelLoadError,
    "ContextOverflowError": ContextOverflowError,
}
"""The errors that cross the pipe, by name."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line (non-ASCII escaped, so a line never holds a raw newline)."""
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """The message on one line.

    Raises:
        ModelError: the line is not a JSON object (the process wrote something else on the pipe).
    """
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        raise ModelError(f"the model's process sent something that is not part of its protocol: {line[:80]!r}")
    return message


def error_message(err: ModelError) -> dict[str, Any]:
    """An ``error`` answer for one of ``ERROR_KINDS``."""
    kind = next((name for name, cls in ERROR_KINDS.items() if type(err) is cls), "ModelError")
    return {"error": {"kind": kind, "message": str(err)}}


def raise_error(body: dict[str, Any]) -> None:
    """Raise the error an ``error`` answer names (``ModelError`` for a kind not known here)."""
    raise ERROR_KINDS.get(str(body.get("kind")), ModelError)(str(body.get("message", "the model's process failed")))


def usage_dict(usage: Usage) -> dict[str, Any]:
    return dataclasses.asdict(usage)


def usage_from(data: dict[str, Any]) -> Usage:
    names = {f.name for f in dataclasses.fields(Usage)}
    return Usage(**{k: v for k, v in data.items() if k in names})
