"""The mounts of the bubblewrap sandbox, in order (later mounts cover earlier ones).

1. the system read-only, fresh ``/tmp``, ``/var/tmp``, ``/dev`` and ``/proc``;
2. runtime folders hidden (``/run``, ``$XDG_RUNTIME_DIR``, docker's state) and every listening
   Unix socket outside the repository covered, so no daemon (docker, D-Bus, agents) is reachable;
3. the toolchain the person started frogtui with (virtualenv, conda, ``PATH`` folders) read-only
   where step 1 or 2 hid it;
4. the repository and the session's temp folder writable;
5. ``.git`` read-only as a whole (with the git dir and common dir a ``.git`` file points to), and
   each submodule pinned: its folder a mount point (it cannot be moved away and replaced), its
   ``.git`` read-only (``gitlinks``);
6. the secret stores (``approval.secrets`` + ``[sandbox] hide`` − ``expose``) masked, empty;
7. frogtui's own state folder (every session's trajectory, log and temp folder, the trust store)
   hidden, the session's temp folder bound back; where the repository itself lies in the state
   folder (an attempt's worktree, ``frogtui.attempts``) the state folder is hidden before step 4
   instead, so that step's binds bring the repository back and its read-only ``.git`` stays on top.
"""
from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from frogtui.approval.sandbox.gitlinks import submodule_paths
from frogtui.approval.secrets import RUNTIME_FOLDERS, SECRET_STORES, SYSTEM_SECRETS

ISOLATION = ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
"""Namespaces and process options every sandbox gets (``--new-session`` also stops TIOCSTI)."""
PRIVILEGES = {
    "userns": ("--unshare-user", "--disable-userns", "--cap-drop", "ALL"),
    "userns-nested": ("--unshare-user", "--cap-drop", "ALL"),
    "caps": ("--cap-drop", "ALL"),
}
"""How privileges are taken away, best first: a user namespace with no capabilities, even as root,
and no nested user namespace to get them back in (bwrap 0.8+); the same without
``--disable-userns`` (older bwrap: a nested namespace's mounts are still locked read-only); only
``--cap-drop ALL`` where no user namespace can be made (root keeps root's file access)."""
TOOLCHAIN_VARIABLES = ("VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT", "NVM_DIR", "ASDF_DIR", "ASDF_DATA_DIR", "CARGO_HOME", "RUSTUP_HOME",
                       "NODE_PATH")
"""Variables naming folders the person's toolchain runs from (bound read-only when hidden)."""


def system_options(network: bool, privileges: str = "userns") -> list[str]:
    """Steps 1 and 2 without the per-command parts: isolation, the read-only system, fresh temp."""
    options = [*ISOLATION, *PRIVILEGES[privileges]]
    if not network:
        options.append("--unshare-net")
    return [*options, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]


def hidden_folders(environ: Mapping[str, str]) -> list[str]:
    """Runtime folders to cover with an empty tmpfs (real folders only, not symlinks)."""
    folders = [*RUNTIME_FOLDERS, environ.get("XDG_RUNTIME_DIR", "")]
    return [f for f in dict.fromkeys(folders) if f and os.path.isdir(f) and not os.path.islink(f)]


def listening_sockets(proc_net_unix: str = "/proc/net/unix") -> list[str]:
    """Paths of the Unix sockets listening in this network namespace (abstract ones excluded:
    the sandbox's own network namespace cannot reach them)."""
    try:
        with open(proc_net_unix, encoding="utf-8", errors="surrogateescape") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError:
        return []
    paths = (line.split(None, 7)[7] for line in lines if len(line.split(None, 7)) == 8)
    return sorted({path for path in paths if path.startswith("/")})


