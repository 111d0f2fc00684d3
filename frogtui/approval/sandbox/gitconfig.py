"""The person's global git config as sandboxed git sees it: a copy without credentials.

The home folder is hidden inside the sandbox, so sandboxed git would lose the person's identity,
aliases, ignore rules and diff settings. It gets a copy instead, read once with the person's git
(``git config --global --includes --list``) and written to a private file outside the sandbox's
reach, that the sandbox binds read-only at ``~/.gitconfig`` (and names in ``GIT_CONFIG_GLOBAL``).
Dropped from the copy: the ``credential`` section, ``http.*.extraHeader`` (an ``Authorization``
header), any key whose name reads like a secret (``token``, ``password``...), and any entry whose
key or value holds a URL with a user or password in it (``url.https://TOKEN@github.com/.insteadOf``).
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping

from frogtui.programs import at_start, which

SECRET_KEY = re.compile(r"token|secret|passw|pass$|apikey|api-key|cookie|extraheader|oauth|bearer", re.IGNORECASE)
"""Key names (the part after the last dot, or the whole key) that hold secrets."""
URL_WITH_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s@]+@", re.IGNORECASE)
"""A URL with a user (often a token) or a password in it."""
DROPPED_SECTIONS = frozenset({"credential", "include", "includeif"})
"""Sections never copied (``include`` ones are already read into the copy)."""


def kept(key: str, value: str) -> bool:
    """Whether the entry ``key = value`` goes into the sandbox's copy."""
    section = key.split(".", 1)[0].lower()
    if section in DROPPED_SECTIONS:
        return False
    name = key.rsplit(".", 1)[-1]
    return not (SECRET_KEY.search(name) or URL_WITH_USER.search(key) or URL_WITH_USER.search(value))


def render(entries: list[tuple[str, str]]) -> str:
    """The entries (``section[.subsection].name``, value) as a git config file."""
    lines: list[str] = []
    current = None
    for key, value in entries:
        if "." not in key:
            continue
        head, name = key.rsplit(".", 1)
        section, _, sub = head.partition(".")
        header = f'[{section} "{_escape(sub)}"]' if sub else f"[{section}]"
        if header != current:
            lines.append(header)
            current = header
        lines.append(f'\t{name} = "{_escape(value)}"')
    return "".join(f"{line}\n" for line in lines)


def global_entries(environ: Mapping[str, str], cwd: str) -> list[tuple[str, str]]:
    """The person's global config (includes read) as (key, value) pairs; [] when git is missing
    or there is none."""
    git = which("git", cwd)  # frogtui's own git (frogtui.programs): never one the repository or a virtualenv holds
    if git is None:
        return []
    try:
        done = subprocess.run([git, "config", "--global", "--includes", "--list", "-z"], capture_output=True, check=False,
                              timeout=10, cwd=cwd, env={**environ, "PATH": at_start().path}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return []
    entries = []
    for record in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = record.partition("\n")
        if key:
            entries.append((key, value))
    return entries


_FILES: dict[tuple[str, str], str] = {}


def sanitized_copy(environ: Mapping[str, str], cwd: str) -> str | None:
    """A private file holding the copy (made once per global config and process, removed at exit);
    None when there is nothing to copy."""
    key = (environ.get("HOME", ""), environ.get("GIT_CONFIG_GLOBAL", ""))
    if key not in _FILES:
        text = render([(k, v) for k, v in global_entries(environ, cwd) if kept(k, v)])
        if not text:
            return None
        folder = tempfile.mkdtemp(prefix="frogtui-gitconfig-")
        atexit.register(shutil.rmtree, folder, True)
        path = os.path.join(folder, "gitconfig")
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(text)
        os.chmod(path, 0o444)
        _FILES[key] = path
    return _FILES[key]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
