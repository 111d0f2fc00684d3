"""The Leaf interface, verbatim: the system prompt and the tool schemas (LEAF.md; each schema is
its tool's spec's, ``specs``), and the conversion of a call's arguments to their schema types.

FrogNano-4B was RL-trained on exactly these strings; do not reword them.
"""
from __future__ import annotations

import math
from typing import Any

from frogtui.tools.observations import error_text, unknown_tool
from frogtui.tools.specs import TOOL_SPECS

SYSTEM_PROMPT = "\n".join(
    [
        "You are a software-engineering agent working in a checked-out repository.",
        "Use the available tools to inspect files, make focused edits, and run commands.",
        "Solve the task, validate when practical, then give a brief final answer.",
    ]
)


TOOL_SCHEMAS: list[dict[str, Any]] = [spec.schema for spec in TOOL_SPECS]
SCHEMAS_BY_NAME: dict[str, dict[str, Any]] = {spec.name: spec.parameters for spec in TOOL_SPECS}
TOOL_NAMES = tuple(SCHEMAS_BY_NAME)
MUTATING_TOOLS = frozenset(spec.name for spec in TOOL_SPECS if spec.mutates)
"""The tools that change files or run commands (checkpointed; denied under approval mode ``none``)."""


class ArgumentError(ValueError):
    """An argument is missing, unknown, or does not convert to its schema type."""

    def __init__(self, message: str, kind: str = "ValueError") -> None:
        super().__init__(message)
        self.kind = kind
        """The Python exception name the observation shows (TypeError for a bad signature)."""

    @property
    def observation(self) -> str:
        return error_text(self.kind, self)


def _convert(tool: str, key: str, type_: str, value: Any) -> Any:
    def bad() -> ArgumentError:
        return ArgumentError(f"parameter {key!r} of {tool} expects {_ARTICLE[type_]}, got {value!r}")

    if type_ == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (dict, list)):
            raise bad()
        return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    if type_ == "integer":
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            text = value.strip()
            try:
                return int(text)
            except ValueError:
                try:
                    number = float(text)
                except ValueError:
                    raise bad() from None
                if number.is_integer():
                    return int(number)
        raise bad()
    if type_ == "number":
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, (int, float)):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                raise bad() from None
        else:
            raise bad()
        if not math.isfinite(number):
            raise bad()
        return number
    if type_ == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise bad()
    return value


_ARTICLE = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "a boolean"}


def coerce_arguments(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Convert ``arguments`` to the types of ``tool``'s schema.

    Raises:
        KeyError: unknown tool.
        ArgumentError: unknown or missing parameter, or a value that does not convert. The message
            is meant for the model.
    """
    schema = SCHEMAS_BY_NAME[tool]
    props = schema["properties"]
    unknown = [k for k in arguments if k not in props]
    if unknown:
        raise ArgumentError(f"{tool}() got an unexpected keyword argument {unknown[0]!r}", "TypeError")
    missing = [k for k in schema["required"] if k not in arguments]
    if missing:
        names = ", ".join(repr(m) for m in missing)
        raise ArgumentError(f"{tool}() missing {len(missing)} required argument{'s' if len(missing) > 1 else ''}: {names}", "TypeError")
    required = set(schema["required"])
    return {
        k: _convert(tool, k, props[k]["type"], v)
        for k, v in arguments.items()
        if not (v is None and k not in required)
    }


def convert_arguments(name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """Convert a call's raw arguments by the tool's schema, once, where the call is made (the
    streaming parser, a structured call, a person's edit): (arguments, error observation or None).
    An unknown tool is an error too."""
    if name not in SCHEMAS_BY_NAME:
        return arguments, unknown_tool(name)
    try:
        return coerce_arguments(name, arguments), None
    except ArgumentError as err:
        return arguments, err.observation
