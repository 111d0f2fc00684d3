"""The model's state saved after each turn, in the session folder, so that a resumed session
evaluates only what was added since (issue 34, item 5). Runs in the model's own process.

Each save is two files in ``FOLDER``: ``N.state`` (llama.cpp's sequence state: the KV cache and,
for hybrid models such as Qwen3.5, the recurrent state, with the tokens it holds) and ``N.json``
(the key and the transcript: which messages those tokens stand for). The key names what the state
is only valid for: the model file (its real path, size and time), the settings that shape the
state (context, KV cache types, flash attention, GPU layers) and llama.cpp's version; a state
whose key differs, or whose conversation the resumed one does not continue, is never loaded.
The folder is bounded by ``[llama] saved_state_mb``: the oldest saves are dropped first.

No llama.cpp here (``models/llama_cpp.py`` reads and writes the state files themselves).
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frogtui.models.transcript import Transcript, transcript_dict, transcript_from

STATE = ".state"
META = ".json"


def state_key(model_path: Path, settings: dict[str, Any], library: str) -> str:
    """What a saved state is valid for: this model file, these settings, this llama.cpp."""
    stat = model_path.stat()
    shaping = {name: settings.get(name) for name in ("n_ctx", "cache_type_k", "cache_type_v", "flash_attn", "n_gpu_layers")}
    facts = {"model": os.path.realpath(model_path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "settings": shaping,
             "llama_cpp": library}
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class SavedState:
    """One save: its state file and the transcript its tokens stand for."""

    state: Path
    transcript: Transcript


class StateFolder:
    """The saves of one session (``FOLDER``), newest last, at most ``budget`` bytes together.

    Args:
        folder: the session's folder for them (made on the first save).
        key: ``state_key`` of the loaded model.
        budget: bytes the saves may take together; 0 saves nothing.
    """

    def __init__(self, folder: Path, key: str, budget: int) -> None:
        self.folder = folder
        self.key = key
        self.budget = budget

    def _saves(self) -> list[tuple[int, Path]]:
        """(number, meta file) of each save, oldest first."""
        if not self.folder.is_dir():
            return []
        found = []
        for meta in self.folder.glob(f"*{META}"):
            if meta.stem.isdigit():
                found.append((int(meta.stem), meta))
        return sorted(found)

    def candidates(self) -> tuple[list[SavedState], int]:
        """The saves made for this key, newest first, and how many others (another model or
        settings, or damaged) were passed over."""
        usable, other = [], 0
        for _number, meta in reversed(self._saves()):
            state = meta.with_suffix(STATE)
            try:
                data = json.loads(meta.read_text(encoding="utf-8"))
                if data.get("key") != self.key or not state.is_file():
                    other += 1
                    continue
                usable.append(SavedState(state, transcript_from(data["transcript"])))
            except (OSError, ValueError, KeyError, TypeError):
                other += 1
        return usable, other

    def save(self, transcript: Transcript, write_state: Callable[[Path], bool]) -> Path | None:
        """Save the state (``write_state(path)`` writes llama.cpp's file, False when it failed)
        and the transcript; then drop the oldest saves past the budget. Never half a save: the
        files are written under temporary names and renamed, the state first."""
        if self.budget <= 0:
            return None
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        saves = self._saves()
        number = saves[-1][0] + 1 if saves else 1
        state, meta = self.folder / f"{number}{STATE}", self.folder / f"{number}{META}"
        partial = self.folder / f".{number}{STATE}.partial"
        try:
            if not write_state(partial):
                partial.unlink(missing_ok=True)
                return None
            partial.replace(state)
            text = json.dumps({"key": self.key, "transcript": transcript_dict(transcript)})
            meta_partial = self.folder / f".{number}{META}.partial"
            meta_partial.write_text(text, encoding="utf-8")
            meta_partial.replace(meta)
        except OSError:
            for path in (partial, state):
                path.unlink(missing_ok=True)
            return None
        self.prune()
        return state if state.exists() else None

    def prune(self) -> None:
        """Drop the oldest saves until the rest fit in the budget (a save alone past it goes too)."""
        kept = 0
        for _number, meta in reversed(self._saves()):
            state = meta.with_suffix(STATE)
            size = (state.stat().st_size if state.exists() else 0) + meta.stat().st_size
            if kept + size <= self.budget:
                kept += size
                continue
            meta.unlink(missing_ok=True)
            state.unlink(missing_ok=True)
