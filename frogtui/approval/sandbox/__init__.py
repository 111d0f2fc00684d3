"""The Bash sandbox: bubblewrap with the repository and the session's temp folder writable, home
hidden, no credentials, a seccomp filter and Landlock. The entry is ``make_sandbox`` (a
``Sandbox``: the command wrapper, or None and why); ``home_view`` is what the sandbox shows of
home, for the policy (a secret the sandbox hides is no secret to ask about).

Inside: ``bwrap`` (the wrapper and the probes), ``mounts`` (bubblewrap's mount options),
``home`` (home hidden, the toolchains kept), ``gitconfig`` (git's settings without credentials),
``gitlinks`` (submodules' git folders), ``view`` (what a command sees, read back from the mounts:
Read and Glob see the same), ``seccomp`` and ``landlock``; ``overlay`` is the
copy-on-write view a proposal runs on, ``fuse`` and ``direct`` its fallbacks (``views.make_view``
picks one).
"""

from __future__ import annotations

from frogtui.approval.sandbox.bwrap import BwrapWrapper, Sandbox, make_sandbox, probe_bwrap
from frogtui.approval.sandbox.gitconfig import sanitized_copy
from frogtui.approval.sandbox.home import HomeView, home_view, under
from frogtui.approval.sandbox.overlay import OverlayView
from frogtui.approval.sandbox.view import SandboxView
from frogtui.approval.sandbox.views import OFF_SETTING, make_view, proposals_line

__all__ = [
    "OFF_SETTING", "BwrapWrapper", "HomeView", "OverlayView", "Sandbox", "SandboxView", "home_view", "make_sandbox", "make_view",
    "probe_bwrap", "proposals_line", "sanitized_copy", "under",
]
