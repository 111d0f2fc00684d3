"""The person's commands as data and words: the palette's entries (each names an ``action_*`` of
``FrogApp``, where the keys are bound) and what the chat and notifications say about them.
Imports nothing of the app."""
from __future__ import annotations

from typing import Any

PALETTE: tuple[tuple[str, str, str], ...] = (
    ("Stop", "Interrupt generation or the running command (Esc)", "interrupt"),
    ("New task", "Start a new conversation in a new session", "new_task"),
    ("Review & commit", "Accept or reject the changes hunk by hunk, then commit", "review"),
    ("Undo", "Undo the last change the agent made", "undo"),
    ("Run as N attempts", "Start the prompt with /attempts 4: the task runs as 4 attempts in worktrees, you pick one", "attempts"),
    ("Hand off", "Continue in a fresh conversation from a drafted hand-off you can edit (frees the context)", "handoff"),
    ("Initialise git repository", "Run git init here to turn on checkpoints, undo, review and commit", "git_init"),
    ("Toggle reasoning", "Show or hide the model's thinking", "toggle_reasoning"),
    ("Approval mode", "Cycle policy → edits → all → none", "cycle_approval_mode"),
    ("Open trajectory file", "Show this session's trajectory JSON", "open_trajectory"),
)
"""(title, help, action) for each palette entry; ``git_init`` is listed only outside git."""
NEEDS_NO_GIT = "git_init"


def mode_notice(mode: str) -> tuple[str, str, float]:
    """What the app says when the approval mode changes: (text, severity, seconds)."""
    if mode == "all":
        return ("Approval mode: all. Everything the floor and your deny rules allow now runs without asking; "
                "FrogNano has no safety alignment.", "warning", 6)
    if mode == "edits":
        return ("Approval mode: edits. Write and Edit inside the repository run without asking; commands as the rules say.",
                "information", 4)
    if mode == "none":
        return ("Approval mode: none. Every Write, Edit and Bash is denied; Read and Glob run when the rules allow them.", "information", 4)
    return (f"Approval mode: {mode}", "information", 2)


def files_phrase(verb: str, paths: list[str], shown: int = 3) -> str:
    """``restored a.py, b.py`` / ``removed 5 files (a, b, c…)``."""
    names = ", ".join(paths[:shown]) + ("…" if len(paths) > shown else "")
    return f"{verb} {names}" if len(paths) <= shown else f"{verb} {len(paths)} files ({names})"


def undone_files(result: Any) -> str:
    """``restored a.py; removed b.py``, or that nothing had changed."""
    done = [files_phrase(verb, paths) for verb, paths in (("restored", result.restored), ("removed", result.removed)) if paths]
    return "; ".join(done) if done else "no files had changed since"


def undo_toast(tool: str, result: Any) -> str:
    """The short toast of an undo (seen even when the chat is scrolled up)."""
    return f"Step {result.step} ({tool}) undone: {undone_files(result)}."


def undo_notice(tool: str, result: Any) -> str:
    """What an undo did, in the chat: the action taken back and the files it touched."""
    done = result.restored or result.removed
    what = undone_files(result)
    keep = (
        f" The files as they were just before are kept in {result.saved_ref}"
        f" (`git restore --source={result.saved_ref} -- FILE` brings one back)."
        if done else ""
    )
    return (
        f"Undid step {result.step} ({tool}): {what}.{keep} "
        "The model is told with your next message; ctrl+z again goes one action further back."
    )
