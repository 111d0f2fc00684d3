"""What frogtui trusts, resolved at a session's start, and which of it the sandbox could write.

frogtui takes its configuration (``config.toml``, ``rules.toml``), its verdicts (the trust store of
project files), its state (sessions), its caches and its own code (``programs.installation``) from
disk. None of it may come from where the sandbox writes: a rules file the model rewrote, or a
``.frogtui.toml`` it trusted in the trust store itself, would decide the next session. Each place
is resolved (links followed: ``~/.config/frogtui`` linked into a dotfiles repository, the
repository being the home folder); those that then lie inside the repository are frogtui's own
there: the sandbox shows them read-only (the state folder hidden, ``sandbox/trusted.py``) and the
floor denies every write to them (``facts.resolve_text``: ``OWN_FILES``). One that does not exist
yet, where the sandbox could create it, and an import folder of frogtui's own Python that is the
repository or holds it, cannot be protected: the session is refused with one line (``refusal``,
raised by ``PolicyEngine.load``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from frogtui import programs
from frogtui.approval.loading import USER_FILE, trust_store, user_rules_path
from frogtui.config import cache_dir, config_dir, config_file, state_dir


@dataclass(frozen=True)
class TrustedPlace:
    """One thing frogtui trusts: what it is and its real path."""

    what: str
    real: str


def trusted_places(rules_file: Path | None = None) -> list[TrustedPlace]:
    """Everything frogtui reads as configuration, verdict, state or code, links followed."""
    named = [
        ("config folder", config_dir()), ("config.toml", config_file()), (USER_FILE, config_dir() / USER_FILE),
        ("rules file", user_rules_path(rules_file)), ("state folder", state_dir()), ("trust store", trust_store()),
        ("cache folder", cache_dir()),
    ]
    places = [TrustedPlace(what, os.path.realpath(path)) for what, path in named]
    places += [TrustedPlace("installation", path) for path in programs.installation()]
    return list({p.real: p for p in places}.values())


def protected_inside(root: Path, tmp_dir: Path, rules_file: Path | None = None) -> tuple[str, ...]:
    """The trusted places that exist inside ``root`` (real paths, the outermost of each nest; not
    the session's ``tmp_dir`` and nothing that holds ``root``): read-only in the sandbox, below
    the floor for every write."""
    existing = [p.real for p in _inside(root, tmp_dir, rules_file) if os.path.lexists(p.real)]
    return tuple(sorted(p for p in existing if not any(q != p and _under(p, q) for q in existing)))


def refusal(root: Path, tmp_dir: Path, rules_file: Path | None = None) -> str:
    """Why a session in ``root`` is refused ('' when it is not): frogtui's own Python imports from
    ``root`` or a folder holding it, or a trusted place that does not exist yet lies inside ``root``
    under no existing one (the sandbox could create it, and frogtui would read it next)."""
    real_root = os.path.realpath(root)
    holding = programs.import_folders_holding([real_root])
    if holding:
        return (f"frogtui's own Python imports from {holding[0]}, which is or holds the repository {real_root}: whatever a "
                "command writes there would run as frogtui; install frogtui outside it (pipx install frogtui)")
    inside = _inside(root, tmp_dir, rules_file)
    existing = [p.real for p in inside if os.path.lexists(p.real)]
    for place in inside:
        if not os.path.lexists(place.real) and not any(_under(place.real, folder) for folder in existing):
            return (f"frogtui's {place.what} resolves to {place.real}, inside the repository {real_root}, where the sandbox "
                    "could create it: move it out of the repository, or create it there so that frogtui protects it")
    return ""


def _inside(root: Path, tmp_dir: Path, rules_file: Path | None) -> list[TrustedPlace]:
    real_root, real_tmp = os.path.realpath(root), os.path.realpath(tmp_dir)
    return [p for p in trusted_places(rules_file) if _under(p.real, real_root) and p.real != real_root and not _under(p.real, real_tmp)]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
