"""Reading the rules from disk: the user's file, the project's ``.frogtui.toml``, and the list of
projects the person trusts (by path and file hash, in the state folder)."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

from frogtui.approval.rules import RuleFile, RuleSet, combine, parse_rules
from frogtui.config import config_dir, state_dir
from frogtui.errors import ConfigError
from frogtui.tools.textfile import read_regular

MAX_RULES_BYTES = 1024 * 1024
"""A rules file bigger than this is refused (a repository's file is read before any sandbox)."""

PROJECT_FILE = ".frogtui.toml"
USER_FILE = "rules.toml"


def user_rules_path(override: Path | None = None) -> Path:
    """The user's rules file: ``override`` when given, else ``$XDG_CONFIG_HOME/frogtui/rules.toml``."""
    return override if override is not None else config_dir() / USER_FILE


def read_rule_file(path: Path, *, required: bool = False) -> RuleFile | None:
    """Parse the rules file at ``path``; None when it does not exist (unless ``required``).

    Raises:
        ConfigError: the file is missing (when required), unreadable or not valid rules.
    """
    try:
        text = _read(path).decode("utf-8")
    except FileNotFoundError:
        if required:
            raise ConfigError(f"rules file not found: {path}") from None
        return None
    except (OSError, ValueError) as err:  # also not a regular file (a FIFO, /dev/zero), too big, not UTF-8
        raise ConfigError(f"{path}: cannot read the rules file: {err}") from None
    return parse_rules(text, str(path))


def _read(path: Path) -> bytes:
    """The bytes of a rules file: a regular file of at most ``MAX_RULES_BYTES`` (never blocking)."""
    return read_regular(path, str(path), MAX_RULES_BYTES)


def load_rules(repo: Path, user_file: Path | None = None, *, trust_as: Path | None = None) -> RuleSet:
    """The rules in force for ``repo``: the user's file, tightened (or, once trusted, changed) by
    the project's ``.frogtui.toml``. ``trust_as``: the repository whose trust counts for that file
    (an attempt's worktree holds the person's repository's file: trusted with that content there).

    A project file that is not valid is ignored, with a note saying why (``RuleSet.notes``).

    Raises:
        ConfigError: the user's rules file is not valid (one line naming the file).
    """
    user = read_rule_file(user_rules_path(user_file), required=user_file is not None)
    project_path = Path(repo) / PROJECT_FILE
    try:
        project = read_rule_file(project_path)
    except ConfigError as err:  # anything in the repository may have written it: it can only tighten, so it never locks you out
        rules = combine(user, None)
        return replace(rules, notes=(f"ignored {PROJECT_FILE}: {err} (a project file can only tighten your rules)", *rules.notes))
    trusted = project is not None and is_trusted(Path(trust_as or repo), file_digest(project_path))
    return combine(user, project, project_trusted=trusted)


def file_digest(path: Path) -> str:
    return hashlib.sha256(_read(path)).hexdigest()


def trust_store() -> Path:
    """The list of projects whose ``.frogtui.toml`` the person trusts (by path and file hash)."""
    return state_dir() / "trusted-projects.json"


def _read_store() -> dict[str, str]:
    try:
        data = json.loads(trust_store().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        raise ConfigError(f"{trust_store()}: cannot read the trusted projects: {err}") from None
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def is_trusted(repo: Path, digest: str) -> bool:
    """True when the person trusted this repository's ``.frogtui.toml`` with exactly this content."""
    return _read_store().get(os.path.realpath(repo)) == digest


def trust_project(repo: Path) -> str:
    """Trust the current ``.frogtui.toml`` of ``repo`` (it may then loosen rules); returns its hash.
    Any later change to the file ends the trust until the person trusts it again.

    Raises:
        ConfigError: the repository has no ``.frogtui.toml`` or it is not valid.
    """
    path = Path(repo) / PROJECT_FILE
    if read_rule_file(path) is None:
        raise ConfigError(f"{repo} has no {PROJECT_FILE} to trust")
    digest = file_digest(path)
    store = _read_store()
    store[os.path.realpath(repo)] = digest
    target = trust_store()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(store, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return digest


def untrust_project(repo: Path) -> bool:
    """Forget the trust in ``repo``'s project file; True when it was trusted."""
    store = _read_store()
    if store.pop(os.path.realpath(repo), None) is None:
        return False
    trust_store().write_text(json.dumps(store, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return True
