"""What the sandbox shows of the home folder: nothing but what builds need.

The home folder (and the folder that holds the repository, where other projects live) is an empty,
read-only folder inside the sandbox. Bound back into it, read-only:

- the person's toolchains and package caches that exist (``TOOLCHAINS``: pyenv, cargo, rustup,
  nvm, ``~/.local/bin``, Maven, Gradle, npm, pip, uv, Go...);
- what ``[sandbox] expose`` names (a path under the home folder, or any other hidden one);
- a copy of the person's global git config without credentials (``gitconfig``).

The secret stores (``approval.secrets``) stay masked inside every folder shown, unless ``expose``
names the store itself. An allowlist, not a deny-list: a store nobody listed stays hidden.
"""
from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

TOOLCHAINS = (
    # Python
    ".pyenv", ".local/bin", ".local/lib/python*", ".local/share/uv", ".cache/pip", ".cache/uv", ".cache/pypoetry/virtualenvs",
    ".local/share/virtualenvs", ".conda", "miniconda3", "anaconda3", "miniforge3", "mambaforge", ".pixi",
    # Rust, Go, JavaScript
    ".cargo", ".rustup", "go", ".cache/go-build", ".nvm", ".npm", ".volta", ".bun", ".deno", ".local/share/pnpm", ".cache/yarn",
    # JVM, Ruby, others
    ".m2", ".gradle", ".sdkman", ".rbenv", ".gem", ".asdf", ".local/share/mise", ".dotnet", ".ghcup", ".juliaup", ".elan", ".opam",
)
"""Folders under the home folder a build runs from or reads packages from (shell patterns): shown
read-only inside the sandbox where they exist."""

SYSTEM_FOLDERS = frozenset({"/", "/usr", "/usr/local", "/opt", "/var", "/etc", "/nix", "/snap", "/lib", "/lib64", "/bin", "/sbin",
                            "/tmp", "/var/tmp", "/run", "/proc", "/dev", "/sys", "/boot"})
"""Folders never hidden as "the folder that holds the repository" (the system lives there)."""


@dataclass(frozen=True)
class HomeView:
    """The folders hidden inside the sandbox and what is shown of them.

    Attributes:
        hidden: Real paths covered by an empty, read-only folder (the home folder, the folder
            holding the repository).
        shown: Real paths under them bound back read-only (toolchains, ``expose``), as
            (source, destination) pairs: the destination is where the home folder names it.
    """

    hidden: tuple[str, ...] = ()
    shown: tuple[tuple[str, str], ...] = ()

    def describe(self, home: str) -> str:
        """One line for ``frogtui doctor``: what is hidden and what is shown, ``~`` for the home."""
        if not self.hidden:
            return "home folder: visible (it holds the repository or is not a folder); secret stores masked"
        shown = ", ".join(_tilde(dest, home) for _, dest in self.shown) or "nothing"
        hidden = ", ".join(_tilde(path, home) for path in self.hidden)
        return f"hidden: {hidden}; shown read-only: {shown}"


def home_view(home: str, root: Path, writable: Sequence[Path], expose: Iterable[str] = (), project: Path | None = None) -> HomeView:
    """What to hide and show for a repository at ``root`` (``writable`` are the folders the
    sandbox writes: a hidden folder never covers one of them). ``project`` is the person's
    repository when ``root`` is a copy of it elsewhere (an attempt's worktree): the folder holding
    it is hidden as a single run hides it."""
    real_home = os.path.realpath(home)
    exposed = {os.path.realpath(_expand(path, real_home)) for path in expose}
    parents = [_project_parent(root), *([_project_parent(project)] if project is not None else [])]
    hidden = [path for path in (_real_folder(home), *parents) if path and path not in exposed]  # expose = ["~"]: all
    inside = [str(w) for w in writable]
    hidden = [h for h in dict.fromkeys(hidden) if not any(under(h, w) for w in inside)]  # a writable folder shows it all
    hidden = [h for h in hidden if not any(under(h, other) and h != other for other in hidden)]
    if not hidden:
        return HomeView()
    wanted = [os.path.join(real_home, pattern) for pattern in TOOLCHAINS]
    wanted += [_expand(path, real_home) for path in expose]
    shown: dict[str, str] = {}
    for pattern in wanted:
        for path in sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]:
            dest = os.path.normpath(path)
            if not os.path.isabs(dest) or not os.path.exists(dest) or not any(under(dest, h) for h in hidden):
                continue
            if dest in hidden or any(under(dest, w) for w in inside):
                continue
            shown[dest] = os.path.realpath(dest)
    return HomeView(tuple(hidden), tuple((real, dest) for dest, real in shown.items()))


def hide_options(view: HomeView) -> list[str]:
    """The hidden folders, each an empty folder (sealed read-only by ``seal_options`` once every
    mount under it is made), and what is shown of them bound back read-only."""
    options = [word for path in view.hidden for word in ("--tmpfs", path)]
    return options + [word for real, dest in view.shown for word in ("--ro-bind", real, dest)]


def socket_options(view: HomeView, sockets: Iterable[str]) -> list[str]:
    """Listening Unix sockets inside a shown folder (an agent's socket in an exposed ``~/.config``),
    covered: ``mounts.runtime_options`` covers the others, before the folders were shown."""
    return [word for sock in sockets if any(under(sock, dest) for _, dest in view.shown) and os.path.exists(sock)
            for word in ("--ro-bind", "/dev/null", sock)]


def seal_options(view: HomeView) -> list[str]:
    """Make the hidden folders read-only; the mounts under them keep their own mode (the
    repository stays writable). Comes after every mount below them."""
    return [word for path in view.hidden for word in ("--remount-ro", path)]


def visible(path: str, view: HomeView) -> bool:
    """Whether ``path`` (real) exists inside the sandbox as far as the hidden folders go."""
    if not any(under(path, h) for h in view.hidden):
        return True
    return any(under(path, dest) for _, dest in view.shown)


def _real_folder(home: str) -> str | None:
    if not home or not os.path.isabs(home) or not os.path.isdir(home):
        return None
    real = os.path.realpath(home)
    return None if real in SYSTEM_FOLDERS else real


def _project_parent(root: Path) -> str | None:
    """The folder that holds the repository, where other projects (and their ``.env``) live."""
    parent = os.path.dirname(os.path.realpath(root))
    if parent in SYSTEM_FOLDERS or any(under(parent, f) for f in ("/tmp", "/var/tmp", "/run", "/proc", "/dev", "/sys")):
        return None
    return parent


def _expand(path: str, home: str) -> str:
    if path == "~" or path.startswith("~/"):
        return home + path[1:]
    return path


def _tilde(path: str, home: str) -> str:
    real_home = os.path.realpath(home)
    if path == real_home:
        return "~"
    return "~" + path[len(real_home):] if under(path, real_home) else path


def under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it (both real paths)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")
