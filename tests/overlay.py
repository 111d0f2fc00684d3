"""Whether a proposal's copy-on-write view works here (bwrap, unshare and an overlay in a user
namespace): the proposal tests skip, saying why, where it does not."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from frogtui.approval.sandbox.overlay import find_programs, probe


def overlay_problem() -> str | None:
    """Why no copy-on-write view can be made here, or None."""
    if shutil.which("bwrap") is None:
        return "no bwrap"
    found = find_programs(Path("/nonexistent-frogtui-tree"))
    return found if isinstance(found, str) else probe(*found)


needs_overlay = pytest.mark.skipif(overlay_problem() is not None, reason=f"no copy-on-write view here: {overlay_problem()}")
