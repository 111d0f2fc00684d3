"""Git's config files as the sandbox (and Read) see them: copies without credentials.

The home folder is hidden inside the sandbox, so sandboxed git would lose the person's identity,
aliases, ignore rules and diff settings. It gets a copy instead, read once with the person's git
(``git config --global --includes --list``) and written to a private file outside the sandbox's
reach, that the sandbox binds read-only at ``~/.gitconfig`` (and names in ``GIT_CONFIG_GLOBAL``).
Dropped from the copy: the ``credential`` section, ``http.*.extraHeader`` (an ``Authorization``
header), any key whose name reads like a secret (``token``, ``password``...), and any entry whose
key holds a URL with a user or password in it (``url.https://TOKEN@github.com/.insteadOf``); a
URL in a value loses its credentials (``https://x-access-token:TOKEN@github.com/o/r.git`` is
``https://github.com/o/r.git``; an ``ssh://git@host`` keeps its user, not a password).

The repository's own config files are secrets too (``repository_copies``): actions/checkout leaves
``http.https://github.com/.extraheader`` in ``.git/config``, a clone from a token URL leaves the
token in ``remote.origin.url``. Each is served the same way, read with git (``--file``, its
includes read), bound read-only over the real one inside the sandbox (``BwrapWrapper``), and what
Read returns for it (the sandbox's view); the files it includes are masked.
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
from collections.abc import Mapping, Sequence

from frogtui.programs import at_start, which
from frogtui.temp_folders import private_folder

SECRET_KEY = re.compile(r"token|secret|passw|pass$|apikey|api-key|cookie|extraheader|oauth|bearer", re.IGNORECASE)
"""Key names (the part after the last dot, or the whole key) that hold secrets."""
URL_WITH_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s@]+@", re.IGNORECASE)
"""A URL with a user (often a token) or a password in it."""
DROPPED_SECTIONS = frozenset({"credential", "include", "includeif"})
"""Sections never copied (``include`` ones are already read into the copy)."""


URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<user>[^/\s@:]*)(?::[^/\s@]*)?@", re.IGNORECASE)
"""A URL's user-info: ``user:password@`` or ``user@``."""
LOGIN_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git"})
"""Schemes whose user is a login name, not a secret (``ssh://git@github.com/``): kept, a password not."""


def sanitize(key: str, value: str) -> tuple[str, str] | None:
    """The entry ``key = value`` as the sandbox's copy holds it: None when it is dropped, else
    with every URL in the value stripped of its credentials."""
    section = key.split(".", 1)[0].lower()
    name = key.rsplit(".", 1)[-1]
    if section in DROPPED_SECTIONS or SECRET_KEY.search(name) or URL_WITH_USER.search(key):
        return None
    return key, URL_CREDENTIALS.sub(_without_credentials, value)


def _without_credentials(match: re.Match[str]) -> str:
    scheme = match.group("scheme")
    user = match.group("user")
    return f"{scheme}://{user}@" if scheme.lower() in LOGIN_SCHEMES and user else f"{scheme}://"


def kept(key: str, value: str) -> bool:
    """Whether the entry ``key = value`` goes into the sandbox's copy as it is."""
    return sanitize(key, value) == (key, value)


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
    return [(key, value) for _, key, value in _config_list(["--global", "--includes"], environ, cwd)]


