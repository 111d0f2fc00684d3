"""Files whose change decides what runs at the person's next commit (or push, or CI run): a
session's change to one is flagged in review (``⚠ runs at your next commit``) and stops
``frogtui run --commit``.

Three kinds:

* control files by name (``CONTROL_PATTERNS``: git's own ``.gitattributes`` and ``.gitmodules``, the
  configuration of pre-commit, husky, lefthook, lint-staged, simple-git-hooks and overcommit) and
  by folder (``CONTROL_FOLDERS``: ``.husky/``, ``.githooks/``, ``.github/workflows/``…, plus an
  in-tree ``core.hooksPath``);
* the keys of ``package.json`` that hook tools read (``PACKAGE_JSON_KEYS``: husky v4's ``husky``,
  ``lint-staged``…): a change there (not a version bump) counts, key by key;
* the files the configured hooks call (``hook_callees``): a hook that runs ``./scripts/check.sh``,
  ``make lint`` or ``npm test`` runs ``scripts/check.sh``, the ``Makefile`` or ``package.json``'s
  scripts, so a change to those runs at the next commit as much as a change to the hook.

The third can never be complete (``npm test`` runs every test file), so the guarantee for a commit
nobody reviewed is elsewhere: ``frogtui run --commit`` runs no hook at all (``vcs.commit``).
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping

CONTROL_PATTERNS = (
    ".gitattributes", ".gitmodules",
    ".pre-commit-config.yaml", ".pre-commit-config.yml",
    "lefthook.*", "lefthook-local.*", ".lefthook.*", ".lefthook-local.*",
    ".huskyrc", ".huskyrc.*", "husky.config.*",
    ".lintstagedrc", ".lintstagedrc.*", "lint-staged.config.*",
    ".simple-git-hooks.*", "simple-git-hooks.*", ".overcommit.yml",
)
"""Basenames (``fnmatch`` patterns) of files that decide what git or a hook tool runs."""
_CONTROL_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in CONTROL_PATTERNS))
"""``CONTROL_PATTERNS`` in one expression: a name any of them matches (``fnmatchcase``), in one match."""

CONTROL_FOLDERS = (".husky/", ".githooks/", ".git-hooks/", ".github/workflows/")
"""Folders (at any depth) whose files are hooks, or CI workflows that run with the repository's secrets."""

PACKAGE_JSON_KEYS = ("husky", "lint-staged", "simple-git-hooks", "pre-commit", "precommit", "pre-push", "prepush", "ghooks", "config")
"""Top-level keys of ``package.json`` that hook tools read (husky v4, lint-staged, simple-git-hooks,
the ``pre-commit`` package, ghooks through ``config.ghooks``)."""
PACKAGE_JSON_SCRIPTS = ("precommit", "prepush", "commitmsg", "postcommit", "postmerge", "prepare")
"""``scripts`` that husky before v1 ran as hooks (and ``prepare``, which installs hooks)."""

PACKAGE_MANAGERS = ("npm", "npx", "yarn", "pnpm", "pnpx", "bun", "bunx")
"""A hook naming one of these runs ``package.json``'s scripts."""
MAKE_FILES = ("Makefile", "makefile", "GNUmakefile")


def control_files_changed(paths: Iterable[str], hooks_path: str | None = None) -> list[str]:
    """The paths among ``paths`` that are control files by name or folder (an in-tree
    ``core.hooksPath``, relative to the working tree, counts as a folder)."""
    folders = list(CONTROL_FOLDERS)
    if hooks_path and not os.path.isabs(hooks_path):
        folders.append(hooks_path.strip("/") + "/")
    found = []
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        inside = any(f"/{path}".find(f"/{folder}") >= 0 for folder in folders)
        if inside or _CONTROL_NAME.match(name):
            found.append(path)
    return found


def package_json_control_keys(before: bytes | None, after: bytes | None) -> list[str]:
    """The hook keys (``PACKAGE_JSON_KEYS``, ``scripts.<hook>``) whose value differs between two
    versions of a ``package.json`` (None: absent); ``["not valid JSON"]`` when the new one cannot
    be read (a hook tool may read it otherwise)."""
    old = _json_object(before) if before is not None else {}
    new = _json_object(after) if after is not None else {}
    if old is None:
        old = {}
    if new is None:
        return ["not valid JSON"]
    changed = [key for key in PACKAGE_JSON_KEYS if old.get(key) != new.get(key)]
    old_scripts, new_scripts = _scripts(old), _scripts(new)
    changed += [f"scripts.{name}" for name in PACKAGE_JSON_SCRIPTS if old_scripts.get(name) != new_scripts.get(name)]
    return changed


def _json_object(data: bytes) -> dict[str, object] | None:
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _scripts(package: Mapping[str, object]) -> Mapping[str, object]:
    scripts = package.get("scripts")
    return scripts if isinstance(scripts, dict) else {}


def hook_callees(paths: Iterable[str], hooks: Mapping[str, str]) -> dict[str, str]:
    """The paths among ``paths`` that a hook calls, each with the hook that does (``hooks``: a
    hook's name and text): named in it as a path (``./scripts/check.sh``, ``scripts/check.sh``,
    ``"$ROOT/scripts/check.sh"``), a make file when it runs ``make``, ``package.json`` when it runs
    a package manager."""
    texts = [(hook, text, set(re.findall(r"[\w.+-]+", text))) for hook, text in hooks.items()]
    found: dict[str, str] = {}
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        for hook, text, words in texts:
            if path not in text and "make" not in words and path != "package.json":
                continue
            if (
                re.search(r"(?:^|[\s\"'=:/(`;&|])(?:\./)?" + re.escape(path) + r"(?:$|[\s\"';)`&|<>])", text, re.MULTILINE)
                or (path in MAKE_FILES or name.endswith(".mk")) and "make" in words
                or path == "package.json" and words & set(PACKAGE_MANAGERS)
            ):
                found[path] = hook
                break
    return found
