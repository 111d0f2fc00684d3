"""frogtui's own programs (git, bwrap, its own Python): absolute paths from a ``PATH`` the repository has
no part in, and the one table of every process frogtui starts outside the sandbox (``STARTS``).

What frogtui runs outside the sandbox must never be something a sandboxed command could have
written. An activated in-repo virtualenv (``PATH=$repo/.venv/bin:...``), ``node_modules/.bin`` or a
relative or empty entry (the current folder) puts the repository on ``PATH``, and the sandbox may
write there: a ``.venv/bin/git`` would then run, unsandboxed, at the next checkpoint. So the
``PATH`` frogtui started with is read once, and kept without:

* empty and relative entries (they name the current folder, whatever it is when a program runs);
* entries inside a git working tree (a folder with a ``.git`` above it: an in-repo ``.venv/bin``
  or ``node_modules/.bin`` of this repository or of any other, since ``--repo`` may name one
  only after git is imported), in a virtualenv (``pyvenv.cfg`` beside it) or under a
  ``node_modules`` folder anywhere, inside the folder frogtui started in (unless that is ``/``), or
  inside a folder a caller names (``for_trees``: the workspace, which may not be a repository);
  symbolic links followed.

A program is the first executable file of that name on the clean ``PATH`` whose real path is also
outside those folders; frogtui runs it by that absolute path, with the clean ``PATH`` in its
environment (so what git itself runs, a filter or a credential helper, is found there too).

frogtui's own Python (the model's process, the Landlock launcher) starts isolated (``python_argv``:
``-I``, so neither the working folder nor ``PYTHON*`` variables nor the user's site reach its
import path), in a working folder outside every repository (``PYTHON_CWD``), with a minimal
environment (``python_environ``). The interpreter and the folders it imports from are frogtui's
installation (``installation``): where one lies inside a folder the sandbox may write (frogtui
installed in the project's own ``.venv``), the sandbox shows it read-only and the floor denies
writing it (``approval.sandbox.trusted``, ``approval.facts``).
"""
from __future__ import annotations

import functools
import os
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from dataclasses import dataclass


def _inside(path: str, trees: Iterable[str]) -> bool:
    return any(path == tree or path.startswith(tree.rstrip("/") + "/") for tree in trees)


