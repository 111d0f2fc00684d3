"""Which way a proposal runs here (``make_view``), and the line that says so (``proposals_line``).

In order, the first that works (``[bash] proposals = "auto"``, or ``true``):

1. ``overlay``: kernel overlayfs in a user namespace (``overlay``);
2. ``fuse``: fuse-overlayfs in a user namespace, where the kernel refuses its own (``fuse``);
3. ``direct``: the command runs on the tree itself and what is not accepted is put back from the
   checkpoint (``direct``, ``vcs.in_place``): in a git repository only.

``[bash] proposals = "overlay" | "fuse" | "undo"`` asks for one of them, and no other (off, said
why, where it does not work): for a machine where the person wants one, and for the tests, which
run the fallbacks on a machine where the kernel's overlay works.
"""
from __future__ import annotations

from pathlib import Path

from frogtui.approval.sandbox import fuse, overlay
from frogtui.approval.sandbox.bwrap import BwrapWrapper
from frogtui.approval.sandbox.direct import DirectView
from frogtui.approval.sandbox.fuse import FuseView
from frogtui.approval.sandbox.overlay import OverlayView

ProposalView = OverlayView | FuseView | DirectView
_ORDER = ("overlay", "fuse", "undo")


def make_view(sandbox: object, root: Path, setting: str = "auto", *, repository: bool = True) -> tuple[ProposalView | None, str]:
    """The way a proposal runs for ``sandbox`` (the session's ``Sandbox.wrap``) under ``setting``
    (``rules.PROPOSAL_WAYS``), and why the ways before it were not taken (or, with None, why none was);
    ``repository``: the tree is a git repository (running then undoing needs its checkpoints)."""
    if not isinstance(sandbox, BwrapWrapper):
        return None, "Bash has no bubblewrap sandbox"
    problems: list[str] = []
    for kind in _ORDER if setting in ("auto", "") else (setting,):
        view, why = _make(kind, sandbox, root, repository)
        if view is not None:
            return view, "; ".join(problems)
        problems.append(f"{_NAMES[kind]}: {why}" if setting in ("auto", "") else why)
    return None, "; ".join(problems)


def _make(kind: str, sandbox: BwrapWrapper, root: Path, repository: bool) -> tuple[ProposalView | None, str]:
    if kind == "undo":
        return (DirectView(sandbox), "") if repository else (None, "not a git repository (no checkpoint to undo from)")
    if sandbox.privileges == "caps":
        return None, "bubblewrap cannot make a user namespace here"
    if kind == "overlay":
        found = overlay.find_programs(root)
        if isinstance(found, str):
            return None, found
        problem = overlay.probe(*found)
        return (OverlayView(sandbox, *found), "") if problem is None else (None, problem)
    if kind == "fuse":
        programs = fuse.find_programs(root)
        if isinstance(programs, str):
            return None, programs
        problem = fuse.probe(programs)
        return (FuseView(sandbox, programs), "") if problem is None else (None, problem)
    raise ValueError(f"no such way to run a proposal: {kind!r}")


_NAMES = {"overlay": "kernel overlay", "fuse": "fuse-overlayfs", "undo": "run then undo"}
JUDGED = "a command the rules would ask about runs first {where}, network off, and what it did is judged by the Write rules"
ON_LINES = {
    "overlay": "proposals: on, kernel overlay (overlayfs in a user namespace): " + JUDGED.format(
        where="on a copy-on-write view of the repository") + " before any of it lands",
    "fuse": "proposals: on, fuse-overlayfs (in a user namespace{why}): " + JUDGED.format(
        where="on a copy-on-write view of the repository") + " before any of it lands",
    "undo": "proposals: WARNING on, run then undo from the checkpoint (no copy-on-write view here{why}): " + JUDGED.format(
        where="on the working tree itself after a checkpoint") + "; what is not accepted is put back from the checkpoint "
        "(except what git cannot hold: files it ignores that were there before, empty folders, folder modes; docs/APPROVALS.md)",
}
OFF_SETTING = "proposals: off ([bash] proposals = false): a command the rules would ask about is asked about by its text, before it runs"


def proposals_line(view: ProposalView | None, why: str) -> str:
    """Which way commands run as proposals here, or why not, in one line (the session log,
    ``frogtui doctor``); ``why``: ``make_view``'s."""
    if view is not None:
        return ON_LINES[view.kind].format(why=f"; {why}" if why else "")
    return f"proposals: WARNING off ({why}): a command the rules would ask about is asked about by its text, before it runs"
