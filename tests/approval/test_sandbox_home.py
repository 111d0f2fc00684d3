"""The sandbox hides the home folder and the other projects (issue 23, finding 5): the credential
stores the red team read under ``--approve all`` (15 of 21, none on the secret-store list) are
not there, while the person's toolchains still run. Real bubblewrap, a home folder outside /tmp
(the sandbox's /tmp is empty anyway, which would prove nothing)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.approval import SandboxSettings, make_sandbox
from frogtui.approval.sandbox import BwrapWrapper, probe_bwrap
from frogtui.approval.sandbox.gitconfig import kept
from frogtui.approval.sandbox.home import TOOLCHAINS
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.workspace import Workspace
from tests.support import git

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or probe_bwrap(BWRAP) is not None,
    reason=f"bubblewrap is not usable here: {probe_bwrap(BWRAP) if BWRAP else 'not installed'}",
)

STORES = {
    ".claude/.credentials.json": "claude",
    ".codex/auth.json": "codex",
    ".config/github-copilot/hosts.json": "copilot",
    ".config/containers/auth.json": "podman",
    ".Xauthority": "xauth",
    ".config/sops/age/keys.txt": "age",
    ".pulumi/credentials.json": "pulumi",
    ".wrangler/config/default.toml": "wrangler",
    ".config/configstore/firebase-tools.json": "configstore",
    ".oci/config": "oci",
    ".vscode-server/data/Machine/token": "vscode",
    "code/other-project/.env": "other-home-project",
    ".config/some-new-tool/credentials": "unlisted",
    ".ssh/id_ed25519": "ssh",
    ".aws/credentials": "aws",
    ".cargo/credentials.toml": "cargo",
    ".m2/settings.xml": "maven",
    ".docker/config.json": "docker",
}
"""Planted credential stores, each holding ``SECRET-<name>``: the issue's list, one store nobody
listed, and stores inside toolchain folders that are shown."""
GITCONFIG = """[user]
\tname = Planted Person
\temail = planted@example.com
[url "https://ghp_SECRET-gitconfig-url@github.com/"]
\tinsteadOf = https://github.com/
[credential]
\thelper = store --file ~/.SECRET-helper
[github]
\ttoken = SECRET-gitconfig-token
[http "https://example.com/"]
\textraHeader = Authorization: Bearer SECRET-gitconfig-header
[alias]
\tst = status --short
"""


@pytest.fixture
def planted(on_disk: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Workspace]:
    """$HOME with the stores, two toolchains on PATH and a git config with credentials; a repository
    beside another project (with its own ``.env``), outside the home folder and /tmp."""
    home = on_disk / "home"
    for name, store in STORES.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(f"SECRET-{store}\n")
    (home / ".gitconfig").write_text(GITCONFIG)
    for tool, text in ((".local/bin/mytool", "MYTOOL-RAN"), (".cargo/bin/x", "CARGO-X-RAN")):
        (home / tool).parent.mkdir(parents=True, exist_ok=True)
        (home / tool).write_text(f"#!/bin/sh\necho {text}\n")
        (home / tool).chmod(0o755)
    projects = on_disk / "projects"
    (projects / "neighbour").mkdir(parents=True)
    (projects / "neighbour" / ".env").write_text("SECRET-neighbour-env\n")
    root = projects / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    session_tmp = on_disk / "session-tmp"
    session_tmp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home}/.local/bin:{home}/.cargo/bin:{os.environ['PATH']}")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    return home, Workspace(root, tmp_dir=session_tmp)


def run(workspace: Workspace, command: str, settings: SandboxSettings | None = None) -> str:
    sandbox = make_sandbox(workspace, settings or SandboxSettings())
    assert sandbox.wrap is not None, sandbox.warning
    return ToolRunner(workspace, wrap=sandbox.wrap).run(ToolCall("t", "Bash", {"command": command})).observation


def stdout(observation: str) -> str:
    return observation.split("STDERR:")[0]


@needs_bwrap
def test_no_planted_credential_is_readable_inside(planted: tuple[Path, Workspace]) -> None:
    home, workspace = planted
    parent = workspace.root.parent
    names = " ".join(f"~/{name}" for name in STORES)
    observation = run(workspace, f"cat {names} {parent}/neighbour/.env ~/.gitconfig; grep -rs SECRET- ~ {parent}; "
                                 f"cp -r ~/. loot-home; cp -r {parent}/. loot-parent; git config --global --list; echo END")
    assert "END" in observation, observation
    assert "SECRET-" not in stdout(observation), observation
    copied = "".join(p.read_text(errors="replace") for p in workspace.root.glob("loot-*/**/*") if p.is_file())
    assert "SECRET-" not in copied
    assert (home / ".Xauthority").read_text() == "SECRET-xauth\n", "the stores are untouched outside"


@needs_bwrap
def test_toolchains_under_the_home_folder_still_run(planted: tuple[Path, Workspace]) -> None:
    home, workspace = planted
    observation = run(workspace, "mytool && x && ls -A ~ ~/.cargo && git config --global user.name && git st")
    assert observation.startswith("Exit code: 0"), observation
    out = stdout(observation)
    assert "MYTOOL-RAN" in out and "CARGO-X-RAN" in out and "Planted Person" in out and "?? a.txt" in out, observation
    listed = out.split("STDOUT:\n")[1].split("\n\n")
    assert sorted(listed[0].split("\n")[3:]) == [".cargo", ".gitconfig", ".local", ".m2"], observation  # after "~:"
    assert "credentials.toml" in listed[1], "a store inside a shown folder is there, empty"


@needs_bwrap
@pytest.mark.xdist_group("host sockets")  # its listening socket: beside test_sandbox_escape.py's run as nobody
def test_expose_shows_a_folder_and_a_store_read_only(planted: tuple[Path, Workspace]) -> None:
    home, workspace = planted
    (home / ".config" / "tool").mkdir(parents=True)
    (home / ".config" / "tool" / "settings.toml").write_text("SHOWN-SETTINGS\n")
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(home / ".config" / "tool" / "agent.sock"))
    agent.listen()
    settings = SandboxSettings(expose=("~/.config", "~/.docker/config.json"))
    try:
        observation = run(workspace, "cat ~/.config/tool/settings.toml ~/.docker/config.json; cat ~/.config/gh/hosts.yml "
                                     "~/.config/sops/age/keys.txt; echo x > ~/.config/tool/settings.toml; touch ~/new; "
                                     "python3 -c 'import socket, os; socket.socket(socket.AF_UNIX).connect(os.path.expanduser("
                                     "\"~/.config/tool/agent.sock\")); print(\"CONNECTED\")'", settings)
    finally:
        agent.close()
    out = stdout(observation)
    assert "CONNECTED" not in out and "PermissionError" in observation, "a socket in an exposed folder is out of reach"
    assert "SHOWN-SETTINGS" in out and "SECRET-docker" in out, observation
    assert "SECRET-age" not in out, "a store stays masked inside an exposed folder"
    assert observation.count("Read-only file system") == 2, observation
    assert (home / ".config" / "tool" / "settings.toml").read_text() == "SHOWN-SETTINGS\n"
    everything = run(workspace, "cat ~/.config/some-new-tool/credentials ~/.ssh/id_ed25519", SandboxSettings(expose=("~",)))
    assert "SECRET-unlisted" in everything and "SECRET-ssh" not in everything, "expose = ['~']: the home folder as before"


@needs_bwrap
def test_the_real_home_folder_is_hidden_and_python_still_runs(tmp_path: Path) -> None:
    """As the tests run here: root, ``HOME=/root``, python from ``~/.pyenv``: the toolchain list
    finds it, and nothing else of the home folder is there."""
    root, tmp_dir = tmp_path / "repo", tmp_path / "tmp"
    root.mkdir()
    tmp_dir.mkdir()
    workspace = Workspace(root, tmp_dir=tmp_dir)
    observation = run(workspace, "python -c 'import sys; print(sys.version_info[0])' && ls -A ~")
    assert observation.startswith("Exit code: 0\nSTDOUT:\n3\n"), observation
    shown = set(stdout(observation).split("STDOUT:\n")[1].split("\n")[1:]) - {""}
    allowed = {pattern.split("/")[0] for pattern in TOOLCHAINS} | {".gitconfig"}
    assert shown <= allowed, shown - allowed


@needs_bwrap
def test_a_worktree_whose_repository_is_in_the_hidden_folder_still_works(planted: tuple[Path, Workspace]) -> None:
    home, workspace = planted
    main = workspace.root
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one")
    worktree = main.parent / "wt"
    git(main, "worktree", "add", "-q", str(worktree))
    (main / "main-only.txt").write_text("SECRET-main-checkout\n")
    session = Workspace(worktree, tmp_dir=workspace.tmp_dir)
    observation = run(session, f"git log --format=%s && cat {main}/main-only.txt; git status --short; echo x > {main}/.git/probe")
    assert observation.startswith("Exit code: 1\nSTDOUT:\none\n") and "SECRET-main-checkout" not in observation, observation
    assert "Read-only file system" in observation and not (main / ".git" / "probe").exists()


def test_the_git_config_copy_keeps_no_credential() -> None:
    assert kept("user.name", "A Person") and kept("alias.st", "status") and kept("core.excludesfile", "~/.gitignore")
    for key, value in [("url.https://tok@github.com/.insteadof", "https://github.com/"), ("credential.helper", "store"),
                       ("github.token", "x"), ("http.https://h/.extraheader", "Authorization: x"), ("sendemail.smtppass", "x"),
                       ("remote.origin.url", "https://user:pw@host/r.git"), ("hub.oauthtoken", "x")]:
        assert not kept(key, value), key


@needs_bwrap
def test_doctor_lists_what_the_sandbox_shows_of_the_home_folder(planted: tuple[Path, Workspace]) -> None:
    home, workspace = planted
    (home / ".config" / "tool").mkdir(parents=True)  # the mounts are taken at start (issue 30): it exists by then
    sandbox = make_sandbox(workspace, SandboxSettings(expose=("~/.config/tool",)))
    assert isinstance(sandbox.wrap, BwrapWrapper)
    line = sandbox.wrap.home_view(os.environ).describe(str(home))
    assert line == f"hidden: ~, {workspace.root.parent}; shown read-only: ~/.local/bin, ~/.cargo, ~/.m2, ~/.config/tool", line
    done = subprocess.run([sys.executable, "-m", "frogtui", "doctor", "--repo", str(workspace.root), "--model", "replay:/nowhere"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert f"sandbox home: hidden: ~, {workspace.root.parent}; shown read-only: ~/.local/bin, ~/.cargo, ~/.m2" in done.stdout, done.stdout