def _enclosing_work_tree(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` holding a ``.git`` entry (a repository's working
    tree), found without running git."""
    current = folder
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def clean_entries(path_value: str, trees: Iterable[str]) -> tuple[str, ...]:
    """The entries of ``path_value`` (a ``PATH``) that are absolute and, with symbolic links
    followed, outside every folder of ``trees``, any git working tree, any virtualenv and any
    ``node_modules``; each once, in order."""
    real_trees = [os.path.realpath(t) for t in trees]
    kept: list[str] = []
    for entry in path_value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        entry = os.path.normpath(entry)
        real = os.path.realpath(entry)
        if entry in kept or _inside(real, real_trees) or _inside(entry, real_trees) or _enclosing_work_tree(real) is not None:
            continue
        if "node_modules" in real.split("/") or os.path.isfile(os.path.join(os.path.dirname(real), "pyvenv.cfg")):
            continue  # a project's tools, wherever the project is (--repo may name it only after git is imported)
        kept.append(entry)
    return tuple(kept)


@dataclass(frozen=True)
class Programs:
    """Where frogtui finds its own programs.

    Attributes:
        entries: the clean ``PATH`` entries.
        trees: the folders no entry and no program may be inside (real paths).
    """

    entries: tuple[str, ...]
    trees: tuple[str, ...]

    @property
    def path(self) -> str:
        """The clean ``PATH``, for the environment of what frogtui runs."""
        return os.pathsep.join(self.entries)

    def which(self, name: str) -> str | None:
        """The absolute path of program ``name`` on the clean ``PATH`` (its real path outside
        ``trees`` too), None when there is none."""
        for entry in self.entries:
            candidate = os.path.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and not _inside(os.path.realpath(candidate), self.trees):
                return candidate
        return None

    def for_trees(self, *trees: str | os.PathLike[str]) -> Programs:
        """These programs, also kept out of ``trees`` (a repository opened later)."""
        more = tuple(os.path.realpath(t) for t in trees if os.path.realpath(t) not in self.trees)
        if not more:
            return self
        return Programs(clean_entries(os.pathsep.join(self.entries), more), self.trees + more)


@functools.cache
def at_start() -> Programs:
    """The programs as found from the ``PATH`` of this process's start (read at the first call:
    ``frogtui.vcs`` calls it before git is imported)."""
    start = os.path.realpath(os.getcwd())
    work_tree = _enclosing_work_tree(start)
    trees = tuple(dict.fromkeys(t for t in (start, work_tree) if t and t != "/"))
    return Programs(clean_entries(os.environ.get("PATH", os.defpath), trees), trees)


def which(name: str, *trees: str | os.PathLike[str]) -> str | None:
    """``at_start().for_trees(*trees).which(name)``."""
    return at_start().for_trees(*trees).which(name)


# frogtui's own Python ------------------------------------------------------------------------
PYTHON_CWD = "/"
"""The working folder of every Python frogtui starts: outside every repository (``-I`` keeps it
off the import path anyway; this keeps relative paths from meaning the repository)."""
PYTHON_ENV_NAMES = ("LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM", "SYSTEMROOT")
"""Variables a Python frogtui starts keeps (with ``PATH``, the clean one); none holds a secret."""
PYTHON_ENV_PREFIXES = ("GGML_", "LLAMA_", "CUDA_", "NVIDIA_", "HIP_", "ROCR_", "HSA_", "OMP_", "GOMP_", "KMP_", "MKL_",
                       "OPENBLAS_", "VK_", "MTL_", "METAL_", "FROGTUI_RUNNER_")
"""Prefixes of the variables the model's process keeps: llama.cpp's, its GPU runtimes' and thread
pools' settings, and ``models/runner.py``'s fault switches for tests."""


def python_argv(*args: str) -> list[str]:
    """frogtui's own interpreter, isolated (``-I``: no working folder, ``PYTHONPATH``, or user site on
    the import path, no ``PYTHON*`` variable read), then ``args``."""
    return [sys.executable, "-I", *args]


def python_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """The minimal environment of a Python frogtui starts: the clean ``PATH``, the locale, and the
    model runtime's own settings (``PYTHON_ENV_PREFIXES``); no token, no credential, no ``HOME``
    (``LD_LIBRARY_PATH`` keeps only entries outside every repository, as ``PATH`` does)."""
    env = {name: environ[name] for name in PYTHON_ENV_NAMES if name in environ}
    env.update({name: value for name, value in environ.items() if name.startswith(PYTHON_ENV_PREFIXES)})
    env.update({name: value for name, value in environ.items() if name.startswith("LC_")})
    env["PATH"] = at_start().path
    libraries = clean_entries(environ.get("LD_LIBRARY_PATH", ""), at_start().trees)
    if libraries:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(libraries)
    return env


def import_folders() -> tuple[str, ...]:
    """The folders frogtui's own Python imports from, as real paths: the standard library,
    site-packages, what ``.pth`` files add, and the folder holding the ``frogtui`` package (an
    editable install's source). Not the working folder (``python -m`` puts it first: the
    ``frogtui`` command does not) and not ``PYTHONPATH``, which no Python frogtui starts reads."""
    return _import_folders(tuple(sys.path), os.getcwd(), os.environ.get("PYTHONPATH", ""))


@functools.lru_cache(maxsize=8)
def _import_folders(path: tuple[str, ...], cwd: str, pythonpath: str) -> tuple[str, ...]:
    skipped = {os.path.realpath(p) for p in pythonpath.split(os.pathsep) if p}
    skipped.add(os.path.realpath(cwd))
    paths = [value for key in ("stdlib", "platstdlib", "purelib", "platlib") if (value := sysconfig.get_path(key))]
    paths += [p for p in path if p and os.path.isabs(p)]
    paths.append(os.path.dirname(os.path.abspath(__file__)))
    found = (os.path.realpath(p) for p in paths if os.path.isdir(p))
    return tuple(p for p in dict.fromkeys(found) if p not in skipped)


def installation() -> tuple[str, ...]:
    """frogtui's own installation, as real paths: the interpreter (as started and as it really
    is), its prefixes (a virtualenv and the Python it was made from) and ``import_folders``."""
    executable = os.path.abspath(sys.executable)
    paths = [executable, os.path.realpath(executable), os.path.dirname(executable)]
    paths += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    found = (os.path.realpath(p) for p in paths if p and os.path.isabs(p) and os.path.exists(p))
    return tuple(dict.fromkeys([*found, *import_folders()]))


def installation_inside(folders: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The parts of ``installation()`` inside ``folders`` (real paths): what the sandbox, which
    may write ``folders``, must show read-only, and the floor must never let a tool write."""
    real = [os.path.realpath(f) for f in folders]
    return tuple(p for p in installation() if _inside(p, real))


def import_folders_holding(folders: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The folders frogtui's Python imports from that are one of ``folders`` or hold one: a folder
    the sandbox may write would be on frogtui's own import path (a planted module there runs
    outside the sandbox), and it cannot be read-only and writable at once."""
    real = [os.path.realpath(f) for f in folders]
    return tuple(p for p in import_folders() if any(_inside(f, [p]) for f in real))


# the table ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProcessStart:
    """One place frogtui starts a process outside the sandbox (``tests/test_process_table.py``
    finds every such place in the code with ``ast`` and checks it is here, and the reverse).

    Attributes:
        site: ``module:function`` where the process starts.
        program: what runs.
        found: how its absolute path is found (never a name looked up on an unclean ``PATH``).
        runs: where it runs and with what environment.
    """

    site: str
    program: str
    found: str
    runs: str


STARTS: tuple[ProcessStart, ...] = (
    ProcessStart("frogtui.models.local:RunnerProcess.__init__", "the model's process (models/runner.py)",
                 "python_argv: frogtui's interpreter, -I, the frogtui package loaded from its own folder alone",
                 "under bwrap (models/confinement.py: no network, home and /tmp hidden, the model file and frogtui's "
                 "installation read-only, the sessions folder writable for the saved state); without bwrap said at load "
                 "and by doctor; working folder /, python_environ"),
    ProcessStart("frogtui.models.confinement:_probe", "bwrap (can it sandbox the model's process here?)", "which('bwrap')",
                 "runs `true` in the sandbox it probes; working folder /, the clean PATH only"),
    ProcessStart("frogtui.tools.bash:_run_once", "a Bash call (the model's, or an attempt's check) after the gate allowed it",
                 "the sandbox's argv: which('bwrap'), and with the network on the Landlock launcher (python_argv, -I -S) "
                 "before it; a proposal (approval/sandbox/overlay.py) puts which('unshare') and /bin/sh, which mounts the "
                 "copy-on-write view, before bwrap, or (approval/sandbox/fuse.py) which('setpriv') --pdeathsig KILL, "
                 "which('unshare') with a pid namespace of its own, /bin/sh and which('fuse-overlayfs'), whose daemon dies with "
                 "that namespace; `bash` itself by which('bash') (tools/bash.py shell_argv)",
                 "inside the sandbox; without one, on the host (the person was told at start, and asked under policy)"),
    ProcessStart("frogtui.approval.sandbox.bwrap:_run_probe", "bwrap (and the Landlock launcher) probes", "which('bwrap'), python_argv",
                 "runs `true` in the sandbox it probes; working folder /, the clean PATH only"),
    ProcessStart("frogtui.approval.sandbox.overlay:probe", "unshare + mount (can a proposal's copy-on-write view be mounted here?)",
                 "which('unshare'), which('mount'), /bin/sh", "in a throwaway user and mount namespace on a temp folder of its own; "
                 "working folder /, the clean PATH only"),
    ProcessStart("frogtui.approval.sandbox.fuse:probe",
                 "setpriv + unshare + fuse-overlayfs (can a proposal's view be mounted with fuse-overlayfs here?)",
                 "which('setpriv'), which('unshare'), which('fuse-overlayfs'), /bin/sh",
                 "in a throwaway user, mount and pid namespace on a temp folder of its own (the daemon dies with the "
                 "namespace); working folder /, the clean PATH only"),
    ProcessStart("frogtui.approval.sandbox.gitconfig:_config_list",
                 "git config --global --list, git config --file CONFIG --list (the copies without credentials the sandbox and Read see)",
                 "which('git', repository)", "the global one: the person's environment with the clean PATH, in the repository "
                 "(includeIf); a repository's or the system's config file: no global or system config, HOME only, in /"),
    ProcessStart("frogtui.vcs.intree_config:InTreeConfig._targets", "git config --file .git/config (include paths)", "pinned_git",
                 "the hardened environment of frogtui's git (vcs/gitguard.py)"),
    ProcessStart("frogtui.vcs.intree_config:InTreeConfig._command_keys", "git config --file (an in-tree included file)",
                 "pinned_git", "the hardened environment of frogtui's git (vcs/gitguard.py)"),
    ProcessStart("frogtui.vcs.gitguard:GuardedGit.execute", "git, every command of GitPython's",
                 "pinned_git per repository; GIT_PYTHON_GIT_EXECUTABLE pinned when git is imported (vcs/__init__.py)",
                 "GIT_DIR and the work tree pinned, hooks, filters, fsmonitor and in-tree command keys off, the clean PATH"),
    ProcessStart("frogtui.doctor:_git_identity", "git config --get user.name / user.email", "which('git')",
                 "the person's environment with the clean PATH"),
    ProcessStart("frogtui.demo:make_demo", "git init/add/commit in the demo's new folder", "which('git', the demo repository)",
                 "the person's environment with the clean PATH"),
    ProcessStart("frogtui.eval.examples:_run_git", "git init/add/commit/rev-parse/diff in the example task set's new folders",
                 "which('git', the example repository)", "the person's environment with the clean PATH"),
    ProcessStart("frogtui.ui.links:open_link", "xdg-open (open on macOS) for an http(s) link the person clicked",
                 "which('xdg-open')", "the person's environment with the clean PATH, a session of its own"),
)
"""Every process frogtui starts outside the sandbox: each program by an absolute path outside the
folders the sandbox writes, its own Python isolated (``python_argv``). docs/APPROVALS.md, "The trust
boundary"."""
