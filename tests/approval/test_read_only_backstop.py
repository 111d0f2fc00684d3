"""Every automatic "yes" has an OS backstop (issue 23, item 1): a command the read-only default lets
through runs in a read-only sandbox (the whole file system read-only, the repository included, a
private empty temp folder, no network), so that a wrong proof still changes nothing; without a
working sandbox there is no read-only default and the person is told why. End to end with real
bubblewrap and ``frogtui run``."""
from __future__ import annotations

import json
import shutil
import socket
import threading
from pathlib import Path

import pytest

from frogtui.approval import SandboxSettings, make_sandbox
from frogtui.approval.sandbox import probe_bwrap
from frogtui.cli import main
from frogtui.config import config_dir
from frogtui.protocol import ToolCall
from frogtui.tools.runner import ToolRunner
from frogtui.tools.workspace import Workspace
from tests.support import git, turn, write_replay, xml_call

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here")


class Listener:
    """A TCP server on the host's loopback that records whether anything connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.reached = False
        self.done = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            self.reached = True
            conn.close()

    def close(self) -> None:
        self.done.set()
        self.sock.close()


def fake_cat(folder: Path, port: int) -> Path:
    """A ``cat`` first on PATH that the analysis takes for the real one (so ``cat calc.py`` is
    proven read-only) but that writes the repository and its temp folder and calls the network."""
    folder.mkdir()
    script = folder / "cat"
    script.write_text(
        "#!/bin/bash\n"
        'echo pwned > "$PWD/PWNED" || echo "repo: no write"\n'
        'echo pwned >> "$PWD/calc.py" || echo "calc: no write"\n'
        'echo private > "$TMPDIR/mine" && echo "tmp: $(/usr/bin/cat "$TMPDIR/mine")"\n'
        f"(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo 'net: reached' || echo 'net: unreachable'\n"
    )
    script.chmod(0o755)
    return folder


@needs_bwrap
def test_a_wrong_proof_of_read_only_cannot_write_or_reach_the_network(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listener = Listener()
    try:
        monkeypatch.setenv("PATH", f"{fake_cat(tmp_path / 'bin', listener.port)}:/usr/bin:/bin")
        replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Bash", command="cat calc.py")), turn("", answer="done")])
        trajectory = tmp_path / "t.json"
        code = main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "policy",
                     "--trajectory", str(trajectory)])
        assert code == 0
        data = json.loads(trajectory.read_text())
    finally:
        listener.close()
    (approval,) = [a for step in data["steps"] for a in step["approvals"]]
    assert (approval["decision"], approval["rule"]) == ("allow", "read-only")
    observation = next(m["content"] for m in data["messages"] if m["role"] == "tool")
    assert "repo: no write" in observation and "calc: no write" in observation, observation
    assert "tmp: private" in observation and "net: unreachable" in observation, observation
    assert not (py_repo / "PWNED").exists() and git(py_repo, "status", "--porcelain") == ""
    assert not listener.reached


@needs_bwrap
def test_a_command_a_person_approves_still_writes(py_repo: Path, tmp_path: Path) -> None:
    """The read-only mode is only for what was proven read-only: ``--approve all`` of a write runs
    in the ordinary sandbox (after a checkpoint)."""
    replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Bash", command="touch made.txt")), turn("", answer="done")])
    assert main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all"]) == 0
    assert (py_repo / "made.txt").exists()


@needs_bwrap
def test_the_read_only_sandbox_has_an_empty_private_temp_folder(py_repo: Path, tmp_path: Path) -> None:
    tmp_dir = tmp_path / "session-tmp"
    tmp_dir.mkdir()
    (tmp_dir / "earlier").write_text("from an earlier command\n")
    runner = ToolRunner(Workspace(py_repo, tmp_dir=tmp_dir), wrap=make_sandbox(Workspace(py_repo, tmp_dir=tmp_dir), SandboxSettings()).wrap)
    outcome = runner.run(ToolCall("t", "Bash", {"command": 'ls -A "$TMPDIR"; echo new > "$TMPDIR/x" && echo wrote'}), read_only=True)
    assert "earlier" not in outcome.observation and "wrote" in outcome.observation
    assert sorted(p.name for p in tmp_dir.iterdir()) == ["earlier"]


def test_without_a_sandbox_there_is_no_read_only_default(py_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    assert main(["policy", "check", "--repo", str(py_repo), "ls -la"]) == 1  # ask
    out, err = capsys.readouterr()
    assert out.split("\t")[:2] == ["ask", "Bash: ask (default)"], out
    assert "read-only default is off" in err and 'bash = "none"' in err


def test_without_a_sandbox_a_read_only_command_is_denied_headless_and_the_run_says_why(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Bash", command="ls -la")), turn("", answer="done")])
    trajectory = tmp_path / "t.json"
    assert main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--trajectory", str(trajectory)]) == 0
    (approval,) = [a for step in json.loads(trajectory.read_text())["steps"] for a in step["approvals"]]
    assert approval["decision"] == "deny" and approval["rule"] == "Bash: ask (default)"
    assert "read-only default is off" in capsys.readouterr().err


def test_a_runner_without_a_read_only_sandbox_refuses_a_read_only_run(py_repo: Path) -> None:
    runner = ToolRunner(Workspace(py_repo, tmp_dir=py_repo / ".t"))
    assert not runner.confines_read_only
    outcome = runner.run(ToolCall("t", "Bash", {"command": "touch x"}), read_only=True)
    assert not outcome.ok and not (py_repo / "x").exists()


@needs_bwrap
def test_a_rule_the_person_marked_read_only_runs_read_only(py_repo: Path, tmp_path: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[[rules]]\ntool = "Bash"\nmatch = "touch *"\ndecision = "allow"\nread_only = true\n')
    replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Bash", command="touch made.txt")), turn("", answer="done")])
    trajectory = tmp_path / "t.json"
    assert main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--trajectory", str(trajectory)]) == 0
    data = json.loads(trajectory.read_text())
    (approval,) = [a for step in data["steps"] for a in step["approvals"]]
    assert (approval["decision"], approval["rule"]) == ("allow", "Bash: touch *") and "read-only" in approval["reason"]
    assert "Read-only file system" in next(m["content"] for m in data["messages"] if m["role"] == "tool")
    assert not (py_repo / "made.txt").exists()


@pytest.mark.parametrize("rule", [
    '[[rules]]\ntool = "Bash"\nmatch = "x *"\ndecision = "ask"\nread_only = true\n',
    '[[rules]]\ntool = "Read"\nmatch = "x"\ndecision = "allow"\nread_only = true\n',
    '[[rules]]\ntool = "Bash"\nmatch = "x *"\ndecision = "allow"\nread_only = "yes"\n',
])
def test_read_only_is_only_for_a_bash_allow_rule(rule: str) -> None:
    from frogtui.approval import parse_rules
    from frogtui.errors import ConfigError

    with pytest.raises(ConfigError, match="read_only"):
        parse_rules(rule, "rules.toml")
