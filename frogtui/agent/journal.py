"""The trajectory saved incrementally: an append-only journal, so a step's bookkeeping costs the
same at step 200 as at step 1.

``trajectory.jsonl`` holds one JSON object per line: ``{"message": …}`` for each transcript message
in order, ``{"step": …}`` for each step record (a later line for the same step replaces the earlier
one) and ``{"state": …}`` with the top-level fields (later ones update earlier ones; ``tools`` is only in
the first). ``rebuild`` turns it back
into the Leaf trajectory (``Trajectory.as_dict``); ``replay.jsonl`` grows by one line per step the
same way. A line cut short by a crash is skipped.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from frogtui.agent.trajectory import (
    Trajectory,
    in_leaf_order,
    json_text,
    replay_lines,
    write_text_atomic,
)


def _line(kind: str, value: Any) -> str:
    return json_text({kind: value}, separators=(",", ":")) + "\n"


class TrajectoryJournal:
    """Appends what a ``Trajectory`` gained since the last save to ``path`` (and the replay file).

    The first save in a process (or after the transcript was replaced) writes the whole journal
    once; after that a save appends the new messages, the new or changed step records and the state.
    """

    def __init__(self, path: Path, replay_path: Path) -> None:
        self.path = path
        self.replay_path = replay_path
        self._source: list[dict[str, Any]] | None = None
        self._messages = 0
        self._steps = 0
        self._last_step = ""

    def save(self, trajectory: Trajectory, *, replay_before: str = "") -> None:
        """Append what changed; the first save writes everything, the replay file starting with
        ``replay_before`` (the turns of the conversations before a hand-off)."""
        messages, steps = trajectory.messages, trajectory.steps
        if self._source is not messages or len(messages) < self._messages or len(steps) < self._steps:
            self._rewrite(trajectory, replay_before)
            return
        lines = [_line("message", m) for m in messages[self._messages :]]
        replay: list[dict[str, Any]] = []
        if self._steps:
            last = json_text(steps[self._steps - 1].as_dict(), separators=(",", ":"))
            if last != self._last_step:
                lines.append('{"step":' + last + "}\n")
                self._last_step = last
        for record in steps[self._steps :]:
            as_dict = record.as_dict()
            self._last_step = json_text(as_dict, separators=(",", ":"))
            lines.append('{"step":' + self._last_step + "}\n")
            replay.append(as_dict)
        lines.append(_line("state", trajectory.state()))
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write("".join(lines))
        if replay:
            with self.replay_path.open("a", encoding="utf-8") as handle:
                handle.write(replay_lines({"steps": replay}))
        self._messages, self._steps = len(messages), len(steps)

    def _rewrite(self, trajectory: Trajectory, replay_before: str) -> None:
        data = trajectory.as_dict()
        lines = [_line("message", m) for m in data["messages"]] + [_line("step", s) for s in data["steps"]]
        write_text_atomic(self.path, "".join(lines) + _line("state", trajectory.state() | {"tools": trajectory.tools}))
        write_text_atomic(self.replay_path, replay_before + replay_lines(data))
        self._source = trajectory.messages
        self._messages, self._steps = len(trajectory.messages), len(trajectory.steps)
        self._last_step = json_text(data["steps"][-1], separators=(",", ":")) if data["steps"] else ""


def rebuild(path: Path) -> dict[str, Any] | None:
    """The trajectory a journal holds (``Trajectory.as_dict``'s shape), or None when there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    messages: list[Any] = []
    steps: dict[Any, Any] = {}
    state: dict[str, Any] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # cut short by a crash
        if not isinstance(entry, dict):
            continue
        if "message" in entry:
            messages.append(entry["message"])
        elif isinstance(entry.get("step"), dict):
            steps[entry["step"].get("step")] = entry["step"]
        elif isinstance(entry.get("state"), dict):
            state.update(entry["state"])
    if not state:
        return None
    return in_leaf_order({**state, "messages": messages, "steps": list(steps.values()), "n_steps": len(steps)})
