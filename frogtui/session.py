"""The session folder: where a session's trajectory and log live, outside the repository, in the
user's XDG state folder (``$XDG_STATE_HOME/frogtui/sessions/<id>/``)."""
from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogtui.agent.trajectory import Trajectory, replay_lines, run_file, write_json_atomic, write_text_atomic
from frogtui.config import sessions_dir

MAX_RUNS = 1000
"""Conversations followed along a session's hand-off chain at most."""


def path_name(data: dict[str, Any]) -> str:
    """The file name of a loaded conversation (from its ``run``)."""
    run = data.get("run")
    return run_file(run if isinstance(run, int) else 1)


@dataclass(frozen=True)
class Session:
    id: str
    folder: Path
    repo: Path

    @property
    def trajectory_path(self) -> Path:
        return self.folder / "trajectory.json"

    @property
    def log_path(self) -> Path:
        return self.folder / "session.log"

    @property
    def tmp_dir(self) -> Path:
        """The session's private temp folder (TMPDIR for Bash, writable in the sandbox)."""
        path = self.folder / "tmp"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @classmethod
    def create(cls, repo: Path) -> Session:
        session_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        folder = sessions_dir() / session_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").write_text(json.dumps({"id": session_id, "repo": str(repo), "created": time.time()}) + "\n")
        return cls(id=session_id, folder=folder, repo=repo)

    @classmethod
    def latest(cls, repo: Path | None = None) -> Session | None:
        """The newest session (for ``repo`` when given), or None."""
        root = sessions_dir()
        if not root.is_dir():
            return None
        for folder in sorted(root.iterdir(), reverse=True):
            meta_path = folder / "meta.json"
            try:
                meta = json.loads(meta_path.read_text())
            except (OSError, ValueError):
                continue
            if repo is None or os.path.realpath(meta.get("repo", "")) == os.path.realpath(repo):
                return cls(id=meta["id"], folder=folder, repo=Path(meta["repo"]))
        return None

    @property
    def replay_path(self) -> Path:
        """The session's model turns as a replay file: ``frogtui run … --model replay:PATH``
        reproduces the session (a bug report, a demo)."""
        return self.folder / "replay.jsonl"

    def run_path(self, run: int) -> Path:
        """The trajectory file of the session's ``run``-th conversation (1: ``trajectory.json``)."""
        return self.folder / run_file(run)

    def save_trajectory(self, trajectory: Trajectory | dict[str, Any], *, replay_before: str = "") -> None:
        """Write a conversation's trajectory to its run's file, and the session's replay file:
        ``replay_before`` (the earlier conversations' turns, after a hand-off) then its turns."""
        data = trajectory.as_dict() if isinstance(trajectory, Trajectory) else trajectory
        run = data.get("run")
        write_json_atomic(self.run_path(run if isinstance(run, int) else 1), data)
        write_text_atomic(self.replay_path, replay_before + replay_lines(data))

    def load_chain(self) -> list[dict[str, Any]]:
        """The session's conversations in order: ``trajectory.json``, then each
        ``next_trajectory`` link (a hand-off), while the linked file exists and links back."""
        chain: list[dict[str, Any]] = []
        path: Path | None = self.trajectory_path
        while path is not None and len(chain) < MAX_RUNS:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                break
            if not isinstance(data, dict) or (chain and data.get("previous_trajectory") != path_name(chain[-1])):
                break
            chain.append(data)
            link = data.get("next_trajectory")
            # only a name of this session's own files: a link is never a path elsewhere
            path = self.folder / link if isinstance(link, str) and link == run_file(len(chain) + 1) else None
        return chain

    def load_trajectory(self) -> dict[str, Any] | None:
        """The session's latest conversation (the end of the hand-off chain), or None."""
        chain = self.load_chain()
        return chain[-1] if chain else None

    def log(self, line: str) -> None:
        with self.log_path.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
