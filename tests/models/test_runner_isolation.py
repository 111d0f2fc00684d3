"""The model's process is frogtui's own Python, isolated, in a sandbox of its own
(``models/confinement.py``): nothing the repository holds is on its import path, it gets no token
from frogtui's environment, and under bwrap it has no network, no home folder and cannot write the
model file. Real processes, real bwrap."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from frogtui import programs
from frogtui.models import confinement
from frogtui.models.local import RunnerProcess

PLANTED = "import os, sys\nsys.stderr.write('PLANTED {name}\\n')\nopen({marker!r}, 'w').close()\n"


def plant(folder: Path, marker: Path) -> None:
    """Modules a hostile model could write at the repository root, each announcing itself."""
    for name in ("dataclasses", "queue", "signal", "threading", "typing", "platformdirs", "runpy", "sitecustomize"):
        (folder / f"{name}.py").write_text(PLANTED.format(name=name, marker=str(marker)))


def stops(process: RunnerProcess) -> None:
    """End it the way frogtui's exit does: its standard input closes (it exits 0 once it has read it)."""
    process.proc.stdin.close()  # type: ignore[union-attr]
    process.proc.wait(timeout=20)
    process.proc.stdout.close()  # type: ignore[union-attr]


def test_a_module_the_repository_holds_is_never_imported_by_the_models_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    repo.mkdir()
    plant(repo, marker)
    monkeypatch.chdir(repo)  # frogtui started in the repository (`-m` put the working folder first)
    monkeypatch.setenv("PYTHONPATH", str(repo))
    monkeypatch.setenv("PYTHONSTARTUP", str(repo / "dataclasses.py"))
    process = RunnerProcess()
    stops(process)
    assert process.proc.returncode == 0, process.last_words()  # it started, read the wire and closed
    assert "PLANTED" not in process.last_words() and not marker.exists()


def test_nothing_beside_the_frogtui_package_is_importable_by_the_models_process() -> None:
    """frogtui run on its own source checkout: the checkout's root holds the package; it is never
    put on the model process's import path (a module planted beside the package, found by a
    missing optional import, would run there)."""
    code = confinement.interpreter_argv()[-1].replace(
        "runpy.run_module", "import json, frogtui.models.wire; print(json.dumps([package.__file__, sys.path])) or (lambda *a, **k: None)")
    source = Path(programs.__file__).resolve().parent.parent
    done = subprocess.run(programs.python_argv("-c", code), capture_output=True, text=True, cwd=programs.PYTHON_CWD,
                          env=programs.python_environ(os.environ), check=False)
    assert done.returncode == 0, done.stderr
    loaded, path = json.loads(done.stdout)
    assert loaded == str(source / "frogtui" / "__init__.py")
    assert str(source) not in path and "" not in path and os.getcwd() not in path


def test_without_bwrap_the_interpreter_is_still_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, marker = tmp_path / "repo", tmp_path / "ran"
    repo.mkdir()
    plant(repo, marker)
    monkeypatch.chdir(repo)
    argv = confinement.interpreter_argv()
    assert argv[:2] == [programs.python_argv()[0], "-I"]
    code = argv[-1].replace("runpy.run_module", "import dataclasses, queue, typing; print('ok') or (lambda *a, **k: None)")
    env = programs.python_environ(os.environ)
    done = subprocess.run([*argv[:-1], code], capture_output=True, text=True, cwd=repo, env=env, check=False)
    assert done.returncode == 0 and "PLANTED" not in done.stderr and not marker.exists(), done.stderr


PROBE = r"""
import json, os, socket, sys
seen = {}
seen["env"] = sorted(os.environ)
home = sys.argv[1]
try:
    seen["home"] = os.listdir(home)
except OSError as err:
    seen["home"] = str(err)
try:
    with open(sys.argv[2], "ab") as handle:
        handle.write(b"x")
    seen["model_written"] = True
except OSError:
    seen["model_written"] = False
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=2).close()
    seen["network"] = True
except OSError:
    seen["network"] = False
seen["cwd"] = os.getcwd()
print(json.dumps(seen))
"""


@pytest.mark.skipif(programs.which("bwrap") is None, reason="bubblewrap is not installed")
def test_under_bwrap_it_has_no_network_no_home_no_token_and_cannot_write_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    model = home / "models" / "m.gguf"  # only the model file is shown of the home folder
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        found = confinement.runner_argv(model)
        if not found.sandboxed:
            pytest.skip(found.warning)
        cut = found.argv.index("--")
        argv = [*found.argv[: cut + 1], programs.python_argv()[0], "-I", "-c", PROBE, str(home), str(model), str(port)]
        done = subprocess.run(argv, capture_output=True, text=True, env=programs.python_environ(os.environ), timeout=30, check=False)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["home"] == ["models"] and seen["model_written"] is False and seen["network"] is False
    assert "GITHUB_TOKEN" not in seen["env"] and "HOME" not in seen["env"] and seen["cwd"] == "/"
    assert model.read_bytes() == b"GGUF"


@pytest.mark.skipif(programs.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_pid_is_the_interpreters_and_a_signal_reads_as_a_signal() -> None:
    process = RunnerProcess()
    if not process.confinement.sandboxed:
        pytest.skip(process.confinement.warning)
    try:
        deadline = time.monotonic() + 10
        while "python" not in Path(f"/proc/{process.pid}/cmdline").read_text() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.pid != process.proc.pid
        os.kill(process.pid, 11)
        died = process.died()
    finally:
        process.close()
    assert died.returncode == -11 and died.crashed and "killed by SIGSEGV" in str(died)


WRITES = r"""
import json, sys
done = {}
for path in sys.argv[1:]:
    try:
        with open(path, "w") as handle:
            handle.write("x")
        done[path] = True
    except OSError:
        done[path] = False
print(json.dumps(done))
"""


@pytest.mark.skipif(programs.which("bwrap") is None, reason="bubblewrap is not installed")
def test_it_writes_the_state_folder_it_is_given_and_nothing_of_frogtuis_own(tmp_path: Path) -> None:
    from frogtui.config import config_dir, state_dir

    folder = tmp_path / "session" / "model-state"
    trust, rules = state_dir() / "trusted-projects.json", config_dir() / "rules.toml"
    for path in (trust, rules):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("mine")
    found = confinement.runner_argv(None, writable=[folder])
    if not found.sandboxed:
        pytest.skip(found.warning)
    assert found.writes(folder / "1.state") and not found.writes(trust) and not found.writes(tmp_path)
    cut = found.argv.index("--")
    argv = [*found.argv[: cut + 1], programs.python_argv()[0], "-I", "-c", WRITES, str(folder / "1.state"), str(trust), str(rules)]
    done = subprocess.run(argv, capture_output=True, text=True, env=programs.python_environ(os.environ), timeout=30, check=False)
    assert json.loads(done.stdout)[str(folder / "1.state")] is True, done.stderr  # frogtui's folders: an empty tmpfs there
    assert (folder / "1.state").read_text() == "x" and trust.read_text() == "mine" and rules.read_text() == "mine"
