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

from frogtui.agent.trajectory import Trajectory, replay_lines, write_json_atomic, write_text_atomic
from frogtui.config import sessions_dir


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

    def save_trajectory(self, trajectory: Trajectory | dict[str, Any]) -> None:
        data = trajectory.as_dict() if isinstance(trajectory, Trajectory) else trajectory
        write_json_atomic(self.trajectory_path, data)
        write_text_atomic(self.replay_path, replay_lines(data))

    def load_trajectory(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.trajectory_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def log(self, line: str) -> None:
        with self.log_path.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
