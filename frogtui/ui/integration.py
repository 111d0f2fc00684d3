"""Where the app meets the other packages: the approval policy, the sandbox, checkpoints (undo)
and the review screen. Each function degrades to a clear message when its package does not
offer the piece in this build."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from textual.screen import Screen

from frogtui.config import Config
from frogtui.protocol import ToolCall
from frogtui.session import Session
from frogtui.tools.bash import CommandWrapper
from frogtui.ui.approver import BuiltinPolicy, UiPolicy


def make_policy(config: Config) -> UiPolicy:
    """The approval policy for the app."""
    return BuiltinPolicy()


def sandbox_wrapper(config: Config) -> CommandWrapper | None:
    """The argv wrapper that runs Bash in the sandbox, or None when Bash runs unsandboxed."""
    return None


def make_before_action(root: Path, session: Session) -> Callable[[int, ToolCall], None] | None:
    """The hook called before each mutating tool (a checkpoint for undo), or None."""
    return None


def review_screen(config: Config, session: Session) -> Screen[Any] | str:
    """The review & commit screen, or a one-line reason why it cannot open."""
    try:
        from frogtui.ui.review import ReviewScreen  # type: ignore[import-not-found]
    except ModuleNotFoundError as err:
        if err.name != "frogtui.ui.review":
            raise
        return "Review & commit is not available in this build."
    return ReviewScreen(config.repo)


def undo_last_change(config: Config, session: Session) -> str:
    """Undo the agent's last change; returns what happened, for the person."""
    return "Undo is not available in this build."
