"""Runs one validated tool call and turns every failure into an observation (never an exception)."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from frogtui.protocol import Preview, ToolCall
from frogtui.tools import files
from frogtui.tools.bash import CommandWrapper, OutputCallback, run_bash
from frogtui.tools.environment import CREDENTIAL_NAME
from frogtui.tools.files import StaleFileError
from frogtui.tools.project_env import project_environ
from frogtui.tools.workspace import Workspace


@dataclass(frozen=True)
class ToolOutcome:
    observation: str
    ok: bool = True
    exit_code: int | None = None
    stale: bool = False
    """A Write/Edit was not applied because the file changed since its preview."""
    cancelled: bool = False


def error_observation(err: BaseException) -> str:
    """Leaf's error shape: ``ExceptionType: message``."""
    return f"{type(err).__name__}: {err}"


class ToolRunner:
    """The five Leaf tools bound to a workspace.

    Args:
        workspace: root and private temp folder; every path goes through it.
        wrap: optional argv wrapper for Bash (the sandbox).
    """

    def __init__(self, workspace: Workspace, wrap: CommandWrapper | None = None) -> None:
        self.workspace = workspace
        self.wrap = wrap

    @property
    def confines_read_only(self) -> bool:
        """Whether Bash has a read-only sandbox (``wrap.read_only_wrapper``) for the commands the
        policy proved read-only; without one they get a checkpoint like any other."""
        return callable(getattr(self.wrap, "read_only_wrapper", None))

    def bash_env(self) -> dict[str, str]:
        """The environment for Bash, with TMPDIR the session's private temp folder and PWD the root:
        the project's (``project_env``: frogtui's own virtualenv removed, the project's Python
        first), under a sandbox its allowlist (``wrap.environment``), else without anything that
        looks like a credential (tokens, keys, passwords, the SSH agent)."""
        environ = project_environ(os.environ, self.workspace.root)
        environment = getattr(self.wrap, "environment", None)
        if environment is not None:
            env = environment(environ)
        else:
            env = {k: v for k, v in environ.items() if not CREDENTIAL_NAME.search(k)}
        env["TMPDIR"] = str(self.workspace.tmp_dir)
        env["PWD"] = str(self.workspace.root)
        # Folders of the caller that a sandbox may not show (pyenv's shims cd into PYENV_DIR).
        for name in ("PYTHONSTARTUP", "OLDPWD", "PYENV_DIR"):
            env.pop(name, None)
        return env

    def preview(self, call: ToolCall) -> Preview | None:
        """The change a Write/Edit would make. Raises what the tool would raise (ValueError...)."""
        args = call.arguments
        if call.name == "Write":
            return files.preview_write(self.workspace, args["file_path"], args["content"])
        if call.name == "Edit":
            return files.preview_edit(
                self.workspace, args["file_path"], args["old_string"], args["new_string"], bool(args.get("replace_all"))
            )
        return None

    def run(
        self,
        call: ToolCall,
        *,
        preview: Preview | None = None,
        cancel: threading.Event | None = None,
        on_output: OutputCallback | None = None,
        read_only: bool = False,
    ) -> ToolOutcome:
        """Run ``call`` (its arguments converted, ``call.error`` None). Write/Edit apply ``preview`` when given,
        and only if the file still has the previewed content. Bash passes its output to ``on_output``
        as it is read (on this thread); with ``read_only`` it runs in the read-only sandbox (refused
        when there is none: ``confines_read_only``)."""
        args = call.arguments
        try:
            if call.name == "Read":
                return ToolOutcome(files.read(self.workspace, args["file_path"], args.get("offset"), args.get("limit")))
            if call.name == "Glob":
                return ToolOutcome(files.glob(self.workspace, args["pattern"], args.get("path")))
            if call.name in ("Write", "Edit"):
                preview = preview or self.preview(call)
                assert preview is not None
                files.apply_preview(self.workspace, preview)
                if call.name == "Write":
                    return ToolOutcome(files.write_observation(preview))
                return ToolOutcome(files.edit_observation(preview, args["old_string"], bool(args.get("replace_all"))))
            if call.name == "Bash":
                wrap = self.wrap
                if read_only:
                    if not self.confines_read_only:
                        return ToolOutcome("PermissionError: no read-only sandbox to run this command in; it did not run", ok=False)
                    wrap = self.wrap.read_only_wrapper()  # type: ignore[union-attr]
                result = run_bash(
                    args["command"],
                    str(self.workspace.root),
                    timeout=args.get("timeout"),
                    cancel=cancel,
                    wrap=wrap,
                    env=self.bash_env(),
                    on_output=on_output,
                )
                ok = result.exit_code == 0
                return ToolOutcome(result.observation, ok=ok, exit_code=result.exit_code, cancelled=result.cancelled)
        except StaleFileError as err:
            return ToolOutcome(error_observation(err), ok=False, stale=True)
        except (OSError, ValueError) as err:
            return ToolOutcome(error_observation(err), ok=False)
        return ToolOutcome(f"Unknown tool: {call.name}", ok=False)
