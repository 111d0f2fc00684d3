"""The last fallback for proposals, where no copy-on-write view can be mounted (no overlayfs in a
user namespace, no usable fuse-overlayfs): the command runs in the Bash sandbox on the working tree
itself, with the network off and a private temp folder as on a view, after a checkpoint; what it
changed is then read back from git and the tree put back (``vcs.in_place``), so that its effects are
judged, shown and landed as a proposal's are.

Only the command's wrapper is here; what it changed is read by the session's ``vcs.in_place``.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from frogtui.approval.sandbox import seccomp
from frogtui.approval.sandbox.bwrap import BwrapWrapper
from frogtui.approval.sandbox.overlay import proposal_options
from frogtui.tools.bash import CommandWrapper
from frogtui.tools.project_env import project_environ
from frogtui.tools.proposals import Layers


@dataclass(frozen=True)
class DirectView:
    """Runs a proposal's command on the working tree itself (``in_place``), in the sandbox with the
    network off and an empty private temp folder.

    Attributes:
        sandbox: The session's Bash sandbox.
    """

    sandbox: BwrapWrapper
    kind: str = "undo"
    in_place: bool = True
    """The command writes the tree: the runner reads its effects back and puts the tree back."""

    @property
    def root(self) -> Path:
        return self.sandbox.root

    def wrapper(self, layers: Layers) -> CommandWrapper:
        """The ``CommandWrapper`` that runs a command on the tree (``layers`` is filled afterwards)."""

        def wrap(argv: Sequence[str]) -> list[str]:
            return self.argv(argv, project_environ(os.environ, self.root))

        return wrap

    def argv(self, argv: Sequence[str], environ: Mapping[str, str]) -> list[str]:
        """bwrap (network off, a private temp folder) with its seccomp filter, then ``argv``."""
        box = replace(self.sandbox, network=False, landlock=False, read_only=False)
        inner = [*proposal_options(box.options(environ), box.tmp_dir), "--", *argv]
        return seccomp.with_filter(inner, box.seccomp) if box.seccomp else inner

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The command's environment: the sandbox's."""
        return self.sandbox.environment(environ)
