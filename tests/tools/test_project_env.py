"""The agent's Bash gets the project's Python, not frogtui's (issue 24, item 1). frogtui runs from
its own, activated virtualenv in a child process (as the README installs it); the repository has
a real ``.venv``; the command runs through the real runner, with and without the sandbox."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.approval.sandbox import probe_bwrap
from frogtui.tools.project_env import describe_python, find_project_python, project_environ

BWRAP = shutil.which("bwrap")
SANDBOXES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(
    BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here"))]

CHILD = """
import sys
from frogtui.approval import SandboxSettings, make_sandbox
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.workspace import Workspace

root, tmp, bash = sys.argv[1:4]
workspace = Workspace(root, tmp_dir=tmp)
runner = ToolRunner(workspace, wrap=make_sandbox(workspace, SandboxSettings(bash=bash)).wrap)
command = "python -c 'import os, sys; print(sys.prefix); print(os.environ.get(\\"VIRTUAL_ENV\\")); print(os.environ[\\"PATH\\"])'"
print(runner.run(ToolCall("t", "Bash", {"command": command})).observation)
"""


def make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return path


@pytest.fixture(scope="module")
def frogtui_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """frogtui's own virtualenv: a real one whose python imports frogtui (through PYTHONPATH)."""
    return make_venv(tmp_path_factory.mktemp("frogtui-install") / "venv")


