"""The sandbox against a hostile model (issue 9): no write to .git, no capabilities (as root and as
an unprivileged user), no daemon sockets, no secrets, an allowlisted environment; and the person's
toolchain (virtualenv) still runs (issue 11). Real bubblewrap, real git."""
from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from frogtui.approval import SandboxSettings, facts, make_sandbox, secrets
from frogtui.approval.sandbox import BwrapWrapper, probe_bwrap
from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.bash import shell_argv
from frogtui.tools.workspace import Workspace
from tests.support import git

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or probe_bwrap(BWRAP) is not None,
    reason=f"bubblewrap is not usable here: {probe_bwrap(BWRAP) if BWRAP else 'not installed'}",
)
# listening sockets these tests make on the host would be masked by the sandbox that
# test_unprivileged_user_gets_the_same_sandbox runs as nobody, which cannot reach them: one worker
pytestmark = [needs_bwrap, pytest.mark.xdist_group("host sockets")]


@pytest.fixture
def workspace(py_repo: Path, tmp_path: Path) -> Workspace:
    (tmp_path / "session-tmp").mkdir()
    return Workspace(py_repo, tmp_dir=tmp_path / "session-tmp")


def run(workspace: Workspace, command: str, settings: SandboxSettings | None = None) -> str:
    sandbox = make_sandbox(workspace, settings or SandboxSettings())
    assert sandbox.wrap is not None, sandbox.warning
    return ToolRunner(workspace, wrap=sandbox.wrap).run(ToolCall("t", "Bash", {"command": command})).observation


def tree_state(folder: Path) -> dict[str, str]:
    """Every path under ``folder`` with its type, mode and content hash."""
    state = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        state[str(path.relative_to(folder))] = f"{oct(info.st_mode)} {digest}"
    return state


# .git (finding 1, 4, 5) -------------------------------------------------------------------------
GIT_ATTACKS = [
    "mkdir -p /tmp/evil/hooks && printf '#!/bin/sh\\ntouch PWNED\\n' > /tmp/evil/hooks/reference-transaction; "
    "echo /tmp/evil > .git/commondir",
    "echo '[core] hooksPath = /tmp' > .git/config.worktree",
    "echo '* filter=evil' > .git/info/attributes",
    "rm -rf .git/objects .git/refs .git/HEAD",
    "mkdir -p .git/refs/frogtui/zzzz && git rev-parse HEAD^{tree} > .git/refs/frogtui/zzzz/start",
    "for f in .git/objects/??/*; do chmod u+w $f; echo forged > $f; done",
    "python3 -c 'import pathlib; pathlib.Path(\".git/packed-refs\").write_text(\"x\")'",
    "mv .git .git-old; mkdir .git",
    "git update-ref refs/heads/main HEAD~0 && git tag planted",
]


@pytest.mark.parametrize("attack", GIT_ATTACKS)
def test_git_is_read_only_as_a_whole(workspace: Workspace, attack: str) -> None:
    before = tree_state(workspace.root / ".git")
    observation = run(workspace, attack)
    assert tree_state(workspace.root / ".git") == before, observation
    assert not (workspace.root / "PWNED").exists()


def test_every_path_under_git_is_read_only(workspace: Workspace) -> None:
    """The write surface, as a property: every file and folder under .git (and the files git would
    create there) refuses a write, a delete and a new entry."""
    git_dir = workspace.root / ".git"
    entries = [p.relative_to(workspace.root).as_posix() for p in git_dir.rglob("*")]
    absent = ["commondir", "config.worktree", "info/attributes", "info/exclude2", "shallow", "info/grafts", "objects/info/alternates"]
    entries += [f".git/{name}" for name in absent]
    script = "; ".join(
        f"(echo x >> '{e}' || true; rm -rf '{e}' 2>/dev/null; mkdir -p '{e}.d' 2>/dev/null; touch '{e}.new' 2>/dev/null)" for e in entries
    )
    before = tree_state(git_dir)
    run(workspace, script + "; true")
    assert tree_state(git_dir) == before


def test_git_in_the_sandbox_reads_but_cannot_write(workspace: Workspace) -> None:
    observation = run(workspace, "git log --oneline | wc -l; echo b > b.txt; git add b.txt")
    assert "Exit code: 128" in observation and "Read-only file system" in observation, observation
    assert (workspace.root / "b.txt").exists()


