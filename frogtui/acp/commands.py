"""Slash commands an editor lists (``available_commands_update``): what the app's palette offers
that makes sense in an editor. They run without the model; the answer is one message."""
from __future__ import annotations

from typing import TYPE_CHECKING

from acp import schema

from frogtui.acp.limits import cap_text
from frogtui.acp.updates import fenced
from frogtui.errors import FrogtuiError

if TYPE_CHECKING:
    from frogtui.acp.session import AcpSession

COMMANDS = (
    ("review", "Summary of this session's changes (review and commit them hunk by hunk in the app: frogtui --resume, ctrl+r)"),
    ("undo", "Undo the last file-changing action of this session (Bash effects included); the model is told"),
    ("rules", "The approval rules in force (this session's own included), the approval mode and the sandbox"),
)
REVIEW_BYTES = 200_000


def available_commands() -> schema.AvailableCommandsUpdate:
    return schema.AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[schema.AvailableCommand(name=name, description=text) for name, text in COMMANDS],
    )


def command_name(text: str) -> str | None:
    """``review`` for ``/review`` (and ``/review extra words``); None when ``text`` is no command."""
    words = text.strip().split(maxsplit=1)
    if not words or not words[0].startswith("/"):
        return None
    name = words[0][1:]
    return name if name in dict(COMMANDS) else None


def run_command(name: str, session: AcpSession) -> str:
    """The answer to ``/name`` (blocking: git runs)."""
    if name == "review":
        return review_summary(session)
    if name == "undo":
        return undo_last(session)
    return rules_in_force(session)


def review_summary(session: AcpSession) -> str:
    from frogtui.vcs.hunks import section_path, split_sections
    from frogtui.vcs.ignored import describe

    core = session.core
    if not core.has_git:
        return "Review needs a git repository: this folder is not in one."
    patch = core.patch()
    ignored = core.ignored_changed()
    note = f"Changed under ignored paths (in no diff, and undo cannot restore them): {describe(ignored)}." if ignored else ""
    if not patch.strip():
        return "\n\n".join(line for line in ("No changes since this session started.", note) if line)
    lines = []
    for section in split_sections(patch):
        body = section.splitlines()
        added = sum(1 for line in body if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in body if line.startswith("-") and not line.startswith("---"))
        lines.append(f"- `{section_path(body[0] + chr(10))}` +{added} −{removed}")
    head = f"Changes since this session started ({len(lines)} file{'s' if len(lines) != 1 else ''}):"
    tail = "Review and commit them hunk by hunk in the app: `frogtui --resume`, then ctrl+r."
    return "\n".join([head, *lines, "", fenced(cap_text(patch, REVIEW_BYTES, "diff"), "diff"), "", *([note, ""] if note else []), tail])


def undo_last(session: AcpSession) -> str:
    core = session.core
    if not core.has_git:
        return "Undo needs a git repository (checkpoints live there): this folder is not in one."
    checkpoint = core.next_undo()
    if checkpoint is None:
        return "Nothing (more) to undo: no file-changing action ran in this session since it was opened."
    skipped = core.passed_over(checkpoint)
    try:
        result = core.undo(checkpoint)
    except FrogtuiError as err:
        return f"Undo failed: {err}"
    passed = "".join(f" Passed over step {c.step} ({c.tool}): it changed no file." for c in skipped)
    return f"Undid step {checkpoint.step} ({checkpoint.tool}).{passed} {result.summary} The model is told with your next message."


def rules_in_force(session: AcpSession) -> str:
    core = session.core
    rules = core.policy.rules
    lines = [f"Approval mode: `{session.approver.mode}`.", "", "Defaults inside the repository:"]
    lines += [f"- {tool}: {kind}" for tool, kind in rules.tools.items()]
    if rules.rules:
        lines += ["", "Rules (the strictest match wins; deny beats ask beats allow):"]
        lines += [f"- `{rule.text}` → {rule.decision}{f' ({rule.source})' if rule.source else ''}" for rule in rules.rules]
    sandbox = f"bubblewrap, network {'on' if core.sandbox_network else 'off'}" if core.sandboxed else "none"
    floor = "The floor (writes outside the repository, .git internals, secrets, `curl … | sh`) is refused whatever the rules say."
    lines += ["", f"Bash sandbox: {sandbox}. {floor}", core.python_line]
    lines += [f"Note: {note}" for note in session.notes]
    return "\n".join(lines)
