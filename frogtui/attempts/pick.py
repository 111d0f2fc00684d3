"""Applying one attempt to the person's working tree: one checkpointed step of the parent session
(its checkpoint holds the tree just before, so undo puts it back and review shows the change)."""
from __future__ import annotations

from frogtui.attempts.results import AttemptResult
from frogtui.protocol import ToolCall
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.repository import RepoState
from frogtui.vcs.worktrees import apply_change

PICK_STEP = 1
"""The parent session's step that applies the pick (the attempts themselves ran in their own sessions)."""


def apply_pick(state: RepoState | Checkpoints, chosen: AttemptResult, step: int = PICK_STEP) -> None:
    """Checkpoint the working tree as step ``step`` of a session (``state``: a new parent session's
    start; or, in the app, the session's own ``Checkpoints``, so its undo and review take the pick
    as one of its steps), then write attempt ``chosen``'s change into it (the index is left alone).

    Raises:
        WorktreeFailed: the change does not apply (the working tree changed since the base).
        FrogtuiError: git could not take the checkpoint (nothing was written).
    """
    checkpoints = state if isinstance(state, Checkpoints) else Checkpoints(state)
    call = ToolCall(id=f"attempt-{chosen.number}", name="Attempt", arguments={"attempt": chosen.number})
    checkpoints.before_action(step, call)
    checkpoints.flush()
    apply_change(state.repo, chosen.commit, chosen.diff_file)
