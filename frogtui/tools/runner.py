"""Runs one validated tool call by its spec and turns every failure into an outcome (never an exception)."""
from __future__ import annotations

import os
import threading
from collections.abc import Callable

from frogtui.protocol import FileHunks, Preview, ToolCall
from frogtui.tools.bash import CommandWrapper, OutputCallback
from frogtui.tools.environment import CREDENTIAL_NAME
from frogtui.tools.files import StaleFileError
from frogtui.tools.landing import Landed, land
from frogtui.tools.observations import ToolOutcome, unknown_tool
from frogtui.tools.project_env import project_environ
from frogtui.tools.proposals import Proposal, ProposalRunner
from frogtui.tools.specs import RunRequest, tool_spec
from frogtui.tools.workspace import Workspace


class ToolRunner:
    """The tools (``specs.TOOL_SPECS``) bound to a workspace.

    Args:
        workspace: root and private temp folder; every path goes through it.
        wrap: optional argv wrapper for Bash (the sandbox).
        proposals: runs a command as a proposal on a copy-on-write view (``tools.proposals``);
            None where there is none.
    """

    def __init__(self, workspace: Workspace, wrap: CommandWrapper | None = None, proposals: ProposalRunner | None = None) -> None:
        self.workspace = workspace
        self.wrap = wrap
        self.proposals = proposals

    @property
    def can_propose(self) -> bool:
        """Whether a command can run as a proposal here now (``propose``; run on the tree, not
        where git could not put every file back: ``ProposalRunner.problem``)."""
        return self.proposals is not None and not self.proposals.problem()

    @property
    def proposes_in_place(self) -> bool:
        """Whether a proposal's command runs on the tree itself (no copy-on-write view here): the
        step's checkpoint is taken before it runs."""
        return self.proposals is not None and self.proposals.in_place is not None

    def propose(self, call: ToolCall, *, cancel: threading.Event | None = None, on_output: OutputCallback | None = None) -> Proposal:
        """Run a Bash ``call`` as a proposal: on a copy-on-write view, its effects read, nothing
        of it in the working tree (``land`` applies what is accepted).

        Raises:
            OSError: the proposal's layer folder cannot be made.
        """
        assert self.proposals is not None
        return self.proposals.propose(str(call.arguments["command"]), env=self.bash_env(), timeout=call.arguments.get("timeout"),
                                      cancel=cancel, on_output=on_output)

    def land(self, proposal: Proposal, accepted: tuple[str, ...] | None, hunks: tuple[FileHunks, ...] = ()) -> Landed:
        """Apply ``proposal``'s accepted effects (of a text file accepted in part, its accepted
        hunks) to the working tree (``landing.land``)."""
        return land(proposal, accepted, hunks)

    @property
    def confines_read_only(self) -> bool:
        """Whether Bash has a read-only sandbox (``wrap.read_only_wrapper``) for the commands the
        policy proved read-only; without one they get a checkpoint like any other."""
        return self.wrap is not None

    def shown(self) -> Callable[[str], str | None]:
        """What Read and Glob see, taken now: what a sandboxed command sees (``wrap.shown``: at a
        real path, the file, a sanitized copy, or None when hidden); without a sandbox, every
        file itself."""
        return self.wrap.shown() if self.wrap is not None else _itself

    def bash_env(self) -> dict[str, str]:
        """The environment for Bash, with TMPDIR the session's private temp folder and PWD the root:
        the project's (``project_env``: frogtui's own virtualenv removed, the project's Python
        first), under a sandbox its allowlist (``wrap.environment``), else without anything that
        looks like a credential (tokens, keys, passwords, the SSH agent)."""
        environ = project_environ(os.environ, self.workspace.root, self.workspace.environment_of)
        if self.wrap is not None:
            env = self.wrap.environment(environ)
        else:
            env = {k: v for k, v in environ.items() if not CREDENTIAL_NAME.search(k)}
        env["TMPDIR"] = str(self.workspace.tmp_dir)
        env["PWD"] = str(self.workspace.root)
        # Folders of the caller that a sandbox may not show (pyenv's shims cd into PYENV_DIR).
        for name in ("PYTHONSTARTUP", "OLDPWD", "PYENV_DIR"):
            env.pop(name, None)
        return env

    def preview(self, call: ToolCall) -> Preview | None:
        """The change a call would make (its spec's ``preview``: Write, Edit), None for a tool that
        has none. Raises what the tool would raise (ValueError...)."""
        spec = tool_spec(call.name)
        if spec is None or spec.preview is None:
            return None
        return spec.preview(self.workspace, call.arguments)

    def run(
        self,
        call: ToolCall,
        *,
        preview: Preview | None = None,
        cancel: threading.Event | None = None,
        on_output: OutputCallback | None = None,
        read_only: bool = False,
    ) -> ToolOutcome:
        """Run ``call`` (its arguments converted, ``call.error`` None) by its spec. Write/Edit apply
        ``preview`` when given, and only if the file still has the previewed content. Bash passes
        its output to ``on_output`` as it is read (on this thread); with ``read_only`` it runs in
        the read-only sandbox (refused when there is none: ``confines_read_only``). Every failure
        is an outcome, never an exception."""
        spec = tool_spec(call.name)
        if spec is None:
            return ToolOutcome(unknown_tool(call.name), ok=False)
        request = RunRequest(preview=preview, cancel=cancel, on_output=on_output, read_only=read_only)
        try:
            return spec.execute(self, call.arguments, request)
        except StaleFileError as err:
            return ToolOutcome.failed(err, stale=True)
        except (OSError, ValueError) as err:
            return ToolOutcome.failed(err)


def _itself(path: str) -> str | None:
    return path
