"""The Leaf interface, verbatim: system prompt and the five tool schemas (LEAF.md).

FrogNano-4B was RL-trained on exactly these strings; do not reword them.
"""
from __future__ import annotations

import math
from typing import Any

from frogtui.protocol import ToolCall

SYSTEM_PROMPT = "\n".join(
    [
        "You are a software-engineering agent working in a checked-out repository.",
        "Use the available tools to inspect files, make focused edits, and run commands.",
        "Solve the task, validate when practical, then give a brief final answer.",
    ]
)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _p(type_: str, description: str) -> dict[str, str]:
    return {"type": type_, "description": description}


TOOL_SCHEMAS: list[dict[str, Any]] = [
    _tool(
        "Read",
        "Read a text file. Returns numbered lines.",
        {
            "file_path": _p("string", "Path to the file to read."),
            "offset": _p("integer", "Optional 1-based starting line."),
            "limit": _p("integer", "Optional maximum number of lines."),
        },
        ["file_path"],
    ),
    _tool(
        "Write",
        "Write a complete file, creating parent directories when needed.",
        {
            "file_path": _p("string", "Path to write."),
            "content": _p("string", "Full file contents."),
        },
        ["file_path", "content"],
    ),
    _tool(
        "Edit",
        "Replace an exact string in a text file.",
        {
            "file_path": _p("string", "Path to edit."),
            "old_string": _p("string", "Exact text to replace."),
            "new_string": _p("string", "Replacement text."),
            "replace_all": _p("boolean", "Replace every occurrence instead of requiring one match."),
        },
        ["file_path", "old_string", "new_string"],
    ),
    _tool(
        "Glob",
        "Find files by glob pattern.",
        {
            "pattern": _p("string", "Glob pattern, e.g. **/*.py."),
            "path": _p("string", "Optional directory to search from."),
        },
        ["pattern"],
    ),
    _tool(
        "Bash",
        "Run a shell command in the repository workdir.",
        {
            "command": _p("string", "Command to run."),
            "description": _p("string", "Short description of the command."),
            "timeout": _p("number", "Optional timeout in seconds."),
        },
        ["command"],
    ),
]

SCHEMAS_BY_NAME: dict[str, dict[str, Any]] = {t["function"]["name"]: t["function"]["parameters"] for t in TOOL_SCHEMAS}
TOOL_NAMES = tuple(SCHEMAS_BY_NAME)
MUTATING_TOOLS = frozenset({"Write", "Edit", "Bash"})
"""The tools that change files or run commands (checkpointed; denied under approval mode ``none``)."""


def short_arguments(call: ToolCall, width: int) -> str:
    """The one argument that says what a call does (command, file, pattern), on one line, cut to
    ``width`` characters."""
    args = call.arguments
    text = str(args.get("command") or args.get("file_path") or args.get("pattern") or "")
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class ArgumentError(ValueError):
    """An argument is missing, unknown, or does not convert to its schema type."""

    def __init__(self, message: str, kind: str = "ValueError") -> None:
        super().__init__(message)
        self.kind = kind
        """The Python exception name the observation shows (TypeError for a bad signature)."""

    @property
    def observation(self) -> str:
        return f"{self.kind}: {self}"


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
        return arguments, f"Unknown tool: {name}"
    try:
        return coerce_arguments(name, arguments), None
    except ArgumentError as err:
        return arguments, err.observation
