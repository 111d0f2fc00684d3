"""Reading a session's attempts back (``--resume``): ``attempts.json`` in the parent session folder
(written by ``AttemptsRun.record``), each attempt checked against the repository as it is now —
its commit may be gone (an app run keeps none as a branch; a kept branch may have been deleted and
pruned), its branch deleted. An app session whose last task ran as attempts links to their parent
session (``LINK``)."""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from frogtui.agent.trajectory import write_json_atomic
from frogtui.attempts.check import CheckResult
from frogtui.attempts.pick import PICK_STEP, apply_pick
from frogtui.attempts.results import AttemptResult
from frogtui.session import Session
from frogtui.vcs.checkpoints import Checkpoints
from frogtui.vcs.worktrees import WorktreeFailed, branch_exists, saved_change

RECORD = "attempts.json"
"""The parent session's record of its attempts (their sessions, results, the pick)."""
LINK = "last_attempts.json"
"""In an app session's folder: ``{"session": ID}``, the parent session of the attempts its last
task ran as (removed when a plain task follows)."""


@dataclass
class SavedAttempts:
    """A finished attempts run as recorded, with what is left of each attempt in the repository."""

    session: str
    """The parent session (the folder holding ``attempts.json``)."""
    task: str
    check: str
    base: str
    picked: int | None
    results: list[AttemptResult]
    gone: dict[int, str]
    """Attempts whose change cannot be shown or applied any more, with why."""
    notes: dict[int, str]
    """What else changed since (a kept branch deleted), by attempt."""
    folder: Path

    def apply(self, number: int, checkpoints: Checkpoints | None, step: int = PICK_STEP) -> AttemptResult:
        """Apply attempt ``number`` as step ``step`` of the session whose ``checkpoints`` are given,
        and record the pick.

        Raises:
            FrogtuiError: it is gone, it does not apply, or git failed.
        """
        if number in self.gone:
            raise WorktreeFailed(f"attempt {number} is {self.gone[number]}")
        if checkpoints is None:
            raise WorktreeFailed("the session has no checkpoints yet (not a git repository, or still being prepared)")
        chosen = next(r for r in self.results if r.number == number)
        apply_pick(checkpoints, chosen, step)
        self.picked = number
        try:
            data = json.loads((self.folder / RECORD).read_text())
            data["picked"] = number
            write_json_atomic(self.folder / RECORD, data)
        except (OSError, ValueError):
            pass  # the pick is applied; only the record of it is missing
        return chosen


def link(app_session: Session, parent_id: str) -> None:
    """Record in ``app_session`` that its last task ran as the attempts of ``parent_id``."""
    (app_session.folder / LINK).write_text(json.dumps({"session": parent_id}) + "\n")


def unlink(app_session: Session) -> None:
    """A plain task followed: a resume no longer reopens the attempts' table."""
    (app_session.folder / LINK).unlink(missing_ok=True)


def last_attempts(session: Session) -> Path | None:
    """The folder of the attempts ``session``'s last task ran as: its own (a headless parent
    session) or the one it links to (an app session); None when its last task was not attempts."""
    if (session.folder / RECORD).is_file():
        return session.folder
    try:
        parent = Session.by_id(str(json.loads((session.folder / LINK).read_text())["session"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return parent.folder if parent is not None and (parent.folder / RECORD).is_file() else None


def _result(data: dict[str, Any]) -> AttemptResult:
    names = {f.name for f in fields(AttemptResult)} - {"check"}
    result = AttemptResult(**{k: v for k, v in data.items() if k in names})
    check = data.get("check")
    if isinstance(check, dict):
        result.check = CheckResult(bool(check.get("passed")), check.get("exit_code"), str(check.get("tail") or ""))
    return result


def load(folder: Path, repo: Path) -> SavedAttempts | None:
    """The attempts recorded in ``folder``, checked against ``repo`` (blocking: git); None when the
    record is missing or unreadable."""
    try:
        data = json.loads((folder / RECORD).read_text())
        results = [_result(item) for item in data["results"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    base = str(data.get("base_commit") or "")
    gone: dict[int, str] = {}
    notes: dict[int, str] = {}
    for result in results:
        if result.exit_reason in ("running", "stopped") and not result.commit:
            continue  # it never ended: nothing of it was kept
        if result.commit:
            if not saved_change(repo, base, result.commit):
                gone[result.number] = ("gone: its branch was deleted and its commit is no longer in the repository" if result.branch
                                       else "gone: its commit is no longer in the repository")
                continue
            if result.diff_file and not Path(result.diff_file).is_file():
                result.diff_file = ""  # removed since: a pick streams it from the commit
        if result.branch and not branch_exists(repo, result.branch):
            notes[result.number] = f"branch {result.branch} deleted"
    picked = data.get("picked")
    return SavedAttempts(folder.name, str(data.get("task") or ""), str(data.get("check") or ""), base,
                         picked if isinstance(picked, int) else None, results, gone, notes, folder)
