"""Git settings that live in the working tree never make frogtui's own git run code.

Projects that share settings ask contributors to run ``git config include.path ../.gitconfig``:
the person's ``.git/config`` (read-only in the sandbox) then includes a file of the working tree,
which a sandboxed command may write. Whatever command such a file names (a clean filter, a diff
driver, a signing program...) would run in frogtui's own git (a checkpoint's ``git add`` into the
private index, a diff, ``frogtui run --commit``), outside the sandbox.

``InTreeConfig`` finds the include targets (``include.path``, ``includeIf.*.path``) of the
repository's own config that resolve inside the working tree, and before each of frogtui's git
commands gives the overrides that empty every command-valued key those files (and what they
include) set, read again whenever one of them changed. The person's own commit (``person_git``)
keeps their settings.
"""
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping

COMMAND_KEYS = re.compile(
    r"^(filter\.[^\n]+\.(clean|smudge|process)|diff\.[^\n]+\.(textconv|command)|merge\.[^\n]+\.driver"
    r"|gpg(\.[^\n]+)?\.program|core\.(sshcommand|askpass|editor|pager|gitproxy|fsmonitor|hookspath)"
    r"|credential\.([^\n]+\.)?helper|sequence\.editor|uploadpack\.packobjectshook|alias\.[^\n]+)$"
)
"""Keys whose value git runs as a command (lower-case, as ``git config --name-only`` prints them)."""


def _stamp(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class InTreeConfig:
    """The command-valued settings of in-tree files the repository's config includes, emptied.

    Args:
        git: git's absolute path.
        git_dir: the repository's git folder (its ``config`` is read once, here).
        work_tree: the working tree (real path).
        env: the environment frogtui's git runs with (hardened).
    """

    def __init__(self, git: str, git_dir: str, work_tree: str, env: Mapping[str, str]) -> None:
        self.git, self.env, self.work_tree = git, dict(env), work_tree
        self.targets = self._targets(git_dir)
        self._seen: dict[str, tuple[int, int, int] | None] = {}
        self._overrides: tuple[tuple[str, str], ...] = ()

    def _targets(self, git_dir: str) -> tuple[str, ...]:
        config = os.path.join(git_dir, "config")
        done = subprocess.run(
            [self.git, "config", "--file", config, "--get-regexp", r"^include(if\..*)?\.path$"],
            capture_output=True, text=True, env=self.env, check=False,
        )
        targets = []
        for line in done.stdout.splitlines():
            _, _, value = line.partition(" ")
            value = os.path.expanduser(value.strip())
            if not value:
                continue
            path = os.path.realpath(value if os.path.isabs(value) else os.path.join(git_dir, value))
            if _inside(path, self.work_tree):
                targets.append(path)
        return tuple(dict.fromkeys(targets))

    def overrides(self) -> tuple[tuple[str, str], ...]:
        """``(key, '')`` for every command-valued key the in-tree included files set now (and
        ``filter.X.required = false`` beside an emptied filter, so git does not fail on it)."""
        if not self.targets:
            return ()
        stamps = {path: _stamp(path) for path in self.targets}
        if stamps != self._seen:
            self._seen = stamps
            keys: list[str] = []
            for path, stamp in stamps.items():
                if stamp is not None:
                    keys += self._command_keys(path)
            pairs: list[tuple[str, str]] = []
            for key in dict.fromkeys(keys):
                pairs.append((key, ""))
                if key.startswith("filter."):
                    pairs.append((key.rsplit(".", 1)[0] + ".required", "false"))
            self._overrides = tuple(dict.fromkeys(pairs))
        return self._overrides

    def _command_keys(self, path: str) -> list[str]:
        done = subprocess.run(
            [self.git, "config", "--file", path, "--includes", "--name-only", "--list"],
            capture_output=True, text=True, env=self.env, check=False,
        )
        if done.returncode != 0:  # unreadable or not a config file: git would not read it either
            return []
        return [key for key in done.stdout.splitlines() if COMMAND_KEYS.match(key.lower())]