def runtime_options(environ: Mapping[str, str], writable: Sequence[Path], network: bool, covered: Sequence[str] = ()) -> list[str]:
    """Step 2: hide runtime folders and cover sockets outside the writable folders (and outside
    ``covered``, folders hidden as a whole: ``home``)."""
    hidden = hidden_folders(environ)
    options: list[str] = []
    for folder in hidden:
        options += ["--tmpfs", folder]
    if network:  # keep name resolution working when /etc/resolv.conf points into /run
        resolv = os.path.realpath("/etc/resolv.conf")
        if resolv != "/etc/resolv.conf" and _under_any(resolv, hidden) and os.path.isfile(resolv):
            options += ["--ro-bind", resolv, resolv]
    covered = [*hidden, *covered, "/tmp", "/var/tmp", *map(str, writable)]
    for sock in listening_sockets():
        if not _under_any(sock, covered) and os.path.exists(sock):
            options += ["--ro-bind", "/dev/null", sock]
    return options


def toolchain_options(environ: Mapping[str, str], writable: Sequence[Path], covered: Sequence[str] = ()) -> list[str]:
    """Folders the person's toolchain needs that the system mounts (or ``covered``, the folders
    ``home`` hides) hid (a virtualenv in /tmp, NixOS's ``/run/current-system/sw/bin``,
    ``~/bin``): bound back read-only, at the path the environment names and at the real one.
    Folders inside the writable ones are already there; a hidden folder itself is not shown; a
    folder named inside a writable one that leads out of it (``.venv`` linked to ``~/.local``) is
    not followed (``escaping_folders``)."""
    hidden = ["/tmp", "/var/tmp", *hidden_folders(environ), *covered]
    inside = [str(w) for w in writable]
    escaping = {folder for folder, _ in escaping_folders(environ, writable)}
    binds: dict[str, str] = {}
    for folder in _toolchain_folders(environ):
        if os.path.normpath(folder) in escaping:
            continue
        real = os.path.realpath(folder)
        for path in dict.fromkeys((os.path.normpath(folder), real)):
            if _under_any(path, hidden) and not _under_any(path, inside) and path not in covered:
                binds[path] = real
    return [word for path, real in binds.items() for word in ("--ro-bind", real, path)]


def escaping_folders(environ: Mapping[str, str], writable: Sequence[Path]) -> list[tuple[str, str]]:
    """Toolchain folders the environment names inside a writable folder whose real path leaves
    it, as (folder, real path): what the sandbox writes cannot choose what is bound into it."""
    inside = [str(w) for w in writable]
    found = []
    for folder in _toolchain_folders(environ):
        path, real = os.path.normpath(folder), os.path.realpath(folder)
        if _under_any(path, inside) and not _under_any(real, inside):
            found.append((path, real))
    return list(dict.fromkeys(found))


def _toolchain_folders(environ: Mapping[str, str]) -> list[str]:
    wanted = [part for name in (*TOOLCHAIN_VARIABLES, "PATH") for part in environ.get(name, "").split(os.pathsep)]  # NODE_PATH: a list
    return [folder for folder in wanted if folder and os.path.isabs(folder) and os.path.isdir(folder)]


def git_paths(root: Path) -> list[str]:
    """Step 5: ``.git`` (folder or file) and, for a ``.git`` file, the git dir it names and its
    common dir, each as it really is (read-only binds; the caller skips those outside writable
    folders)."""
    dot_git = root / ".git"
    if not dot_git.exists():
        return []
    paths = [os.path.realpath(dot_git)]
    if dot_git.is_file():
        try:
            line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return paths
        if line.startswith("gitdir:"):
            git_dir = Path(os.path.realpath(root / line[len("gitdir:"):].strip()))
            paths.append(str(git_dir))
            common = git_dir / "commondir"
            if common.is_file():
                paths.append(os.path.realpath(git_dir / common.read_text(encoding="utf-8", errors="replace").strip()))
    return list(dict.fromkeys(paths))


