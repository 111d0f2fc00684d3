"""The five Leaf tools (Read, Write, Edit, Glob, Bash) and the workspace confinement floor."""
from frogtui.tools.runner import ToolOutcome, ToolRunner, error_observation
from frogtui.tools.schemas import (
    MUTATING_TOOLS,
    SYSTEM_PROMPT,
    TOOL_NAMES,
    TOOL_SCHEMAS,
    coerce_arguments,
    convert_arguments,
    short_arguments,
)
from frogtui.tools.workspace import OutsideRootError, Workspace

__all__ = [
    "MUTATING_TOOLS",
    "SYSTEM_PROMPT",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "OutsideRootError",
    "ToolOutcome",
    "ToolRunner",
    "Workspace",
    "coerce_arguments",
    "convert_arguments",
    "error_observation",
    "short_arguments",
]
