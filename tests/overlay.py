"""Whether a proposal's copy-on-write view works here (bwrap, unshare and an overlay in a user
namespace; fuse-overlayfs for its fallback): the proposal tests skip, saying why, where it does
not. ``WAYS`` runs a test on each way a proposal can run (``[bash] proposals = "overlay" | "fuse" |
"undo"``): the fallbacks are forced by the setting on a machine where the kernel's overlay works."""
from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest

from frogtui.approval.sandbox import fuse
from frogtui.approval.sandbox.overlay import find_programs, probe


@functools.cache
def overlay_problem() -> str | None:
    """Why no copy-on-write view can be made here, or None."""
    if shutil.which("bwrap") is None:
        return "no bwrap"
    found = find_programs(Path("/nonexistent-frogtui-tree"))
    return found if isinstance(found, str) else probe(*found)


@functools.cache
def fuse_problem() -> str | None:
    """Why no fuse-overlayfs view can be made here, or None."""
    if shutil.which("bwrap") is None:
        return "no bwrap"
    programs = fuse.find_programs(Path("/nonexistent-frogtui-tree"))
    return programs if isinstance(programs, str) else fuse.probe(programs)


needs_overlay = pytest.mark.skipif(overlay_problem() is not None, reason=f"no copy-on-write view here: {overlay_problem()}")
needs_fuse = pytest.mark.skipif(fuse_problem() is not None, reason=f"no fuse-overlayfs view here: {fuse_problem()}")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bwrap")
WAYS = [
    pytest.param("overlay", marks=needs_overlay, id="overlay"),
    pytest.param("fuse", marks=[needs_fuse, pytest.mark.slow], id="fuse"),
    pytest.param("undo", marks=needs_bwrap, id="undo"),
]
"""The ways a proposal runs (``approval.sandbox.views``), each skipped where it cannot. The
default tier runs the kernel's overlay and run then undo (the first and the last way); the
fuse-overlayfs way, which lands through the same code as the kernel's, runs in the slow tier
(issue 29's three minutes; ``test_proposal_ways.py`` keeps its own fuse tests in the default one)."""