def submodule_options(root: Path) -> list[str]:
    """Step 5 for submodules: each submodule folder and the folders above it bound onto themselves
    (a mount point cannot be renamed or removed) and its ``.git`` read-only; an uninitialised one (no ``.git``) read-only as
    a whole, so no ``.git`` can be planted in it. The person's ``git status`` would run a planted
    ``core.fsmonitor``."""
    dot_git = root / ".git"
    git_dir = os.path.realpath(dot_git) if dot_git.is_dir() else _linked_git_dir(dot_git)
    options: list[str] = []
    pinned: set[str] = {str(root)}
    for folder, sub_git in submodule_paths(str(root), git_dir) if git_dir else []:
        parent = os.path.dirname(folder)
        ancestors = []
        while parent not in pinned and parent.startswith(f"{root}/"):  # a folder holding a mount point can still be moved
            ancestors.append(parent)
            parent = os.path.dirname(parent)
        for path in reversed(ancestors):
            options += ["--bind", path, path]
        pinned.update(ancestors)
        pinned.add(folder)
        options += ["--bind", folder, folder, "--ro-bind", sub_git, sub_git] if sub_git else ["--ro-bind", folder, folder]
    return options


def _linked_git_dir(dot_git: Path) -> str | None:
    paths = git_paths(dot_git.parent) if dot_git.is_file() else []
    return paths[1] if len(paths) > 1 else None


def secret_paths(home: str, hide: Iterable[str] = (), expose: Iterable[str] = ()) -> list[str]:
    """Step 6: the secret stores that exist, as real paths (``~`` expanded against ``home``)."""
    exposed = {os.path.realpath(_expand(path, home)) for path in expose}
    wanted = [p for store in SECRET_STORES for p in _stores(os.path.join(home, store))] + [_expand(path, home) for path in hide]
    wanted += [p for prefix in SYSTEM_SECRETS for p in (glob.glob(prefix + "*") if prefix.endswith("_") else [prefix])]
    found = []
    for path in wanted:
        if os.path.lexists(path):
            real = os.path.realpath(path)
            if real not in exposed and os.path.exists(real):
                found.append(real)
    return list(dict.fromkeys(found))


def _stores(path: str) -> list[str]:
    """The paths a secret store names: itself, or what its ``*`` matches."""
    return sorted(glob.glob(glob.escape(path).replace("[*]", "*"), include_hidden=True)) if "*" in path else [path]


def mask_options(paths: Iterable[str], writable: Sequence[Path] = ()) -> list[str]:
    """Masks: an empty tmpfs over a folder, ``/dev/null`` over a file; never over a folder that
    holds a writable one (the repository itself inside ``~/.config/gh`` stays usable)."""
    return mask_places([(path, path) for path in paths], writable)


def mask_places(places: Iterable[tuple[str, str]], writable: Sequence[Path] = ()) -> list[str]:
    """Masks over each (place inside the sandbox, the host path it shows there): an empty tmpfs
    where the host path is a folder, ``/dev/null`` where it is a file; never over a folder that
    holds a writable one."""
    options: list[str] = []
    for place, real in places:
        if any(_under_any(str(w), [place]) for w in writable):
            continue
        options += ["--tmpfs", place] if os.path.isdir(real) else ["--ro-bind", "/dev/null", place]
    return options


def state_options(state: Path, writable: Sequence[Path]) -> list[str]:
    """Step 7: an empty ``state`` folder, with the writable folders under it bound back; nothing
    when it does not exist, lies inside a writable folder, or holds the repository
    (``writable[0]``)."""
    real = os.path.realpath(state)
    folders = [str(w) for w in writable]
    if not os.path.isdir(real) or _under_any(real, folders) or (folders and _under_any(folders[0], [real])):
        return []
    back = [w for w in folders if _under_any(w, [real])]
    return ["--tmpfs", real, *[word for w in back for word in ("--bind", w, w)]]


def state_first_options(state: Path, writable: Sequence[Path]) -> list[str]:
    """Step 7 for a repository inside ``state`` (an attempt's worktree): an empty ``state``, to go
    before step 4 (whose binds bring the repository and the temp folder back); nothing otherwise."""
    real = os.path.realpath(state)
    folders = [str(w) for w in writable]
    if not folders or not os.path.isdir(real) or _under_any(real, folders) or not _under_any(folders[0], [real]):
        return []
    return ["--tmpfs", real]


def _expand(path: str, home: str) -> str:
    if path == "~" or path.startswith("~/"):
        return home + path[1:]
    return path


def under_any(path: str, folders: Iterable[str]) -> bool:
    """``path`` is one of ``folders`` or inside one."""
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders if f)


_under_any = under_any
