"""One view (issue 30, findings 6): the sandbox's mounts come from the person's settings and
environment at start, never from what the sandbox can change; every secret store under anything
bound is masked; Read and Glob see exactly what a sandboxed command sees (the same mount list); an
attempt's sandbox hides what a single run hides; the repository's own git config is served without
its credentials. Real bubblewrap, real git, a fake home folder outside /tmp with planted secrets."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, SandboxSettings, make_sandbox
from frogtui.approval.sandbox import probe_bwrap
from frogtui.approval.sandbox.gitconfig import sanitize
from frogtui.approval.sandbox.view import SandboxView
from frogtui.config import Config
from frogtui.protocol import ToolCall
from frogtui.session.core import SessionCore
from frogtui.tools import ToolRunner
from frogtui.tools.project_env import find_project_python
from frogtui.tools.workspace import Workspace
from tests.support import git, turn, write_replay

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here")

LOCAL_SECRETS = {".local/share/keyrings/login.keyring": "SECRET-keyring", ".local/share/fish/fish_history": "SECRET-history"}
GIT_CONFIG = """[core]
\trepositoryformatversion = 0
\tbare = false
[user]
\tname = Kept Person
[remote "origin"]
\turl = https://x-access-token:SECRET-url-token@github.com/o/r.git
\tfetch = +refs/heads/*:refs/remotes/origin/*
[http "https://github.com/"]
\textraheader = AUTHORIZATION: basic SECRET-extraheader
[credential "https://github.com"]
\tusername = SECRET-credential-user
[include]
\tpath = creds.inc
"""


@pytest.fixture
def planted(on_disk: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Workspace]:
    """A fake $HOME outside /tmp with secret stores under ``~/.local``, a repository beside another
    project (``neighbour/.env``) in a projects folder outside the home folder."""
    home = on_disk / "home"
    for name, text in LOCAL_SECRETS.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text + "\n")
    (home / ".local" / "bin").mkdir(parents=True)
    os.symlink(sys.executable, home / ".local" / "bin" / "python")  # ~/.local looks like a virtualenv
    projects = on_disk / "projects"
    (projects / "neighbour").mkdir(parents=True)
    (projects / "neighbour" / ".env").write_text("SECRET-neighbour\n")
    root = projects / "repo"
    root.mkdir()
    git(root, "init", "-q")
    session_tmp = on_disk / "session-tmp"
    session_tmp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    return home, Workspace(root, tmp_dir=session_tmp)


def bash(workspace: Workspace, command: str, *, project: Path | None = None) -> str:
    sandbox = make_sandbox(workspace, SandboxSettings(), project=project)
    assert sandbox.wrap is not None, sandbox.warning
    return ToolRunner(workspace, wrap=sandbox.wrap).run(ToolCall("t", "Bash", {"command": command})).observation


def read(workspace: Workspace, path: str, **call: str) -> str:
    """The Read (or Glob) tool as a session runs it: the policy first, then the tool in the
    sandbox's runner."""
    name = "Glob" if "pattern" in call else "Read"
    tool_call = ToolCall("t", name, {"file_path": path} if name == "Read" else {"path": path, **call})
    sandbox = make_sandbox(workspace, SandboxSettings())
    engine = PolicyEngine(workspace)
    engine.shown = sandbox.wrap.shown if sandbox.wrap is not None else None  # as SessionCore.prepare does
    decision = engine.evaluate(tool_call)
    if decision.kind == "deny":
        return f"DENIED {decision.reason}"
    return ToolRunner(workspace, wrap=sandbox.wrap).run(tool_call).observation


# a .venv that leads out of the repository ------------------------------------------------------
@needs_bwrap
def test_a_venv_linked_to_the_home_folder_binds_nothing_back(planted: tuple[Path, Workspace]) -> None:
    home, workspace = planted
    os.symlink(home / ".local", workspace.root / ".venv")
    sandbox = make_sandbox(workspace, SandboxSettings())
    assert any(".venv" in note and "outside the repository" in note for note in sandbox.notes), sandbox.notes
    observation = bash(workspace, "cat ~/.local/share/keyrings/login.keyring ~/.local/share/fish/fish_history "
                                  ".venv/share/keyrings/login.keyring .venv/share/fish/fish_history; ls ~/.local/share; echo END")
    assert "END" in observation and "SECRET-" not in observation, observation
    assert find_project_python(os.environ, workspace.root).source != "the repository's .venv", "the .venv is ignored"
    rules = workspace.tmp_dir / "rules.toml"
    rules.write_text("")
    core = SessionCore(Config(repo=workspace.root, model_spec="replay:/nowhere", approve="all", rules_file=rules))
    warnings = core.prepare()
    assert any(".venv leads outside the repository" in line for line in warnings), warnings


@needs_bwrap
def test_a_venv_made_by_the_sandbox_changes_no_mount(planted: tuple[Path, Workspace]) -> None:
    """The mounts are taken at start: a ``.venv`` (or a ``.git`` file) a command makes later binds
    nothing into the next command."""
    home, workspace = planted
    shutil.rmtree(workspace.root / ".git")  # a folder that is no repository: a command may write .git
    sandbox = make_sandbox(workspace, SandboxSettings())
    runner = ToolRunner(workspace, wrap=sandbox.wrap)
    first = runner.run(ToolCall("t", "Bash", {"command": f"ln -s {home}/.local .venv && printf 'gitdir: {home}/.local/share\\n' > .git"}))
    assert first.observation.startswith("Exit code: 0"), first.observation
    second = runner.run(ToolCall("t", "Bash", {"command": f"cat {home}/.local/share/keyrings/login.keyring "
                                                          f"{home}/.local/share/fish/fish_history; echo END"})).observation
    assert "END" in second and "SECRET-" not in second, second


# Read and Glob see what a command sees --------------------------------------------------------
@needs_bwrap
def test_read_and_glob_see_no_folder_the_sandbox_hides(planted: tuple[Path, Workspace], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, on_disk: Path) -> None:
    home, workspace = planted
    krb = tmp_path / "krb5cc_0"
    krb.write_text("SECRET-kerberos\n")
    runtime = on_disk / "runtime"
    (runtime / "secrets").mkdir(parents=True)
    (runtime / "secrets" / "db_password").write_text("SECRET-run\n")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    (workspace.tmp_dir / "mine.txt").write_text("the session's own\n")
    for path in (str(krb), str(runtime / "secrets" / "db_password")):
        assert "SECRET-" not in bash(workspace, f"cat {path}"), "the sandbox hides it from Bash"
        seen = read(workspace, path)
        assert "SECRET-" not in seen and seen.startswith("DENIED"), seen
    listed = read(workspace, str(tmp_path), pattern="**/*")
    assert "krb5cc_0" not in listed, listed
    os.symlink(tmp_path, workspace.root / "link")  # a search from the repository that walks into a hidden folder
    listed = read(workspace, ".", pattern="**/krb5cc_*")
    assert "krb5cc_0" not in listed, listed
    assert "the session's own" in read(workspace, str(workspace.tmp_dir / "mine.txt")), "the session's temp folder is shown"