SUBMODULE_ATTACKS = {
    "replace .git": "rm -rf sub/.git; git init -q sub; git -C sub config core.fsmonitor 'touch {marker}'",
    "move the folder away": "mv sub sub-old; mkdir sub; git init -q sub; git -C sub config core.fsmonitor 'touch {marker}'",
    "plant in an uninitialised one": "git init -q empty; git -C empty config core.fsmonitor 'touch {marker}'",
    "replace the parent": "mv lib lib-old; mkdir -p lib/deep; git init -q lib/deep; git -C lib/deep config core.fsmonitor 'touch {marker}'",
}


@pytest.mark.parametrize("attack", SUBMODULE_ATTACKS)
def test_a_submodules_git_cannot_be_planted(workspace: Workspace, tmp_path: Path, attack: str) -> None:
    """Red team (rt9): a submodule's ``.git`` is a file in the writable working tree. Replaced by a
    repository whose config sets ``core.fsmonitor``, the person's next ``git status`` (a shell
    prompt, an editor) recursed into it and ran the command outside the sandbox."""
    root, marker = workspace.root, tmp_path / "PWNED"
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    git(upstream, "commit", "-q", "--allow-empty", "-m", "up")
    for path in ("sub", "lib/deep", "empty"):
        git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), path)
    git(root, "commit", "-q", "-m", "submodules")
    git(root, "submodule", "deinit", "-q", "-f", "empty")
    observation = run(workspace, SUBMODULE_ATTACKS[attack].format(marker=marker))
    subprocess.run(["git", "status", "--short"], cwd=root, capture_output=True, check=False)
    subprocess.run(["git", "-C", "lib", "status", "--short"], cwd=root, capture_output=True, check=False)
    assert not marker.exists(), observation
    assert git(root, "submodule", "status").count("\n") == 3


def test_other_sessions_are_not_readable_inside(py_repo: Path, on_disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Red team (rt9): frogtui's state folder (every session's trajectory, replay, log and private
    temp folder, of every repository, and the trust store) was readable from the sandbox; only this
    session's temp folder is there now."""
    monkeypatch.setenv("XDG_STATE_HOME", str(on_disk / "state"))
    from frogtui.config import sessions_dir

    other = sessions_dir() / "20260101-000000-aaaaaa"
    (other / "tmp").mkdir(parents=True)
    (other / "trajectory.json").write_text('{"secret": "OTHER-REPO-CONTENT"}')
    (other / "tmp" / "scratch").write_text("OTHER-TMP")
    (sessions_dir().parent / "trusted-projects.json").write_text("{}")
    mine = sessions_dir() / "20260102-000000-bbbbbb" / "tmp"
    mine.mkdir(parents=True)
    workspace = Workspace(py_repo, tmp_dir=mine)
    observation = run(workspace, f"cat {other}/trajectory.json {other}/tmp/scratch; ls -A {sessions_dir()}; "
                                 f"echo mine > $TMPDIR/x && cat $TMPDIR/x")
    assert "OTHER-" not in observation and "aaaaaa" not in observation.split("STDERR:")[0], observation
    assert "mine" in observation and (mine / "x").read_text() == "mine\n"


# capabilities (finding 2) ---------------------------------------------------------------------
REMOUNT = ("grep CapEff /proc/self/status; mount -o remount,bind,rw / ; mount -o remount,rw {git}; "
           "echo x > /etc/frogtui-remount-probe; echo x > {git}/probe")


def test_root_inside_cannot_remount(workspace: Workspace) -> None:
    observation = run(workspace, REMOUNT.format(git=workspace.root / ".git"))
    assert "CapEff:\t0000000000000000" in observation, observation
    assert not Path("/etc/frogtui-remount-probe").exists()
    assert not (workspace.root / ".git" / "probe").exists()


def test_unprivileged_user_gets_the_same_sandbox() -> None:
    setpriv = shutil.which("setpriv")
    if setpriv is None or os.geteuid() != 0:
        pytest.skip("LOUD SKIP: needs root and setpriv to run the sandbox as an unprivileged user")
    with tempfile.TemporaryDirectory(prefix="frogtui-nobody-") as folder:
        base = Path(folder)
        root, tmp_dir = base / "repo", base / "tmp"
        root.mkdir()
        tmp_dir.mkdir()
        git(root, "init", "-q")
        for path in (base, root, tmp_dir, *root.rglob("*")):
            os.chown(path, 65534, 65534, follow_symlinks=False)
        _run_as_nobody(setpriv, root, tmp_dir)


def _run_as_nobody(setpriv: str, root: Path, tmp_dir: Path) -> None:
    wrap = BwrapWrapper(BWRAP or "bwrap", root, tmp_dir)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_dir)}
    command = shell_argv(REMOUNT.format(git=root / ".git") + "; id -u")
    argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *wrap.options(env), "--", *command]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env)
    assert "CapEff:\t0000000000000000" in done.stdout and done.stdout.strip().endswith("65534"), done.stdout + done.stderr
    assert not Path("/etc/frogtui-remount-probe").exists() and not (root / ".git" / "probe").exists()


