"""The five Leaf tools (Read, Write, Edit, Glob, Bash) and the workspace confinement floor."""
from frogtui.tools.runner import ToolOutcome, ToolRunner, check_call, error_observation
from frogtui.tools.schemas import MUTATING_TOOLS, SYSTEM_PROMPT, TOOL_NAMES, TOOL_SCHEMAS, coerce_arguments
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
    "check_call",
    "coerce_arguments",
    "error_observation",
]
