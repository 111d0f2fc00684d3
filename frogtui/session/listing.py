"""``frogtui sessions``: the saved sessions, newest first, each read through the one reader
(``Session.load_chain``, ``agent.saved``): its id, when it started, its repository, its task, its
steps, how it ended and the files it changed. ``--json`` prints them as one JSON array."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from frogtui.agent.handoff import changed_files
from frogtui.arguments import Parser
from frogtui.config import repo_folder, sessions_dir
from frogtui.errors import FrogtuiError
from frogtui.session.folder import Session
from frogtui.terminal_text import ControlFreeStream

TASK_WIDTH = 60
"""The task column is cut to this many characters (``--json`` keeps it whole)."""


@dataclass(frozen=True)
class SessionSummary:
    """One saved session, as ``frogtui sessions`` lists it."""

    id: str
    created: str
    """When it started, local time, ``YYYY-MM-DD HH:MM:SS`` ('' when not recorded)."""
    repository: str
    folder: str
    task: str
    """What the person asked first (without the project instructions)."""
    steps: int
    """Steps over all its conversations."""
    conversations: int
    """1, and one more for each hand-off."""
    exit_reason: str
    """How its last run ended (``agent``, ``cancelled``…), ``running`` while one runs or after a crash."""
    files_changed: list[str]
    """The files its changes touch (its last run's patch; [] outside git)."""


def summary(session: Session) -> SessionSummary | None:
    """The listing of ``session``, None when it holds no conversation (nothing was sent)."""
    chain = session.load_chain()
    if not chain:
        return None
    last = chain[-1]
    created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(session.created)) if session.created else ""
    ended = last.exit_reason if last.exit_reason is not None and not last.partial else "running"
    return SessionSummary(session.id, created, str(session.repo), str(session.folder), chain[0].task, sum(len(c.steps) for c in chain),
                          len(chain), ended, [path for path, _, _ in changed_files(last.output_patch)])


def summaries(repo: Path | None = None) -> list[SessionSummary]:
    """The sessions (of ``repo`` when given) that hold a conversation, newest first; an attempt's
    own session (its repository is a worktree in the state folder) is left out."""
    state = sessions_dir().resolve()
    found = []
    for session in Session.newest_first(repo):
        if Path(session.repo).resolve().is_relative_to(state):
            continue
        listed = summary(session)
        if listed is not None:
            found.append(listed)
    return found


def table(rows: list[SessionSummary]) -> list[str]:
    """The listing as text lines, a header first."""
    lines = [f"{'ID':<22}  {'STARTED':<19}  {'STEPS':>5}  {'FILES':>5}  {'END':<21}  REPOSITORY  TASK"]
    for row in rows:
        task = " ".join(row.task.split())
        task = task if len(task) <= TASK_WIDTH else task[: TASK_WIDTH - 1] + "…"
        lines.append(f"{row.id:<22}  {row.created:<19}  {row.steps:>5}  {len(row.files_changed):>5}  {row.exit_reason:<21}  "
                     f"{row.repository}  {task}")
    return lines


def build_parser() -> Parser:
    parser = Parser(prog="frogtui sessions", description="List the saved sessions, newest first.")
    parser.add_argument("--repo", help="only the sessions of this repository (default: every repository)")
    parser.add_argument("--json", action="store_true", help="print them as a JSON array (the fields of docs/HEADLESS.md)")
    return parser


def main(argv: list[str], stdout: TextIO | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = ControlFreeStream(stdout or sys.stdout)  # the tasks are what people and models wrote
    try:
        rows = summaries(repo_folder(args.repo) if args.repo is not None else None)
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=ControlFreeStream(sys.stderr))
        return 2
    if args.json:
        print(json.dumps([asdict(row) for row in rows], ensure_ascii=False), file=out)
        return 0
    if not rows:
        print("no saved sessions" + (f" for {args.repo}" if args.repo is not None else ""), file=out)
        return 0
    for line in table(rows):
        print(line, file=out)
    return 0