# sockets and /run (finding 3) -----------------------------------------------------------------
def test_daemon_sockets_and_run_are_hidden(workspace: Workspace, on_disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = on_disk / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    agent = on_disk / "agent.sock"
    servers = []
    for path in (agent, runtime / "bus"):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen()
        servers.append(server)
    try:
        probe = ("import socket, sys\nfor p in sys.argv[1:]:\n"
                 "    try: socket.socket(socket.AF_UNIX).connect(p); print('CONNECTED', p)\n"
                 "    except OSError as e: print('refused', p, e)\n")
        (workspace.tmp_dir / "probe.py").write_text(probe)
        observation = run(workspace, f"python3 $TMPDIR/probe.py {agent} {runtime}/bus; ls -A /run | wc -l; ls -A {runtime} | wc -l")
    finally:
        for server in servers:
            server.close()
    assert "CONNECTED" not in observation and observation.count("\nrefused ") == 2, observation
    assert observation.split("STDOUT:\n")[1].split("\n")[2:4] == ["0", "0"], observation


# secrets (finding 3) ---------------------------------------------------------------------------
def test_secret_stores_are_empty_inside(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    home = workspace.tmp_dir / "home"
    files = {".ssh/id_ed25519": "KEY", ".aws/credentials": "AWS", ".config/gh/hosts.yml": "GH", ".netrc": "NETRC",
             ".git-credentials": "GITCRED", ".bash_history": "HIST", ".config/work/token": "WORK", ".npmrc": "NPMRC"}
    for name, text in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    monkeypatch.setenv("HOME", str(home))
    settings = SandboxSettings(hide=("~/.config/work",), expose=("~/.npmrc",))
    observation = run(workspace, "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.config/gh/hosts.yml ~/.netrc ~/.git-credentials "
                                 "~/.bash_history ~/.config/work/token ~/.npmrc; cp -r ~/. loot", settings)
    for text in ("KEY", "AWS", "GH", "NETRC", "GITCRED", "HIST", "WORK"):
        assert text not in observation.split("STDERR")[0], (text, observation)
    assert "NPMRC" in observation
    copied = "".join(p.read_text() for p in (workspace.root / "loot").rglob("*") if p.is_file())
    assert copied == "NPMRC", copied


def test_the_floor_and_the_sandbox_share_one_list() -> None:
    assert facts.SECRET_STORES is secrets.SECRET_STORES
    for store in (".ssh", ".aws", ".config/gh", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".kube", ".docker/config.json"):
        assert store in secrets.SECRET_STORES


def test_environment_is_an_allowlist(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    leaked = {"DATABASE_URL": "postgres://u:p@h/db", "SENTRY_DSN": "https://k@sentry", "SLACK_WEBHOOK_URL": "https://hooks",
              "STRIPE_SK": "sk_live", "BW_SESSION": "bw", "CI_JOB_JWT": "jwt", "PGPASS": "pw", "SOME_RANDOM_THING": "r"}
    for name, value in leaked.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("VIRTUAL_ENV", "/nowhere/venv")
    observation = run(workspace, "env", SandboxSettings(env=("DATABASE_URL",)))
    for name in leaked:
        assert (f"{name}=" in observation) == (name == "DATABASE_URL"), name
    assert "VIRTUAL_ENV=/nowhere/venv" in observation and "PATH=" in observation and "HOME=" in observation


# the person's toolchain (issue 11) -------------------------------------------------------------
@pytest.mark.parametrize("bash", ["bwrap", "none"])
def test_bash_runs_the_virtualenv_of_the_shell_that_started_frogtui(workspace: Workspace, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch, bash: str) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "only_in_venv.py").write_text("WHERE = 'venv'\n")
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    sandbox = make_sandbox(workspace, SandboxSettings(bash=bash))
    runner = ToolRunner(workspace, wrap=sandbox.wrap)
    command = "python -c 'import only_in_venv, sys; print(only_in_venv.WHERE, sys.prefix)'"
    observation = runner.run(ToolCall("t", "Bash", {"command": command})).observation
    assert observation.startswith(f"Exit code: 0\nSTDOUT:\nvenv {venv}\n"), observation
    assert "pyenv" not in observation


# fallbacks and edges ---------------------------------------------------------------------------
FALLBACKS = [("--disable-userns", "userns-nested", False), ("--unshare-user", "caps", True)]


@pytest.mark.parametrize(("refused", "privileges", "warned"), FALLBACKS)
def test_an_older_or_restricted_bwrap_keeps_what_it_can(workspace: Workspace, tmp_path: Path, refused: str, privileges: str,
                                                        warned: bool) -> None:
    """bwrap before 0.8 has no --disable-userns; some hosts forbid user namespaces: the next best
    sandbox is used (still no capabilities), with a warning when root keeps its file access."""
    fake = tmp_path / "bwrap"
    fake.write_text(f'#!/bin/sh\nfor a in "$@"; do [ "$a" = "{refused}" ] && {{ echo "bwrap: Unknown option {refused}" >&2; exit 1; }}; '
                    f'[ "$a" = "--" ] && break; done\nexec {BWRAP} "$@"\n')
    fake.chmod(0o755)
    sandbox = make_sandbox(workspace, SandboxSettings(), bwrap=str(fake))
    assert isinstance(sandbox.wrap, BwrapWrapper) and sandbox.wrap.privileges == privileges
    assert (sandbox.warning is not None) == warned
    remount = ToolCall("t", "Bash", {"command": REMOUNT.format(git=workspace.root / ".git")})
    observation = ToolRunner(workspace, wrap=sandbox.wrap).run(remount).observation
    assert "CapEff:\t0000000000000000" in observation and not (workspace.root / ".git" / "probe").exists()


def test_a_repository_inside_a_secret_store_stays_usable(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(workspace.root.parent))
    store = workspace.root.parent / ".config" / "gh"
    store.mkdir(parents=True)
    from frogtui.approval.sandbox.mounts import mask_options

    assert mask_options([str(store), str(workspace.root.parent)], [workspace.root]) == ["--tmpfs", str(store)]


def test_a_toolchain_folder_under_a_hidden_one_is_bound_back_where_path_names_it(on_disk: Path, workspace: Workspace) -> None:
    from frogtui.approval.sandbox.mounts import toolchain_options

    (on_disk / "runtime" / "sw" / "bin").mkdir(parents=True)
    (on_disk / "store").mkdir()
    (on_disk / "runtime" / "current").symlink_to(on_disk / "store")
    environ = {"XDG_RUNTIME_DIR": str(on_disk / "runtime"), "PATH": f"{on_disk}/runtime/sw/bin:{on_disk}/runtime/current:/usr/bin"}
    options = toolchain_options(environ, [workspace.root])
    assert options == ["--ro-bind", f"{on_disk}/runtime/sw/bin", f"{on_disk}/runtime/sw/bin",
                       "--ro-bind", f"{on_disk}/store", f"{on_disk}/runtime/current"]


SYSCALLS = """
import ctypes, errno, os, time
libc = ctypes.CDLL(None, use_errno=True)
child = os.fork()
if child == 0:
    time.sleep(5); os._exit(0)
def outcome(result):
    return "ok" if result == 0 else errno.errorcode[ctypes.get_errno()]
print("ptrace", outcome(libc.ptrace(16, child, None, None)))  # PTRACE_ATTACH to our own child
ctypes.set_errno(0)
print("tiocsti", outcome(libc.ioctl(0, 0x5412, ctypes.c_char_p(b"x"))))
ctypes.set_errno(0)
print("vsock", "ok" if libc.socket(40, 1, 0) >= 0 else errno.errorcode[ctypes.get_errno()])  # AF_VSOCK: no namespace holds it
os.kill(child, 9)
"""


def test_the_seccomp_filter_refuses_ptrace_and_tiocsti(workspace: Workspace) -> None:
    import platform

    from frogtui.approval.sandbox.seccomp import ARCHES

    if platform.machine() not in ARCHES:
        pytest.skip(f"LOUD SKIP: no seccomp filter for {platform.machine()}")
    (workspace.tmp_dir / "calls.py").write_text(SYSCALLS)
    sandbox = make_sandbox(workspace, SandboxSettings())
    assert isinstance(sandbox.wrap, BwrapWrapper) and sandbox.wrap.seccomp is not None, sandbox.warning
    calls = ToolCall("t", "Bash", {"command": "python3 $TMPDIR/calls.py"})
    observation = ToolRunner(workspace, wrap=sandbox.wrap).run(calls).observation
    assert "ptrace EPERM" in observation and "tiocsti EPERM" in observation and "vsock EPERM" in observation, observation
    plain = subprocess.run([sys.executable, str(workspace.tmp_dir / "calls.py")], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, check=False)
    assert "ptrace ok" in plain.stdout and "tiocsti ENOTTY" in plain.stdout, plain.stdout + plain.stderr
