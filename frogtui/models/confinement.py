"""The model's process in a sandbox of its own: it parses a file nobody vetted (a GGUF from the Hub,
its chat template), in native code.

``runner_argv(model)`` is how ``models/local.py`` starts ``models/runner.py``: frogtui's own
Python, isolated (``programs.python_argv``: ``-I``, working folder ``/``, a minimal environment),
under bubblewrap with no network, no capabilities (a user namespace), the system read-only, the
home folder, ``/tmp``, runtime folders and frogtui's state, config and cache folders hidden, and
bound back read-only only what the process needs: frogtui's installation (``programs.installation``)
and the model file. GPU devices stay reachable; it may write only the sessions folder (the model's state saved after
each turn, ``models/saved_state.py``) and a state folder given elsewhere. Where bwrap is missing or cannot make its
namespaces here, the process runs without it, and ``Confinement.warning`` (shown once at load,
and by ``frogtui doctor``) says so.
"""
from __future__ import annotations

import functools
import glob
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from frogtui import programs
from frogtui.config import cache_dir, config_dir, state_dir

RUNNER_CODE = (
    "import importlib.util, runpy, sys\n"
    "spec = importlib.util.spec_from_file_location('frogtui', {init!r}, submodule_search_locations=[{package!r}])\n"
    "sys.modules['frogtui'] = package = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(package)\n"
    "runpy.run_module('frogtui.models.runner', run_name='__main__', alter_sys=True)\n"
)
"""What the isolated interpreter runs: ``models/runner.py`` of this very ``frogtui`` package, loaded
from its folder alone (the folder holding it, a source checkout perhaps, is not put on the import
path: nothing beside the package is importable)."""
ISOLATION = ("--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--cap-drop", "ALL")
"""No network, no capabilities; the process ends with frogtui."""
GPU_DEVICES = ("/dev/nvidia*", "/dev/dri", "/dev/kfd")
"""Devices a GPU build of llama.cpp opens (CUDA, Vulkan, ROCm), kept where they exist."""
RUNTIME_FOLDERS = ("/run", "/var/run")


@dataclass(frozen=True)
class Confinement:
    """How the model's process runs.

    Attributes:
        argv: the command line (bwrap's, or the isolated interpreter's alone).
        sandboxed: whether bwrap confines it.
        warning: why it is not confined ('' when it is).
    """

    argv: list[str]
    sandboxed: bool
    warning: str = ""
    writable: tuple[Path, ...] = ()
    """The folders it may write (the model's saved states); without a sandbox, every one."""

    def writes(self, folder: Path) -> bool:
        """Whether it can write in ``folder``."""
        real = os.path.realpath(folder)
        return not self.sandboxed or _under(real, [os.path.realpath(w) for w in self.writable])

    def describe(self) -> str:
        """One line for ``frogtui doctor``."""
        if self.sandboxed:
            return "model process: under bubblewrap (no network, home folder hidden, the model file read-only)"
        return f"model process: {self.warning}"


def interpreter_argv() -> list[str]:
    """frogtui's isolated interpreter running ``models/runner.py``."""
    package = Path(programs.__file__).resolve().parent
    return programs.python_argv("-c", RUNNER_CODE.format(init=str(package / "__init__.py"), package=str(package)))


def runner_argv(model: Path | None = None, environ: Mapping[str, str] | None = None, writable: Sequence[Path] = ()) -> Confinement:
    """How to start the model's process for ``model`` (None: no model yet, ``library_facts``);
    ``writable``: the folders it saves the model's state in (``models/saved_state.py``)."""
    environ = os.environ if environ is None else environ
    inner = interpreter_argv()
    bwrap = programs.which("bwrap")
    if bwrap is None:
        return Confinement(inner, False, "not sandboxed: bubblewrap (bwrap) is not installed (on PATH outside a repository), "
                                         "so llama.cpp parses the model file with your access to files and the network")
    isolation = _isolation(bwrap)
    if isolation is None:
        return Confinement(inner, False, f"not sandboxed: bwrap cannot create its sandbox here ({_probe(bwrap, ISOLATION)})")
    return Confinement([bwrap, *isolation, *options(model, environ, writable), "--", *inner], True, writable=tuple(writable))


def options(model: Path | None, environ: Mapping[str, str], writable: Sequence[Path] = ()) -> list[str]:
    """bwrap's mounts for the model's process (up to, not including, ``--``)."""
    home = os.path.realpath(environ.get("HOME") or os.path.expanduser("~"))
    own = [os.path.realpath(p) for p in (state_dir(), config_dir(), cache_dir())]
    hidden = [f for f in dict.fromkeys(["/tmp", "/var/tmp", *_runtime(environ), home, *own]) if f != "/" and os.path.isdir(f)]
    words = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for folder in hidden:
        words += ["--tmpfs", folder]
    shown = list(programs.installation())
    if model is not None:
        shown += [os.path.realpath(model)]
    for path in dict.fromkeys(shown):
        if _under(path, hidden) and os.path.exists(path):
            words += ["--ro-bind", path, path]
    named = [os.path.dirname(os.path.abspath(programs.python_argv()[0])), sys.prefix, *([os.fspath(model)] if model is not None else [])]
    for path in dict.fromkeys(os.path.abspath(p) for p in named):  # the same, at the path it is named by (a link in the home folder)
        if path != os.path.realpath(path) and _under(path, hidden) and os.path.exists(path):
            words += ["--ro-bind", os.path.realpath(path), path]
    for device in sorted(d for pattern in GPU_DEVICES for d in glob.glob(pattern)):
        words += ["--dev-bind", device, device]
    for folder in writable:  # where the model's state is saved after each turn: made, then bound writable
        os.makedirs(folder, exist_ok=True)
        words += ["--bind", os.path.realpath(folder), os.path.realpath(folder)]
    once = environ.get("FROGTUI_RUNNER_FAULT_ONCE")  # tests: the simulated crash leaves its mark there
    if once and os.path.isabs(once) and os.path.isdir(os.path.dirname(once)):
        words += ["--bind", os.path.dirname(once), os.path.dirname(once)]
    return [*words, "--chdir", programs.PYTHON_CWD]


def _runtime(environ: Mapping[str, str]) -> list[str]:
    folders = [*RUNTIME_FOLDERS, environ.get("XDG_RUNTIME_DIR", "")]
    return [os.path.realpath(f) for f in folders if f and os.path.isdir(f)]


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


@functools.cache
def _isolation(bwrap: str) -> tuple[str, ...] | None:
    """The isolation options bwrap takes here (without nested user namespaces where it can),
    None where it cannot make its sandbox (probed once per process)."""
    for extra in (("--disable-userns",), ()):
        if _probe(bwrap, (*ISOLATION, *extra)) is None:
            return (*ISOLATION, *extra)
    return None


@functools.cache
def _probe(bwrap: str, isolation: tuple[str, ...]) -> str | None:
    argv = [bwrap, *isolation, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False, stdin=subprocess.DEVNULL,
                              cwd=programs.PYTHON_CWD, env={"PATH": programs.at_start().path})
    except (OSError, subprocess.TimeoutExpired) as err:
        return str(err)
    return None if done.returncode == 0 else (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[0]