# an attempt hides what a single run hides ----------------------------------------------------
@needs_bwrap
def test_an_attempts_sandbox_hides_the_persons_project_parent(planted: tuple[Path, Workspace], on_disk: Path) -> None:
    home, workspace = planted
    root = workspace.root
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one")
    worktree = on_disk / "state" / "worktrees" / "attempt-1"
    git(root, "worktree", "add", "-q", str(worktree))
    git(root, "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic SECRET-extraheader")
    assert "SECRET-neighbour" not in bash(workspace, f"cat {root.parent}/neighbour/.env"), "a single run hides it"
    rules = on_disk / "rules.toml"
    rules.write_text("")
    config = Config(repo=worktree, model_spec=f"replay:{write_replay(on_disk / 'replay.jsonl', [turn('', answer='hi')])}",
                    approve="all", rules_file=rules)
    core = SessionCore(config, trust_as=root)
    core.prepare()
    assert core.sandbox is not None and core.sandbox.wrap is not None, core.sandbox
    runner = ToolRunner(core.workspace, wrap=core.sandbox.wrap)
    observation = runner.run(ToolCall("t", "Bash", {"command": f"cat {root.parent}/neighbour/.env; git log --format=%s; "
                                                           f"git config --list; cat {root}/.git/config"})).observation
    assert "SECRET-" not in observation and "one" in observation, "the common dir's config is served without credentials"
    decision = core.policy.evaluate(ToolCall("t", "Read", {"file_path": str(root.parent / "neighbour" / ".env")}))
    assert decision.kind == "deny", decision


