"""Leaf's observation vocabulary, both ways: the strings a call's result is shown to the model in
(LEAF.md, byte for byte: FrogNano was trained on them), and ``classify``, which reads one back
where only the text is left (a saved transcript). A live call's outcome travels as data
(``ToolOutcome``) beside its observation, and is never parsed back from it.

Every module that writes an observation the model sees, or reads one, goes through here.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

OutcomeKind = Literal["ok", "exit", "timeout", "interrupted", "denied", "error", "not_run"]
"""How a call ended: it worked (``ok``), a command exited non-zero (``exit``), it timed out, the
person interrupted it, it was denied, it failed with an error, or it was not run for another
reason (a failed checkpoint)."""


@dataclass(frozen=True)
class ToolOutcome:
    """How one call ended, as data, beside the observation the model sees."""

    observation: str
    ok: bool = True
    """The call ran and worked (a command exited 0); False when it failed or did not run."""
    exit_code: int | None = None
    """A command's exit code; None for the other tools, a timeout, an interrupt and a call that did not run."""
    error: str | None = None
    """The exception type of an error observation (``FileNotFoundError``), None otherwise."""
    stale: bool = False
    """A Write/Edit was not applied because the file changed since its preview."""
    cancelled: bool = False
    """The person interrupted it (while it ran, or before it ran)."""
    timed_out: bool = False
    ran: bool = True
    """False for a call that did not run (invalid, denied, interrupted before it ran)."""
    denied: bool = False
    """A person, a rule or the floor said no."""

    @property
    def kind(self) -> OutcomeKind:
        if self.denied:
            return "denied"
        if self.cancelled:
            return "interrupted"
        if self.timed_out:
            return "timeout"
        if self.error is not None:
            return "error"
        if not self.ran:
            return "not_run"
        if self.exit_code not in (None, 0):
            return "exit"
        return "ok" if self.ok else "error"

    @classmethod
    def failed(cls, err: BaseException, *, stale: bool = False) -> ToolOutcome:
        """A call that raised ``err``: Leaf's ``ExceptionType: message``."""
        return cls(error_observation(err), ok=False, error=type(err).__name__, stale=stale)

    @classmethod
    def not_run(cls, observation: str, *, denied: bool = False, cancelled: bool = False) -> ToolOutcome:
        """A call that did not run (invalid, denied, interrupted before it ran)."""
        error = error_kind(observation) if not (denied or cancelled) else None
        return cls(observation, ok=False, ran=False, denied=denied, cancelled=cancelled, error=error)


# producing ---------------------------------------------------------------------------------------
INTERRUPTED = "Interrupted by the user"
"""A command's head when the person interrupted it while it ran."""
INTERRUPTED_BEFORE_RUN = "Interrupted by the user before it ran"
NOT_RUN_AFTER_FAILED_CHECKPOINT = "Not run: the run stopped at a failed checkpoint"
NO_READ_ONLY_SANDBOX = "PermissionError: no read-only sandbox to run this command in; it did not run"
NO_FILES_MATCHED = "No files matched."
_EXIT_HEAD = "Exit code: "
_TIMEOUT_HEAD = "Timed out after "
_EDITED_NOTE = "Note: the user edited this call before it ran"


def error_text(kind: str, message: object) -> str:
    """Leaf's error shape: ``ExceptionType: message``."""
    return f"{kind}: {message}"


def error_observation(err: BaseException) -> str:
    """An exception as Leaf shows it: ``ValueError: old_string was not found``."""
    return error_text(type(err).__name__, err)


def unknown_tool(name: str) -> str:
    return f"Unknown tool: {name}"


def exit_head(code: int) -> str:
    return f"{_EXIT_HEAD}{code}"


def timeout_head(seconds: float) -> str:
    return f"{_TIMEOUT_HEAD}{seconds:.1f}s"


STREAM_HEADINGS = ("STDOUT:", "STDERR:")
"""The lines that open a command's two streams in its observation."""


def bash_observation(head: str, stdout: str, stderr: str) -> str:
    """A command's observation: its head (exit code, timeout, interrupt), then both streams."""
    return f"{head}\n{STREAM_HEADINGS[0]}\n{stdout}\n{STREAM_HEADINGS[1]}\n{stderr}"


def truncated_chars(dropped: int) -> str:
    """The ending of a text cut after ``dropped`` more characters."""
    return f"\n[truncated {dropped} chars]"


def truncated_bytes(dropped: int) -> str:
    """The line between the head and the tail of a command's stream that lost ``dropped`` bytes."""
    return f"\n[truncated {dropped} bytes]\n"


def truncated_about(more: int) -> str:
    """The ending of a Read of a file too big to count exactly what was cut."""
    return f"\n[truncated: the file goes on for about {more} more bytes]"


def wrote(path: str, size: int) -> str:
    return f"Wrote {path} ({size} bytes)."


def edited(path: str, replacements: int) -> str:
    return f"Edited {path} ({replacements} replacement{'s' if replacements != 1 else ''})."


def more_files(count: int) -> str:
    return f"... {count} more files"


def denied_by_person(reason: str) -> str:
    text = "The user denied this tool call."
    return f"{text} Reason: {reason}" if reason else text


def denied_by_policy(reason: str) -> str:
    return error_text("PermissionError", reason or "denied by policy")


def checkpoint_failed(err: object) -> str:
    return f"not run: the checkpoint before it failed: {err}"


def kept_changing(path: str) -> str:
    return error_text("RuntimeError", f"{path} kept changing while waiting for approval; nothing was written")


def edited_note(arguments: dict[str, Any]) -> str:
    """The line before the observation of a call the person edited before it ran."""
    return f"{_EDITED_NOTE}; it ran with {json.dumps(arguments, ensure_ascii=False)}\n"


# reading back ------------------------------------------------------------------------------------
_ERROR = re.compile(r"(\w*(?:Error|Exception)): ")
_EXIT = re.compile(r"Exit code: (-?\d+)")


@dataclass(frozen=True)
class Reading:
    """What an observation's text says about how its call ended."""

    kind: OutcomeKind
    exit_code: int | None = None


def output_lines(observation: str) -> list[str]:
    """A command's observation as its non-empty lines, without the heading of an empty stream at
    the end (what a person wants to see of its output's tail)."""
    lines = [line for line in observation.splitlines() if line.strip()]
    while lines and lines[-1].strip() in STREAM_HEADINGS:
        lines.pop()
    return lines


def error_kind(observation: str) -> str | None:
    """The exception type an error observation starts with, or None."""
    match = _ERROR.match(observation)
    return match.group(1) if match else None


def classify(observation: str, *, command: bool) -> Reading:
    """How a call ended, read from its observation (a saved transcript has nothing else).
    ``command``: the call ran a command (an ``execute`` tool), whose observation starts with an
    exit code, a timeout or an interrupt; another tool's output starts with a path, whatever
    its name says."""
    head = observation.lstrip()
    if head.startswith(_EDITED_NOTE):
        head = head.partition("\n")[2]
    if head.startswith(("The user denied", "PermissionError: ")):
        return Reading("denied")
    if head.startswith(INTERRUPTED):
        return Reading("interrupted")
    if head.startswith(("Not run: ", "not run: ")):
        return Reading("not_run")
    if command:
        if head.startswith(_TIMEOUT_HEAD):
            return Reading("timeout")
        match = _EXIT.match(head)
        if match:
            code = int(match.group(1))
            return Reading("ok" if code == 0 else "exit", code)
    if head.startswith("Unknown tool: ") or _ERROR.match(head):
        return Reading("error")
    return Reading("ok")