def _config_list(args: list[str], environ: Mapping[str, str], cwd: str, origins: bool = False,
                 tree: str | None = None) -> list[tuple[str, str, str]]:
    """``git config ARGS --list -z`` run in ``cwd`` as (origin, key, value); [] when git is
    missing or fails. ``tree``: the repository whose programs are not git (default ``cwd``)."""
    git = which("git", tree or cwd)  # frogtui's own git (frogtui.programs): never one the repository or a virtualenv holds
    if git is None:
        return []
    argv = [git, "config", *args, "--list", "-z", *(["--show-origin"] if origins else [])]
    try:
        done = subprocess.run(argv, capture_output=True, check=False, timeout=10, cwd=cwd, env={**environ, "PATH": at_start().path},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return []
    records = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    entries = []
    if origins:  # origin, then key and value
        for origin, record in zip(records[::2], records[1::2], strict=False):
            key, _, value = record.partition("\n")
            if key:
                entries.append((origin, key, value))
        return entries
    for record in records:
        key, _, value = record.partition("\n")
        if key:
            entries.append(("", key, value))
    return entries


_FILES: dict[tuple[str, str], str] = {}


def sanitized_copy(environ: Mapping[str, str], cwd: str) -> str | None:
    """A private file holding the copy (made once per global config and process, removed at exit);
    None when there is nothing to copy."""
    key = (environ.get("HOME", ""), environ.get("GIT_CONFIG_GLOBAL", ""))
    if key not in _FILES:
        text = render(_sanitized(global_entries(environ, cwd)))
        if not text:
            return None
        _FILES[key] = _private_file(text)
    return _FILES[key]


def _sanitized(entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [entry for entry in (sanitize(k, v) for k, v in entries) if entry is not None]


def _private_file(text: str) -> str:
    """A read-only file holding ``text`` (nothing secret) in a folder of its own in the process's
    temp folder (``temp_folders``: removed when the process ends, or by the next frogtui if it
    was killed); others may pass through the folder (a sandbox run as another user binds it)."""
    folder = private_folder("gitconfig-")
    os.chmod(folder, 0o711)
    path = os.path.join(str(folder), "gitconfig")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(text)
    os.chmod(path, 0o444)
    return path


CONFIG_NAMES = ("config", "config.worktree")
"""A git dir's config files."""
SYSTEM_CONFIGS = ("/etc/gitconfig", "/usr/local/etc/gitconfig")
"""Where git's system-wide config usually is: served without credentials too."""
_COPIES: dict[str, tuple[tuple[int, int, int], str, tuple[str, ...]]] = {}


def repository_configs(git_dirs: Sequence[str]) -> list[str]:
    """The config files that exist of ``git_dirs`` (a repository's git dir and common dir), of
    their linked worktrees, of the submodules' git dirs under them (``modules/…``, three levels
    deep), and git's system-wide one."""
    found = []
    for git_dir in git_dirs:
        base = glob.escape(git_dir)
        found += [os.path.join(git_dir, name) for name in CONFIG_NAMES]
        found += glob.glob(os.path.join(base, "worktrees", "*", "config.worktree"))
        for depth in range(1, 4):
            found += glob.glob(os.path.join(base, "modules", *["*"] * depth, "config"))
    found += SYSTEM_CONFIGS
    return list(dict.fromkeys(os.path.realpath(path) for path in found if os.path.isfile(path)))


def repository_copy(config: str) -> tuple[str, tuple[str, ...]]:
    """A private copy of the repository config file ``config`` without credentials (its
    includes read into it), and the files it includes (to mask); made again when the file
    changes."""
    try:
        info = os.stat(config)
    except OSError:
        return os.devnull, ()
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _COPIES.get(config)
    if cached is None or cached[0] != stamp:
        environ = {"PATH": os.environ.get("PATH", ""), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                   "HOME": os.environ.get("HOME", "/"), "LC_ALL": "C"}
        tree = os.path.dirname(config)
        entries = _config_list(["--file", config, "--includes"], environ, "/", origins=True, tree=tree)
        included = {origin.removeprefix("file:") for origin, _, _ in entries}
        direct = _config_list(["--file", config], environ, "/", tree=tree)
        included |= {_include_path(value, config, environ["HOME"]) for _, key, value in direct
                     if key.lower().startswith(("include.", "includeif.")) and key.lower().endswith(".path")}
        included = {os.path.realpath(path) for path in included if path} - {os.path.realpath(config)}
        copy = _private_file(render(_sanitized([(key, value) for _, key, value in entries])))
        _COPIES[config] = cached = (stamp, copy, tuple(sorted(included)))
    return cached[1], cached[2]


def _include_path(value: str, config: str, home: str) -> str:
    if value.startswith("~/"):
        return os.path.join(home, value[2:])
    return os.path.join(os.path.dirname(config), value)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
