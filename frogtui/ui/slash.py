"""Slash commands in the app's prompt (issue 34, item 2): the table, the parser and the
completion as typed. No Textual widget here: the app (``ui/app.py``) runs what a command names.

A message whose first word is ``/name`` (a word without another ``/``, so ``/usr/bin/env is
broken`` is a task) is a command: a known one runs, an unknown one is an error and nothing is sent
to the model."""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.suggester import Suggester

if TYPE_CHECKING:  # the session's modules are imported after the first paint
    from frogtui.session.mentions import Mentioned


@dataclass(frozen=True)
class SlashCommand:
    """One command: its name, its argument's shape ('' for none) and one line of help."""

    name: str
    argument: str
    help: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "", "List these commands"),
    SlashCommand("clear", "", "Start a fresh conversation in this session (undo, review and commit go on)"),
    SlashCommand("model", "[SPEC]", "Show the model; with SPEC, start a new session on that model"),
    SlashCommand("diff", "", "Show this session's changes so far"),
    SlashCommand("undo", "", "Undo the last change the agent made (ctrl+z)"),
    SlashCommand("compact", "", "Hand off: continue in a fresh conversation from a summary you can edit"),
    SlashCommand("init", "", "Ask the model to draft AGENTS.md (its Write goes through the gate)"),
    SlashCommand("attempts", "N [--check \"CMD\"] TASK", "Run TASK as N attempts in worktrees and pick one"),
)
NAMES = {command.name: command for command in COMMANDS}
INIT_TASK = (
    "Draft an AGENTS.md for this repository: read its README, build and test files and a few source files, "
    "then write AGENTS.md at the repository root with what an agent working here needs: how to set up, build, "
    "test and lint (the exact commands), the layout, and the project's conventions. Keep it short and factual."
)
"""What ``/init`` asks the model (a task like any other: its Write is asked about or allowed by the rules)."""

_WORD = re.compile(r"^/(\S*)(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True)
class Slash:
    """A known command as typed: its name and the rest of the line ('' when none)."""

    name: str
    argument: str = ""


@dataclass(frozen=True)
class SlashError:
    """A message that looks like a command but is none, and what to tell the person."""

    message: str


def parse(text: str) -> Slash | SlashError | None:
    """The command ``text`` gives, an error for an unknown or malformed one, or None for a task."""
    match = _WORD.match(text.strip())
    if match is None:
        return None
    word, argument = match.group(1), (match.group(2) or "").strip()
    if "/" in word:  # a path: a task that starts with one
        return None
    command = NAMES.get(word)
    if command is None:
        near = [c.name for c in COMMANDS if c.name.startswith(word[:1])] if word else []
        hint = f" (did you mean /{' or /'.join(near)}?)" if near and word else ""
        return SlashError(f"Unknown command /{word}{hint}. /help lists the commands; nothing was sent to the model.")
    if argument and not command.argument:
        return SlashError(f"/{word} takes no argument: {help_line(command)}")
    return Slash(word, argument)


def help_line(command: SlashCommand) -> str:
    """``/model [SPEC]  Show the model; …``."""
    shown = f"/{command.name} {command.argument}".rstrip()
    return f"{shown:<34} {command.help}"


def help_text() -> str:
    """What ``/help`` shows in the chat."""
    lines = [help_line(command) for command in COMMANDS]
    lines.append(f"{'@path':<34} Attach a file's text to your message (as Read shows it; the rules and the floor apply)")
    return "Commands:\n" + "\n".join(lines)


SKIPPED_FOLDERS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache", "target"})
MAX_FILES = 20_000
"""Completion lists at most this many files of the repository (a walk, bounded)."""


def repository_files(root: os.PathLike[str] | str, limit: int = MAX_FILES) -> list[str]:
    """The repository's file paths relative to ``root`` for ``@`` completion, sorted, without
    ``.git``, virtualenvs and caches, following no symbolic link to a folder, at most ``limit``."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS)
        rel = os.path.relpath(folder, root)
        for name in sorted(files):
            found.append(name if rel == "." else os.path.join(rel, name))
            if len(found) >= limit:
                return found
    return found


class PromptSuggester(Suggester):
    """Completes, as typed, a command name after a leading ``/`` and a repository path after an
    ``@`` that starts the last word (the rest shown dim; Right accepts it, as in any Input)."""

    def __init__(self, files: Callable[[], list[str]]) -> None:
        super().__init__(use_cache=False, case_sensitive=True)
        self._files = files

    async def get_suggestion(self, value: str) -> str | None:
        if value.startswith("/") and " " not in value:
            for command in COMMANDS:
                if command.name.startswith(value[1:]) and command.name != value[1:]:
                    return f"/{command.name}"
            return None
        word_start = max(value.rfind(" "), value.rfind("\n")) + 1
        word = value[word_start:]
        if not word.startswith("@") or len(word) < 2:
            return None
        typed = word[1:]
        for path in self._files():
            if path.startswith(typed) and path != typed:
                return value[:word_start] + "@" + path
        return None


def attachments_notice(mentioned: Mentioned) -> str:
    """What the chat says under a message with ``@path`` mentions: each file attached and its size,
    each one not attached and why."""
    lines = [f"Attached @{a.path} ({a.chars:,} characters)" for a in mentioned.attached]
    return "\n".join([*lines, *mentioned.refused])
