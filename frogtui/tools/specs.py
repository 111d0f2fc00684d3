"""Each Leaf tool, named once: its spec (name, the verbatim schema, what kind of tool it is, whether
it changes anything, which argument names its file, how a call reads in one line, its preview, how
to run it), all five in one table, ``TOOL_SPECS``.

Everything outside ``tools/`` finds a tool through the table (``tool_spec(call.name)``) and asks
its spec (``spec.mutates``, ``spec.kind``, ``spec.path_argument``...) instead of comparing names.
A new tool is a spec here, its implementation, and how the policy gathers facts about its calls
(``approval/facts.py``).

The schemas are Leaf's, verbatim (LEAF.md): FrogNano-4B was RL-trained on exactly these strings;
do not reword them.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from frogtui.protocol import Preview, ToolCall
from frogtui.tools import bash, files
from frogtui.tools.observations import NO_READ_ONLY_SANDBOX, ToolOutcome
from frogtui.tools.workspace import Workspace

ToolKind = Literal["read", "search", "edit", "execute"]
"""What a tool does, in ACP's words: reads a file, searches for files, edits a file, runs a command."""


class Bound(Protocol):
    """What a tool runs with: the tools bound to a workspace (``runner.ToolRunner``), named here
    so the specs need not import the runner that looks them up."""

    workspace: Workspace
    wrap: bash.CommandWrapper | None

    @property
    def confines_read_only(self) -> bool: ...

    def bash_env(self) -> dict[str, str] | None: ...

    def shown(self) -> Callable[[str], str | None]: ...


@dataclass(frozen=True)
class RunRequest:
    """What the runner passes a tool besides its arguments."""

    preview: Preview | None = None
    """The change the person approved (a Write/Edit applies exactly it)."""
    cancel: threading.Event | None = None
    on_output: bash.OutputCallback | None = None
    read_only: bool = False
    """Run in the read-only sandbox (a command the policy proved read-only)."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool, as everything outside ``tools/`` needs to know it."""

    name: str
    schema: dict[str, Any]
    """The OpenAI function-calling schema, verbatim (what the model sees)."""
    kind: ToolKind
    mutates: bool
    """It changes files or runs a command: checkpointed, asked about by default, refused under
    approval mode ``none``."""
    path_argument: str | None
    """The argument that names the one file a call works on (None: a pattern or a command)."""
    subject_argument: str
    """The argument that says what a call does (the command, the file, the pattern): what the
    trace and the approval modal show of it."""
    summary: Callable[[Mapping[str, Any]], str]
    """The call on one line, in a few words: ``Bash `pytest -q` ``, ``Edit src/app.py``,
    ``Glob *.py in src`` (the hand-off's list of calls, the editor's title)."""
    execute: Callable[[Bound, Mapping[str, Any], RunRequest], ToolOutcome]
    """Runs a call with converted arguments; raises ``OSError``/``ValueError`` for a failure."""
    preview: Callable[[Workspace, Mapping[str, Any]], Preview] | None = None
    """The change a call would make, shown before it is approved (None: it changes no file, or
    what it changes is not known before it runs)."""

    @property
    def parameters(self) -> dict[str, Any]:
        return self.schema["function"]["parameters"]  # type: ignore[no-any-return]

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.parameters["required"])

    def subject(self, arguments: Mapping[str, Any]) -> str:
        """The value of the argument that says what a call does ('' when absent)."""
        return str(arguments.get(self.subject_argument) or "")


def first_line(text: str, limit: int) -> str:
    """The first line of ``text``, cut to ``limit`` characters (an ellipsis marks a cut)."""
    lines = text.strip().splitlines()
    first = lines[0] if lines else ""
    if len(first) > limit:
        return first[: limit - 1] + "…"
    return first + (" …" if len(lines) > 1 else "")


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


# how each tool runs ----------------------------------------------------------------------------
def _read(runner: Bound, args: Mapping[str, Any], _request: RunRequest) -> ToolOutcome:
    return ToolOutcome(files.read(runner.workspace, args["file_path"], args.get("offset"), args.get("limit"), shown=runner.shown()))


def _glob(runner: Bound, args: Mapping[str, Any], _request: RunRequest) -> ToolOutcome:
    return ToolOutcome(files.glob(runner.workspace, args["pattern"], args.get("path"), shown=runner.shown()))


def _preview_write(ws: Workspace, args: Mapping[str, Any]) -> Preview:
    return files.preview_write(ws, args["file_path"], args["content"])


def _preview_edit(ws: Workspace, args: Mapping[str, Any]) -> Preview:
    return files.preview_edit(ws, args["file_path"], args["old_string"], args["new_string"], bool(args.get("replace_all")))


def _write(runner: Bound, args: Mapping[str, Any], request: RunRequest) -> ToolOutcome:
    preview = request.preview or _preview_write(runner.workspace, args)
    files.apply_preview(runner.workspace, preview)
    return ToolOutcome(files.write_observation(preview))


