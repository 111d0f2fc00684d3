"""The session folder: where a session's trajectory and log live, outside the repository, in the
user's XDG state folder (``$XDG_STATE_HOME/frogtui/sessions/<id>/``)."""
from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frogtui.agent.journal import TrajectoryJournal, rebuild
from frogtui.agent.saved import Conversation
from frogtui.agent.trajectory import Trajectory, replay_lines, run_file, write_json_atomic, write_text_atomic
from frogtui.config import sessions_dir
from frogtui.errors import FrogtuiError

MAX_RUNS = 1000
"""Conversations followed along a session's hand-off chain at most."""


@dataclass(frozen=True)
class Session:
    id: str
    folder: Path
    repo: Path
    journals: dict[int, TrajectoryJournal] = field(default_factory=dict, init=False, compare=False, repr=False)
    """Each run's trajectory saved step by step (``trajectory.jsonl``…, ``replay.jsonl``)."""

    @property
    def trajectory_path(self) -> Path:
        return self.folder / "trajectory.json"

    @property
    def journal_path(self) -> Path:
        """The first conversation as it grows, one line per message, step and state update (read
        by ``load_chain``; ``trajectory.json`` is written from it at the end of each run)."""
        return self.run_journal_path(1)

    @property
    def log_path(self) -> Path:
        return self.folder / "session.log"

    @property
    def model_state_dir(self) -> Path:
        """Where a local model saves its state after each turn (``models/saved_state.py``), so
        that ``--resume`` evaluates only what was added since."""
        return self.folder / "model-state"

    @property
    def tmp_dir(self) -> Path:
        """The session's private temp folder (TMPDIR for Bash, writable in the sandbox)."""
        path = self.folder / "tmp"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @classmethod
    def create(cls, repo: Path, model_spec: str = "") -> Session:
        """A new session folder for ``repo``; ``model_spec`` is recorded so a resume uses the same model."""
        session_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        folder = sessions_dir() / session_id
        folder.mkdir(parents=True, exist_ok=True)
        meta = {"id": session_id, "repo": str(repo), "created": time.time(), "model": model_spec}
        (folder / "meta.json").write_text(json.dumps(meta) + "\n")
        return cls(id=session_id, folder=folder, repo=repo)

    @classmethod
    def latest(cls, repo: Path | None = None) -> Session | None:
        """The newest session (for ``repo`` when given), or None."""
        return next(cls.newest_first(repo), None)

    @classmethod
    def newest_first(cls, repo: Path | None = None) -> Iterator[Session]:
        """The sessions (of ``repo`` when given), newest first (by their creation time, then id:
        ids start with their second)."""
        root = sessions_dir()
        if not root.is_dir():
            return
        found = [session for session in map(cls._read, root.iterdir()) if session is not None
                 and (repo is None or os.path.realpath(session.repo) == os.path.realpath(repo))]
        yield from sorted(found, key=lambda session: (session.created, session.id), reverse=True)

    @classmethod
    def find(cls, session_id: str, repo: Path, *, flag: str = "--resume", conversation: bool = False) -> Session:
        """The session ``flag ID`` names, or with no id the latest of ``repo`` (``frogtui
        --resume``; with ``conversation``, the latest that holds one: ``frogtui run --continue``).

        Raises:
            FrogtuiError: there is no such session.
        """
        if session_id:
            session = cls.by_id(session_id)
            if session is None:
                raise FrogtuiError(f"no saved session {session_id!r} (frogtui sessions lists them)")
            return session
        session = next((s for s in cls.newest_first(repo) if s.has_conversation or not conversation), None)
        if session is None:
            raise FrogtuiError(f"no saved session for {repo}; start one without {flag}")
        return session

    @property
    def has_conversation(self) -> bool:
        """Whether a conversation was saved (a message was sent)."""
        return self.trajectory_path.is_file() or self.journal_path.is_file()

    @classmethod
    def by_id(cls, session_id: str) -> Session | None:
        """The session with this id (as printed on quit), or None."""
        if not session_id or "/" in session_id or session_id.startswith("."):
            return None
        return cls._read(sessions_dir() / session_id)

    @classmethod
    def _read(cls, folder: Path) -> Session | None:
        try:
            meta = json.loads((folder / "meta.json").read_text())
            return cls(id=str(meta["id"]), folder=folder, repo=Path(meta["repo"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _meta(self) -> dict[str, Any]:
        try:
            meta = json.loads((self.folder / "meta.json").read_text())
        except (OSError, ValueError):
            return {}
        return meta if isinstance(meta, dict) else {}

    @property
    def model_spec(self) -> str:
        """The model spec the session was started with ('' when not recorded)."""
        spec = self._meta().get("model", "")
        return spec if isinstance(spec, str) else ""

    @property
    def created(self) -> float:
        """When the session was created (seconds since the epoch; 0 when not recorded)."""
        created = self._meta().get("created")
        return float(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else 0.0

    @property
    def replay_path(self) -> Path:
        """The session's model turns as a replay file: ``frogtui run … --model replay:PATH``
        reproduces the session (a bug report, a demo)."""
        return self.folder / "replay.jsonl"

    def run_path(self, run: int) -> Path:
        """The trajectory file of the session's ``run``-th conversation (1: ``trajectory.json``)."""
        return self.folder / run_file(run)

    def run_journal_path(self, run: int) -> Path:
        """The journal of the ``run``-th conversation (``trajectory.jsonl``, ``trajectory-2.jsonl``…)."""
        return self.run_path(run).with_suffix(".jsonl")

    def save_trajectory(self, trajectory: Trajectory | dict[str, Any], *, replay_before: str = "") -> None:
        """Save a conversation after a step. A ``Trajectory`` is appended to its run's journal
        (constant cost per step; the replay file gets its new turns) and, once the run has ended
        (``partial`` false), written whole to its run's file; a dict is written whole (and replaces
        that run's journal). The replay file holds ``replay_before`` (the earlier conversations'
        turns, after a hand-off) then this conversation's turns."""
        if isinstance(trajectory, Trajectory):
            run = trajectory.run
            if run not in self.journals:
                self.journals[run] = TrajectoryJournal(self.run_journal_path(run), self.replay_path)
            self.journals[run].save(trajectory, replay_before=replay_before)
            if not trajectory.partial:
                write_json_atomic(self.run_path(run), trajectory.as_dict())
            return
        run = Conversation.read(trajectory).run
        write_json_atomic(self.run_path(run), trajectory)
        write_text_atomic(self.replay_path, replay_before + replay_lines(trajectory))
        self.run_journal_path(run).unlink(missing_ok=True)
        self.journals.pop(run, None)

    def _read_run(self, path: Path) -> Any:
        """A run's conversation: from its journal (up to the last step saved, also after a crash),
        else from its file.

        Raises:
            OSError, ValueError: neither can be read.
        """
        data = rebuild(path.with_suffix(".jsonl"))
        if data is not None:
            return data
        return json.loads(path.read_text(encoding="utf-8"))

    def load_chain(self) -> list[Conversation]:
        """The session's conversations in order (``agent.saved``): ``trajectory.json``, then each
        ``next_trajectory`` link (a hand-off), while the linked file exists, reads as a
        conversation and links back."""
        chain: list[Conversation] = []
        path: Path | None = self.trajectory_path
        while path is not None and len(chain) < MAX_RUNS:
            try:
                conversation = Conversation.read(self._read_run(path))
            except (OSError, ValueError):
                break
            if chain and conversation.previous != run_file(chain[-1].run):
                break
            chain.append(conversation)
            link = conversation.next
            # only a name of this session's own files: a link is never a path elsewhere
            path = self.folder / link if link is not None and link == run_file(len(chain) + 1) else None
        return chain

    def load_trajectory(self) -> Conversation | None:
        """The session's latest conversation (the end of the hand-off chain), or None."""
        chain = self.load_chain()
        return chain[-1] if chain else None

    def write_trajectory_file(self, run: int = 1) -> None:
        """Bring a run's file up to date with its journal (before showing it mid-run)."""
        data = rebuild(self.run_journal_path(run))
        if data is not None:
            write_json_atomic(self.run_path(run), data)

    @property
    def notices_path(self) -> Path:
        return self.folder / "notices.jsonl"

    def append_notice(self, text: str) -> None:
        """Keep a notice the app showed about something the person did (an undo), so a resumed
        session shows it again in place of the text the model was told."""
        with self.notices_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"text": text}) + "\n")

    def notices(self) -> list[str]:
        """The kept notices, oldest first ([] when none or unreadable)."""
        try:
            lines = self.notices_path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                out.append(item["text"])
        return out

    def log(self, line: str) -> None:
        with self.log_path.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")
