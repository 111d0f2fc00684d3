"""frogtui's own files inside the repository, out of the sandbox's reach (``approval.trusted``).

Where the repository holds something frogtui trusts (its config folder linked into a dotfiles
repository, the repository being the home folder, frogtui installed in the project's ``.venv``),
the sandbox shows it read-only; the state folder (every session's log and trajectory, the trust
store) is hidden instead, the session's own temp folder bound back. Each such place and every
folder between it and the repository root is a mount point, which a command can neither rename
nor delete: moving a folder above it aside and writing a new one in its place does not work.
These mounts come after the repository's own (they cover it).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path


def trusted_options(places: Sequence[str], root: Path, tmp_dir: Path, state: str) -> list[str]:
    """bwrap's options for the trusted ``places`` inside ``root`` (real paths; ``state``: the
    real state folder, hidden rather than shown)."""
    options: list[str] = []
    pinned = {str(root)}
    for place in places:
        ancestors = []
        parent = os.path.dirname(place)
        while parent not in pinned and parent.startswith(f"{root}/"):
            ancestors.append(parent)
            parent = os.path.dirname(parent)
        for path in reversed(ancestors):
            options += ["--bind", path, path]
        pinned.update(ancestors)
        if place == state:
            options += ["--tmpfs", place]
            if str(tmp_dir).startswith(f"{place}/"):
                options += ["--bind", str(tmp_dir), str(tmp_dir)]
        else:
            options += ["--ro-bind", place, place]
    return options