def _edit(runner: Bound, args: Mapping[str, Any], request: RunRequest) -> ToolOutcome:
    preview = request.preview or _preview_edit(runner.workspace, args)
    files.apply_preview(runner.workspace, preview)
    return ToolOutcome(files.edit_observation(preview, args["old_string"], bool(args.get("replace_all"))))


def _bash(runner: Bound, args: Mapping[str, Any], request: RunRequest) -> ToolOutcome:
    wrap = runner.wrap
    if request.read_only:
        if not runner.confines_read_only:
            return ToolOutcome(NO_READ_ONLY_SANDBOX, ok=False, error="PermissionError")
        wrap = runner.wrap.read_only_wrapper() if runner.wrap is not None else None
    result = bash.run_bash(
        args["command"],
        str(runner.workspace.root),
        timeout=args.get("timeout"),
        cancel=request.cancel,
        wrap=wrap,
        env=runner.bash_env(),
        on_output=request.on_output,
    )
    return ToolOutcome(
        result.observation, ok=result.exit_code == 0, exit_code=result.exit_code, cancelled=result.cancelled, timed_out=result.timed_out
    )


# the five tools --------------------------------------------------------------------------------
READ = ToolSpec(
    name="Read",
    schema=_tool(
        "Read",
        "Read a text file. Returns numbered lines.",
        {
            "file_path": _p("string", "Path to the file to read."),
            "offset": _p("integer", "Optional 1-based starting line."),
            "limit": _p("integer", "Optional maximum number of lines."),
        },
        ["file_path"],
    ),
    kind="read",
    mutates=False,
    path_argument="file_path",
    subject_argument="file_path",
    summary=lambda args: f"Read {args.get('file_path', '')}".rstrip(),
    execute=_read,
)
WRITE = ToolSpec(
    name="Write",
    schema=_tool(
        "Write",
        "Write a complete file, creating parent directories when needed.",
        {
            "file_path": _p("string", "Path to write."),
            "content": _p("string", "Full file contents."),
        },
        ["file_path", "content"],
    ),
    kind="edit",
    mutates=True,
    path_argument="file_path",
    subject_argument="file_path",
    summary=lambda args: f"Write {args.get('file_path', '')}".rstrip(),
    execute=_write,
    preview=_preview_write,
)
EDIT = ToolSpec(
    name="Edit",
    schema=_tool(
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
    kind="edit",
    mutates=True,
    path_argument="file_path",
    subject_argument="file_path",
    summary=lambda args: f"Edit {args.get('file_path', '')}".rstrip(),
    execute=_edit,
    preview=_preview_edit,
)
GLOB = ToolSpec(
    name="Glob",
    schema=_tool(
        "Glob",
        "Find files by glob pattern.",
        {
            "pattern": _p("string", "Glob pattern, e.g. **/*.py."),
            "path": _p("string", "Optional directory to search from."),
        },
        ["pattern"],
    ),
    kind="search",
    mutates=False,
    path_argument=None,
    subject_argument="pattern",
    summary=lambda args: f"Glob {args.get('pattern', '')}" + (f" in {args['path']}" if args.get("path") else ""),
    execute=_glob,
)
BASH = ToolSpec(
    name="Bash",
    schema=_tool(
        "Bash",
        "Run a shell command in the repository workdir.",
        {
            "command": _p("string", "Command to run."),
            "description": _p("string", "Short description of the command."),
            "timeout": _p("number", "Optional timeout in seconds."),
        },
        ["command"],
    ),
    kind="execute",
    mutates=True,
    path_argument=None,
    subject_argument="command",
    summary=lambda args: f"Bash `{first_line(str(args.get('command', '')), 120)}`",
    execute=_bash,
)

TOOL_SPECS: tuple[ToolSpec, ...] = (READ, WRITE, EDIT, GLOB, BASH)
"""Every tool, in the order the model is shown them."""
SPECS: Mapping[str, ToolSpec] = {spec.name: spec for spec in TOOL_SPECS}


def tool_spec(name: str) -> ToolSpec | None:
    """The spec of the tool called ``name`` (names are case-sensitive), None for no such tool."""
    return SPECS.get(name)


def runs_commands(tool: object) -> bool:
    """Whether ``tool`` (a spec, or a tool's name) runs commands (its spec's kind is ``execute``):
    its rules match a command's words, its observation starts with an exit code, the modal edits
    its command."""
    spec = tool if isinstance(tool, ToolSpec) else tool_spec(tool) if isinstance(tool, str) else None
    return spec is not None and spec.kind == "execute"


def short_arguments(call: ToolCall, width: int) -> str:
    """What a call does (its command, file or pattern), on one line, cut to ``width`` characters:
    what the trace and the tool lines show of it."""
    spec = tool_spec(call.name)
    if spec is not None:
        text = spec.subject(call.arguments)
    else:  # an unknown tool: whichever argument a known tool would say it with
        text = next((str(call.arguments[s.subject_argument]) for s in TOOL_SPECS if call.arguments.get(s.subject_argument)), "")
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
