"""The project's environment for Bash, not frogtui's: which Python the agent's commands get.

frogtui runs from its own interpreter (often its own virtualenv); the commands the agent runs must
get the project's. ``project_environ`` turns frogtui's environment into the one Bash starts from:

1. frogtui's own installation never leaks: ``PATH`` entries inside frogtui's virtualenv,
   ``VIRTUAL_ENV`` naming it, ``PYTHONHOME`` naming frogtui's interpreter and ``PYTHONPATH``
   entries that hold frogtui's own package are removed;
2. an active virtualenv of the person (``VIRTUAL_ENV``, not frogtui's) wins, and so does an active
   conda environment other than ``base`` (``PATH`` is left as it is);
3. otherwise the project's own environment, the first found of: the repository's ``.venv``
   (uv's and ``poetry config virtualenvs.in-project``'s too), ``UV_PROJECT_ENVIRONMENT``,
   Poetry's environment for the project in its cache (found by Poetry's own naming, without
   running Poetry), the pyenv version ``.python-version`` names. A virtualenv gets its ``bin``
   first on ``PATH`` and ``VIRTUAL_ENV`` set; a pyenv version gets its ``bin`` first on ``PATH``.

In another checkout of a repository (an attempt's worktree, ``environment_of``), the environment
is the repository's own: its ``.venv`` (and the rest of 3.) and its ``node_modules`` (``NODE_PATH``
and ``node_modules/.bin`` last on ``PATH``), at their own paths; the sandbox shows them read-only
(``sandbox/mounts.toolchain_options``).
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import frogtui


@dataclass(frozen=True)
class ProjectPython:
    """The Python environment the agent's Bash gets.

    Attributes:
        prefix: The environment's folder (a virtualenv, a pyenv version); None when Bash keeps the
            ``PATH`` it was given.
        source: Where it comes from, in words ("the repository's .venv", "the active virtualenv"...).
        virtualenv: Whether ``prefix`` is a virtualenv (``VIRTUAL_ENV`` is set to it).
    """

    prefix: str | None
    source: str
    virtualenv: bool = False


def frogtui_prefixes(root: Path) -> list[str]:
    """The folders of frogtui's own installation that must not reach Bash: its virtualenv (when it
    runs from one that is not the repository's own)."""
    if sys.prefix == sys.base_prefix or _inside(sys.prefix, [os.path.realpath(root)]):
        return []
    return [os.path.realpath(sys.prefix)]


def find_project_python(environ: Mapping[str, str], root: Path) -> ProjectPython:
    """Which environment Bash gets in the repository ``root`` (see the module's order)."""
    own = frogtui_prefixes(root)
    active = environ.get("VIRTUAL_ENV", "")
    if active and os.path.isdir(active) and not _inside(active, own):
        return ProjectPython(active, "the active virtualenv", virtualenv=True)
    conda = environ.get("CONDA_PREFIX", "")
    if conda and environ.get("CONDA_DEFAULT_ENV", "base") != "base" and not _inside(conda, own):
        return ProjectPython(None, f"the active conda environment {environ['CONDA_DEFAULT_ENV']}")
    for candidate, source in _virtualenv_candidates(environ, root):
        if (Path(candidate) / "bin" / "python").exists() and not _inside(candidate, own):
            return ProjectPython(candidate, source, virtualenv=True)
    pyenv = None if environ.get("PYENV_VERSION") else _pyenv_version(environ, root)  # the person's own choice wins
    if pyenv is not None:
        return ProjectPython(pyenv[0], f"pyenv {pyenv[1]} from {pyenv[2]}")
    return ProjectPython(None, "the PATH frogtui was started with")


def project_environ(environ: Mapping[str, str], root: Path, environment_of: Path | None = None) -> dict[str, str]:
    """``environ`` as Bash starts from it in ``root``: frogtui's own installation removed, the
    project's Python environment first (``find_project_python``). ``environment_of``: the
    repository ``root`` is a checkout of, whose environment it gets (the module's last paragraph)."""
    if environment_of is not None and environment_of != root:
        env = project_environ(environ, environment_of)
        modules = environment_of / "node_modules"
        if modules.is_dir() and not (root / "node_modules").exists():
            env["NODE_PATH"] = os.pathsep.join(p for p in (str(modules), env.get("NODE_PATH", "")) if p)
            if (modules / ".bin").is_dir():
                env["PATH"] = os.pathsep.join(p for p in (env.get("PATH", ""), str(modules / ".bin")) if p)  # last: shadows nothing
        return env
    own = frogtui_prefixes(root)
    env = dict(environ)
    env["PATH"] = os.pathsep.join(p for p in environ.get("PATH", "").split(os.pathsep) if not (p and _inside(p, own)))
    if _inside(env.get("VIRTUAL_ENV", ""), own):
        for name in ("VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT"):
            env.pop(name, None)
    if env.get("PYTHONHOME") and _inside(env["PYTHONHOME"], [os.path.realpath(sys.base_prefix), *own]):
        del env["PYTHONHOME"]
    if "PYTHONPATH" in env:
        kept = [p for p in env["PYTHONPATH"].split(os.pathsep) if p and not _holds_frogtui(p, own)]
        env["PYTHONPATH"] = os.pathsep.join(kept)
        if not kept:
            del env["PYTHONPATH"]
    python = find_project_python(env, root)
    if python.prefix is not None:
        bin_dir = os.path.join(python.prefix, "bin")
        rest = [p for p in env["PATH"].split(os.pathsep) if p and os.path.normpath(p) != bin_dir]
        env["PATH"] = os.pathsep.join([bin_dir, *rest])
        if python.virtualenv:
            env["VIRTUAL_ENV"] = python.prefix
            env.pop("PYTHONHOME", None)
    return env


