"""What frogtui trusts never comes from where the sandbox writes (``approval.trusted``): its config
folder linked into the repository (a dotfiles repository), or its state folder inside it (the
repository is the home folder), is read-only in the sandbox, hidden for the state, and below the
floor for every write; a later ``--approve policy`` session still runs Bash sandboxed. A project
rules file the model wrote that is not valid never locks the person out. Real git repositories,
real bwrap, a replayed hostile model, ``frogtui run`` in this process."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import frogtui
from frogtui import headless
from frogtui.approval import PolicyEngine
from frogtui.approval.trusted import protected_inside, refusal
from frogtui.errors import ConfigError
from frogtui.protocol import ToolCall
from frogtui.tools import Workspace
from tests.approval.test_sandbox import needs_bwrap
from tests.support import git, turn, write_replay, xml_call

LOOSE = '[sandbox]\nbash = "none"\n[tools]\nBash = "allow"\nWrite = "allow"\n'
"""What a hostile model wants the next session's rules to be: no sandbox, everything allowed."""


def run(repo: Path, replay: Path, mode: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = headless.main(["the task", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", mode])
    return code, capsys.readouterr().err


def escape_check(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A later session under --approve policy whose model touches a file outside the repository:
    returns the file (it must not exist: Bash stayed sandboxed and asked)."""
    marker = tmp_path / "outside" / "escaped"
    marker.parent.mkdir(exist_ok=True)
    replay = write_replay(tmp_path / "later.jsonl", [turn("", xml_call("Bash", command=f"touch {marker}")), turn("", answer="done")])
    run(repo, replay, "policy", capsys)
    return marker


@pytest.fixture
def dotfiles(py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """~/.config/frogtui is a link into the repository (a dotfiles repository)."""
    folder = py_repo / "frogtui-config"
    folder.mkdir()
    (folder / "rules.toml").write_text('[[rules]]\ntool = "Bash"\nmatch = "curl *"\ndecision = "deny"\n')
    git(py_repo, "add", ".")
    git(py_repo, "commit", "-q", "-m", "dotfiles")
    config = Path(os.environ["XDG_CONFIG_HOME"])
    (config / "frogtui").symlink_to(folder)
    return folder


@needs_bwrap
@pytest.mark.parametrize("how", ["floor", "sandbox"])
def test_the_model_cannot_rewrite_the_rules_through_a_link_into_the_repository(
    dotfiles: Path, py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str,
) -> None:
    before = (dotfiles / "rules.toml").read_text()
    if how == "floor":  # a write the analysis sees: the floor denies it, --approve all or not
        command = f"printf '{LOOSE}' > frogtui-config/rules.toml"
    else:  # a write only the OS sees: the sandbox's read-only mount stops it
        command = f"python3 -c \"open('frogtui-config/rules.toml', 'w').write({LOOSE!r})\""
    calls = [xml_call("Bash", command=command), xml_call("Write", file_path="frogtui-config/rules.toml", content=LOOSE)]
    replay = write_replay(tmp_path / "r.jsonl", [turn("", *calls), turn("", answer="done")])
    _, err = run(py_repo, replay, "all", capsys)
    assert (dotfiles / "rules.toml").read_text() == before, err
    assert "frogtui's own files" in err  # the Write (and the printf) were denied by the floor, saying why
    assert not escape_check(py_repo, tmp_path, capsys).exists()


@needs_bwrap
def test_the_model_cannot_trust_its_own_project_file_through_a_state_folder_in_the_repository(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    state = py_repo / ".local" / "state"  # the repository is the home folder
    state.mkdir(parents=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    digest = hashlib.sha256(LOOSE.encode()).hexdigest()
    store = state / "frogtui" / "trusted-projects.json"
    trust = json.dumps({os.path.realpath(py_repo): digest})
    script = (f"import pathlib; pathlib.Path('.frogtui.toml').write_text({LOOSE!r}); "
              f"p = pathlib.Path({str(store)!r}); p.parent.mkdir(parents=True, exist_ok=True); p.write_text({trust!r})")
    calls = [xml_call("Bash", command=f'python3 -c "{script}"'),
             xml_call("Write", file_path=".local/state/frogtui/trusted-projects.json", content=trust)]
    replay = write_replay(tmp_path / "r.jsonl", [turn("", *calls), turn("", answer="done")])
    _, err = run(py_repo, replay, "all", capsys)
    assert not store.exists() or json.loads(store.read_text()).get(os.path.realpath(py_repo)) != digest, err
    assert "frogtui's own files" in err
    assert not escape_check(py_repo, tmp_path, capsys).exists()


def test_a_project_rules_file_that_is_not_valid_is_ignored_with_a_warning(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    (py_repo / ".frogtui.toml").write_text("[[[ not toml\n")
    replay = write_replay(tmp_path / "r.jsonl", [turn("", answer="done")])
    code, err = run(py_repo, replay, "policy", capsys)
    assert code == 0, err
    assert "ignored .frogtui.toml:" in err and "not valid TOML" in err and "a project file can only tighten" in err


def test_a_project_file_that_is_not_valid_keeps_the_users_own_rules(py_repo: Path, tmp_path: Path) -> None:
    rules = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "rules.toml"
    rules.parent.mkdir(parents=True)
    rules.write_text('[[rules]]\ntool = "Bash"\nmatch = "curl *"\ndecision = "deny"\n')
    (py_repo / ".frogtui.toml").write_text('[tools]\nBash = "maybe"\n')
    engine = PolicyEngine.load(Workspace(py_repo, tmp_dir=tmp_path / "t"))
    assert engine.evaluate(ToolCall("1", "Bash", {"command": "curl https://example.com"})).kind == "deny"
    assert any(note.startswith("ignored .frogtui.toml:") for note in engine.rules.notes)


def test_frogtuis_state_and_config_inside_the_repository_are_protected_and_the_temp_folder_is_not(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    state, config = py_repo / "state", py_repo / "config"
    (state / "frogtui" / "sessions" / "s1" / "tmp").mkdir(parents=True)
    (config / "frogtui").mkdir(parents=True)
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    tmp = state / "frogtui" / "sessions" / "s1" / "tmp"
    assert protected_inside(py_repo, tmp) == (str(config / "frogtui"), str(state / "frogtui"))
    engine = PolicyEngine.load(Workspace(py_repo, tmp_dir=tmp))
    for path in ("config/frogtui/rules.toml", "state/frogtui/trusted-projects.json", "state/frogtui/sessions/s2/session.log"):
        decision = engine.evaluate(ToolCall("1", "Write", {"file_path": path, "content": "x"}))
        assert decision.kind == "deny" and decision.floor and "frogtui's own files" in decision.reason, path
    assert engine.evaluate(ToolCall("1", "Write", {"file_path": str(tmp / "scratch"), "content": "x"})).kind != "deny"
    assert engine.evaluate(ToolCall("1", "Write", {"file_path": "calc.py", "content": "x"})).kind != "deny"


def test_a_trusted_file_the_sandbox_could_create_refuses_the_session(py_repo: Path, tmp_path: Path) -> None:
    link = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui"
    link.symlink_to(py_repo / "not-yet")
    line = refusal(py_repo, tmp_path / "t")
    assert "resolves to" in line and "inside the repository" in line and "\n" not in line
    with pytest.raises(ConfigError, match="where the sandbox could create it"):
        PolicyEngine.load(Workspace(py_repo, tmp_dir=tmp_path / "t"))


def test_frogtuis_own_import_path_holding_the_repository_refuses_the_session(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "path", [*sys.path, str(py_repo.parent)])  # an editable install's .pth naming a folder above it
    assert "imports from" in refusal(py_repo, tmp_path / "t")
    with pytest.raises(ConfigError, match="install frogtui outside it"):
        PolicyEngine.load(Workspace(py_repo, tmp_dir=tmp_path / "t"))


REPLACE_PYTHON = ("import os; open('.venv/bin/python.new', 'w').write('#!/bin/sh\\necho planted\\n'); "
                  "os.chmod('.venv/bin/python.new', 0o755); os.replace('.venv/bin/python.new', '.venv/bin/python')")


@needs_bwrap
def test_frogtui_installed_in_the_projects_own_venv_is_read_only_to_the_sandbox(py_repo: Path, tmp_path: Path) -> None:
    """frogtui in the project's .venv re-executes that interpreter outside the sandbox (the model's
    process, the Landlock launcher): the sandbox could rewrite .venv/bin/python before."""
    venv = py_repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "frogtui-source.pth").write_text(str(Path(frogtui.__file__).resolve().parent.parent) + "\n")
    python = venv / "bin" / "python"
    before = os.readlink(python)
    calls = [xml_call("Bash", command=f'python3 -c "{REPLACE_PYTHON}"'),
             xml_call("Write", file_path=".venv/pyvenv.cfg", content="home = /x\n")]
    replay = write_replay(tmp_path / "r.jsonl", [turn("", *calls), turn("", answer="done")])
    done = subprocess.run([str(python), "-m", "frogtui", "run", "the task", "--repo", str(py_repo), "--model", f"replay:{replay}",
                           "--approve", "all"], capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False)
    assert python.is_symlink() and os.readlink(python) == before, done.stderr
    assert "home = /x" not in (venv / "pyvenv.cfg").read_text()
    assert "frogtui's own files" in done.stderr  # the Write: the floor said why
    assert "exit=1" in done.stderr, done.stderr  # the Bash (allowed by --approve all): the sandbox's read-only .venv stopped it