def run_as_frogtui(frogtui_venv: Path, root: Path, tmp_path: Path, bash: str, **extra: str) -> list[str]:
    """Run CHILD with frogtui's venv activated; return (sys.prefix, VIRTUAL_ENV, PATH) as Bash saw them."""
    (tmp_path / "session-tmp").mkdir(exist_ok=True)
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "VIRTUAL_ENV": str(frogtui_venv), "PATH": f"{frogtui_venv}/bin:{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p and os.path.isdir(p)), **extra}
    done = subprocess.run([str(frogtui_venv / "bin" / "python"), str(script), str(root), str(tmp_path / "session-tmp"), bash],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0 and done.stdout.startswith("Exit code: 0\nSTDOUT:\n"), done.stdout + done.stderr
    return done.stdout.split("STDOUT:\n")[1].split("\n")[:3]


@pytest.mark.parametrize("bash", SANDBOXES)
def test_bash_gets_the_repositorys_venv_not_frogtuis(frogtui_venv: Path, tmp_path: Path, bash: str) -> None:
    root = tmp_path / "repo"
    venv = make_venv(root / ".venv")
    prefix, virtual_env, path = run_as_frogtui(frogtui_venv, root, tmp_path, bash)
    assert prefix == str(venv) and virtual_env == str(venv), (prefix, virtual_env)
    assert path.split(":")[0] == f"{venv}/bin" and str(frogtui_venv) not in path, path


@pytest.mark.parametrize("bash", SANDBOXES)
def test_without_a_project_env_frogtuis_venv_does_not_leak(frogtui_venv: Path, tmp_path: Path, bash: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    prefix, virtual_env, path = run_as_frogtui(frogtui_venv, root, tmp_path, bash)
    assert prefix != str(frogtui_venv) and virtual_env == "None" and str(frogtui_venv) not in path, (prefix, virtual_env, path)


@pytest.mark.parametrize("bash", SANDBOXES)
def test_the_persons_active_virtualenv_wins(frogtui_venv: Path, tmp_path: Path, bash: str) -> None:
    root = tmp_path / "repo"
    make_venv(root / ".venv")
    active = make_venv(tmp_path / "active")
    prefix, virtual_env, path = run_as_frogtui(frogtui_venv, root, tmp_path, bash, VIRTUAL_ENV=str(active),
                                               PATH=f"{active}/bin:{frogtui_venv}/bin:{os.environ['PATH']}")
    assert prefix == str(active) and virtual_env == str(active), (prefix, virtual_env)


def test_frogtuis_pythonhome_and_pythonpath_do_not_leak(tmp_path: Path) -> None:
    import frogtui

    source = os.path.dirname(os.path.dirname(os.path.realpath(frogtui.__file__)))
    environ = {"PATH": "/usr/bin", "PYTHONHOME": sys.base_prefix, "PYTHONPATH": f"{source}:{tmp_path}/src"}
    env = project_environ(environ, tmp_path)
    assert "PYTHONHOME" not in env and env["PYTHONPATH"] == f"{tmp_path}/src", env


def test_poetry_and_pyenv_environments_are_found(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.poetry]\nname = "My App"\n')
    cache = tmp_path / "cache"
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256(str(root).encode()).digest()).decode()[:8]
    poetry = make_venv(cache / "pypoetry" / "virtualenvs" / f"my app-{digest}-py3.11".replace(" ", "_"))
    environ = {"PATH": "/usr/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(cache)}
    found = find_project_python(environ, root)
    assert (found.prefix, found.virtualenv) == (str(poetry), True), found
    assert project_environ(environ, root)["PATH"] == f"{poetry}/bin:/usr/bin"

    (root / "pyproject.toml").write_text('[project]\nname = "plain"\n')
    (root / ".python-version").write_text("3.99.1\n")
    (tmp_path / "pyenv" / "versions" / "3.99.1" / "bin").mkdir(parents=True)
    environ["PYENV_ROOT"] = str(tmp_path / "pyenv")
    found = find_project_python(environ, root)
    assert found.prefix == str(tmp_path / "pyenv" / "versions" / "3.99.1") and not found.virtualenv, found
    assert describe_python(environ, root).endswith(f"(pyenv 3.99.1 from {root / '.python-version'})")


def test_doctor_says_which_python_the_agent_gets(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    venv = make_venv(root / ".venv")
    done = subprocess.run([sys.executable, "-m", "frogtui", "doctor", "--repo", str(root), "--model", "replay:/nowhere"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert f"✓ Bash's python: {venv}/bin/python (the repository's .venv)" in done.stdout, done.stdout + done.stderr


def test_the_first_trace_line_of_a_headless_run_says_which_python(py_repo: Path, tmp_path: Path) -> None:
    from tests.support import write_replay

    venv = make_venv(py_repo / ".venv")
    replay = write_replay(tmp_path / "answer.jsonl", ["Nothing to do.\n</think>\n\nDone."])
    done = subprocess.run([sys.executable, "-m", "frogtui", "run", "look", "--repo", str(py_repo), "--model", f"replay:{replay}"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == f"frogtui: Bash's python: {venv}/bin/python (the repository's .venv)", done.stderr


def test_frogtui_installed_in_the_repositorys_own_venv_keeps_it(tmp_path: Path) -> None:
    """The project's ``.venv`` that frogtui itself runs from is still the project's environment."""
    root = tmp_path / "repo"
    venv = make_venv(root / ".venv")
    prefix, virtual_env, path = run_as_frogtui(venv, root, tmp_path, "none")
    assert prefix == str(venv) and virtual_env == str(venv) and path.startswith(f"{venv}/bin:"), (prefix, virtual_env, path)


def test_another_checkout_gets_the_repositorys_venv_and_node_modules(tmp_path: Path) -> None:
    repo, worktree = tmp_path / "repo", tmp_path / "worktree"
    venv = make_venv(repo / ".venv")
    (repo / "node_modules" / ".bin").mkdir(parents=True)
    worktree.mkdir()
    environ = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    env = project_environ(environ, worktree, repo)
    assert env["VIRTUAL_ENV"] == str(venv) and env["PATH"].split(os.pathsep)[0] == str(venv / "bin")
    assert env["NODE_PATH"] == str(repo / "node_modules")
    assert env["PATH"].split(os.pathsep)[-1] == str(repo / "node_modules" / ".bin"), "last: it shadows nothing"
    assert "the repository's .venv" in describe_python(environ, worktree, repo)
    assert "VIRTUAL_ENV" not in project_environ(environ, worktree), "without it, the checkout has none of its own"