def which_python(environ: Mapping[str, str], root: Path, environment_of: Path | None = None) -> tuple[str | None, str]:
    """The ``python`` the agent's Bash runs in ``root`` (None: none on ``PATH``) and where it comes
    from, in words (``environment_of`` as for ``project_environ``)."""
    chosen = find_project_python(environ, environment_of or root)
    path = project_environ(environ, root, environment_of)["PATH"]
    return shutil.which("python", path=path) or shutil.which("python3", path=path), chosen.source


def describe_python(environ: Mapping[str, str], root: Path, environment_of: Path | None = None) -> str:
    """One line: the ``python`` the agent's Bash runs and where it comes from."""
    found, source = which_python(environ, root, environment_of)
    return f"Bash's python: {found or 'none on PATH'} ({source})"


def _virtualenv_candidates(environ: Mapping[str, str], root: Path) -> list[tuple[str, str]]:
    candidates = [(str(root / ".venv"), "the repository's .venv")]
    uv = environ.get("UV_PROJECT_ENVIRONMENT", "")
    if uv:
        candidates.append((str(root / uv) if not os.path.isabs(uv) else uv, "UV_PROJECT_ENVIRONMENT"))
    poetry = _poetry_env(environ, root)
    if poetry is not None:
        candidates.append((poetry, "Poetry's environment for the project"))
    escaping = {folder for folder, _ in escaping_virtualenvs(environ, root)}
    return [(folder, source) for folder, source in candidates if os.path.normpath(folder) not in escaping]


def escaping_virtualenvs(environ: Mapping[str, str], root: Path) -> list[tuple[str, str]]:
    """The repository's own virtualenvs (``.venv``, a relative ``UV_PROJECT_ENVIRONMENT``) whose
    real path leaves the repository, as (folder, real path): ignored, since what the sandbox
    writes (a ``.venv`` linked to ``~/.local``) must not choose which python runs or what is
    bound into the sandbox."""
    uv = environ.get("UV_PROJECT_ENVIRONMENT", "")
    named = [root / ".venv", *([root / uv] if uv and not os.path.isabs(uv) else [])]
    real_root = os.path.realpath(root)
    found = []
    for folder in named:
        path = os.path.normpath(folder)
        lexically_inside = path.startswith(os.path.normpath(root).rstrip("/") + "/")
        if os.path.lexists(path) and lexically_inside and not _inside(path, [real_root]):
            found.append((path, os.path.realpath(path)))
    return found


def _poetry_env(environ: Mapping[str, str], root: Path) -> str | None:
    """Poetry's virtualenv for ``root`` in its cache, named as Poetry names it
    (``{name}-{hash of the path}-py{X.Y}``), without running Poetry."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool, project = data.get("tool"), data.get("project")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not isinstance(poetry, dict):
        return None
    name = poetry.get("name") or (project.get("name") if isinstance(project, dict) else None)
    if not isinstance(name, str):
        return None
    home = environ.get("HOME") or os.path.expanduser("~")
    cache = environ.get("POETRY_CACHE_DIR") or os.path.join(environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "pypoetry")
    folder = environ.get("POETRY_VIRTUALENVS_PATH") or os.path.join(cache, "virtualenvs")
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", name.lower())[:42]
    digest = base64.urlsafe_b64encode(hashlib.sha256(os.path.normcase(os.path.realpath(root)).encode()).digest()).decode()[:8]
    try:
        found = sorted(entry for entry in os.listdir(folder) if entry.startswith(f"{sanitized}-{digest}-py"))
    except OSError:
        return None
    return os.path.join(folder, found[-1]) if found else None


def _pyenv_version(environ: Mapping[str, str], root: Path) -> tuple[str, str, str] | None:
    """(prefix, version, file) for the first version a ``.python-version`` in ``root`` (or above)
    names that pyenv has installed."""
    home = environ.get("HOME") or os.path.expanduser("~")
    versions = Path(environ.get("PYENV_ROOT") or os.path.join(home, ".pyenv")) / "versions"
    for folder in (root, *root.parents):
        marker = folder / ".python-version"
        if marker.is_file():
            try:
                names = marker.read_text(encoding="utf-8").split()
            except (OSError, UnicodeDecodeError):
                return None
            for name in names:
                if "/" not in name and (versions / name / "bin").is_dir():
                    return str(versions / name), name, str(marker)
            return None
    return None


def _holds_frogtui(entry: str, own: list[str]) -> bool:
    """Whether a ``PYTHONPATH`` entry holds frogtui's own package (a source checkout, its site-packages)."""
    package = os.path.dirname(os.path.realpath(frogtui.__file__))
    return os.path.realpath(entry) == os.path.dirname(package) or _inside(entry, own)


def _inside(path: str, folders: list[str]) -> bool:
    if not path:
        return False
    real = os.path.realpath(path)
    return any(real == f or real.startswith(f.rstrip("/") + "/") for f in folders)