# the repository's own credentials ------------------------------------------------------------
@pytest.fixture
def credentials(planted: tuple[Path, Workspace]) -> Workspace:
    """The repository's ``.git/config`` as actions/checkout and a token URL leave it, with an
    included file holding a token."""
    _, workspace = planted
    (workspace.root / ".git" / "config").write_text(GIT_CONFIG)
    (workspace.root / ".git" / "creds.inc").write_text("[github]\n\ttoken = SECRET-included\n")
    os.symlink(".git/config", workspace.root / "cfg")
    return workspace


@needs_bwrap
def test_sandboxed_git_and_cat_see_the_repository_config_without_credentials(credentials: Workspace) -> None:
    observation = bash(credentials, "git remote -v; git config --list --show-origin; git config user.name; "
                                    "cat .git/config .git/creds.inc cfg; grep -rs SECRET- .git; echo END")
    assert "END" in observation and "SECRET-" not in observation, observation
    assert "origin\thttps://github.com/o/r.git (fetch)" in observation, "the remote stays usable, without its token"
    assert "Kept Person" in observation
    assert "SECRET-url-token" in (credentials.root / ".git" / "config").read_text(), "the real file is untouched"


@needs_bwrap
def test_read_serves_the_repository_config_without_credentials(credentials: Workspace) -> None:
    for path in (".git/config", "cfg", ".git/creds.inc"):
        seen = read(credentials, path)
        assert "SECRET-" not in seen, (path, seen)
    seen = read(credentials, ".git/config")
    assert "Kept Person" in seen and "https://github.com/o/r.git" in seen, seen
    without = PolicyEngine(credentials).evaluate(ToolCall("t", "Read", {"file_path": ".git/config"}))
    assert without.kind == "deny", "with no sandbox to serve the copy from, the file is not read at all"


def test_the_view_reads_the_mount_list_back() -> None:
    """Each later mount covers what an earlier one put at or under its destination; a tmpfs, the
    sandbox's own /dev and a /dev/null mask show nothing of the host; a bind shows its source."""
    view = SandboxView.of(["bwrap", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                           "--tmpfs", "/tmp", "--tmpfs", "/home/p", "--ro-bind", "/data/local", "/home/p/.local",
                           "--bind", "/tmp/s", "/tmp/s", "--ro-bind", "/dev/null", "/home/p/.local/share/keyrings",
                           "--ro-bind", "/tmp/copy", "/r/.git/config", "--remount-ro", "/home/p", "--", "/etc/x"])
    assert view.source("/etc/passwd") == "/etc/passwd" and view.source("/proc/cpuinfo") == "/proc/cpuinfo"
    assert view.source("/dev/shm/left-by-someone") is None and view.source("/tmp/krb5cc_0") is None
    assert view.source("/tmp/s/a") == "/tmp/s/a" and view.source("/home/p/.ssh/id_rsa") is None
    assert view.source("/home/p/.local/bin/x") == "/data/local/bin/x"
    assert view.source("/home/p/.local/share/keyrings/login") is None
    assert view.source("/r/.git/config") == "/tmp/copy" and view.shows("/etc/passwd") and not view.shows("/r/.git/config")
    assert view.places("/data/local/share/fish") == ["/data/local/share/fish", "/home/p/.local/share/fish"]


def test_a_url_in_the_copy_loses_its_credentials_and_keeps_its_login() -> None:
    assert sanitize("remote.origin.url", "https://x-access-token:tok@github.com/o/r.git") == ("remote.origin.url", "https://github.com/o/r.git")
    assert sanitize("remote.origin.url", "https://tok@github.com/o/r.git") == ("remote.origin.url", "https://github.com/o/r.git")
    assert sanitize("remote.up.url", "ssh://git:pw@host/r.git") == ("remote.up.url", "ssh://git@host/r.git")
    assert sanitize("remote.up.url", "git@github.com:o/r.git") == ("remote.up.url", "git@github.com:o/r.git")
    assert sanitize("http.https://github.com/.extraheader", "AUTHORIZATION: basic x") is None
    assert sanitize("credential.https://github.com.username", "me") is None
    assert sanitize("includeif.gitdir:/x/.path", "/tmp/creds.config") is None
