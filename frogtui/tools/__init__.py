"""The five Leaf tools (one spec each in ``specs``, in one table) and the workspace confinement floor."""
from frogtui.tools.observations import ToolOutcome, error_observation
from frogtui.tools.runner import ToolRunner
from frogtui.tools.schemas import (
    MUTATING_TOOLS,
    SYSTEM_PROMPT,
    TOOL_NAMES,
    TOOL_SCHEMAS,
    coerce_arguments,
    convert_arguments,
)
from frogtui.tools.specs import TOOL_SPECS, ToolSpec, short_arguments, tool_spec
from frogtui.tools.workspace import OutsideRootError, Workspace

__all__ = [
    "MUTATING_TOOLS",
    "SYSTEM_PROMPT",
    "TOOL_NAMES",
    "TOOL_SCHEMAS",
    "TOOL_SPECS",
    "OutsideRootError",
    "ToolOutcome",
    "ToolRunner",
    "ToolSpec",
    "Workspace",
    "coerce_arguments",
    "convert_arguments",
    "error_observation",
    "short_arguments",
    "tool_spec",
]
