"""``frogtui doctor`` says exactly what the sandbox confines, and warns when a piece is missing
(issue 9, build item 8). Real bubblewrap where it works; a fake one that cannot start otherwise.
Each line is marked (✓, ! or ✗), ``--model`` checks another spec (issue 11)."""
from __future__ import annotations

import http.server
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogtui import doctor
from frogtui.approval.sandbox import probe_bwrap
from frogtui.config import config_dir
from tests.support import git, turn, write_replay

BWRAP = shutil.which("bwrap")


@pytest.mark.skipif(BWRAP is None or probe_bwrap(BWRAP) is not None, reason="bubblewrap is not usable here")
def test_doctor_lists_what_the_sandbox_confines(py_repo: Path) -> None:
    lines = doctor._sandbox_lines(py_repo, None)
    assert lines[0].startswith("bubblewrap: /")
    for piece in ("user namespace, no capabilities", ".git read-only", "secret store(s) hidden", "/run and sockets hidden",
                  "allowlisted environment", "network off", "home folder hidden"):
        assert piece in lines[1], piece
    assert lines[2].startswith("sandbox home: hidden: ~"), lines
    assert lines[3] == "read-only default: on; the commands it allows run with everything read-only, an empty temp folder, no network"
    assert lines[4].startswith("proposals: "), lines  # on, or off and why (tests/approval/test_proposals.py)
    assert lines[5:] == []


def test_doctor_warns_when_the_sandbox_is_off(py_repo: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[sandbox]\nbash = "none"\n')
    lines = doctor._sandbox_lines(py_repo, None)
    assert lines[1] == "sandbox: Bash runs without a sandbox"
    assert lines[2] == 'sandbox: WARNING Bash runs without a sandbox: [sandbox] bash = "none" in the rules'
    assert lines[3].startswith('sandbox: WARNING the read-only default is off: Bash has no sandbox ([sandbox] bash = "none" in the rules)')


def test_doctor_marks_the_failing_line_and_takes_model(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.jsonl"
    assert doctor.main(["--repo", str(py_repo), "--model", f"replay:{missing}"]) == 1
    lines = capsys.readouterr().out.splitlines()
    failing = [line for line in lines if line.startswith("✗ ")]
    assert failing == [f"✗ model: replay:{missing} (file not found)"]
    assert all(line[:2] in ("✓ ", "! ", "✗ ") for line in lines[:-1]), lines
    assert lines[-1].startswith("not ready: fix the line marked ✗")
    replay = write_replay(tmp_path / "ok.jsonl", ["hi"])
    assert doctor.main(["--repo", str(py_repo), "--model", f"replay:{replay}"]) == 0
    out = capsys.readouterr().out
    assert f"✓ model: replay:{replay} (found)" in out and "✗" not in out and out.splitlines()[-1] == "ready: frogtui can run here"


@pytest.mark.parametrize("text,says", [('[sandbox]\nnetwrok = true\n', "netwrok"), ("not = [valid toml", "TOML")])
def test_a_project_rules_file_that_is_not_valid_is_ignored_by_a_run_and_doctor_warns(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    """Anything in the repository may have written ``.frogtui.toml`` (the model did): one that is
    not valid never stops a run; doctor marks it ! and says it is ignored."""
    (py_repo / ".frogtui.toml").write_text(text)
    replay = write_replay(tmp_path / "ok.jsonl", [turn("", answer="hi")])
    from frogtui.headless import main as run_main

    assert run_main(["t", "--repo", str(py_repo), "--model", f"replay:{replay}"]) == 0
    capsys.readouterr()
    code, lines = _doctor(["--repo", str(py_repo), "--model", f"replay:{replay}"], capsys)
    assert not [line for line in lines if line.startswith("✗ ")], lines
    (warned,) = [line for line in lines if line.startswith("! repository rules: ")]
    assert says in warned and "ignored" in warned, lines


def _doctor(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = doctor.main(argv)
    return code, capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("where,text,says", [
    ("user", '[[rules]]\ntool = "Bash"\nmatch = "ls *"\ndecision = "maybe"\n', "maybe"),
    ("user", '[sandbox]\nbash = "bwrap"\nnetwrok = true\n', "netwrok"),
])
def test_doctor_marks_a_rules_file_that_stops_a_run(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, text: str, says: str
) -> None:
    """What makes ``frogtui run`` exit 2 is ✗ in doctor and its exit status is 1; the sandbox lines
    stay (with the default settings, said so)."""
    path = config_dir() / "rules.toml" if where == "user" else py_repo / ".frogtui.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    replay = write_replay(tmp_path / "ok.jsonl", [turn("", answer="hi")])
    from frogtui.headless import main as run_main

    assert run_main(["t", "--repo", str(py_repo), "--model", f"replay:{replay}"]) == 2, "a run does not start"
    capsys.readouterr()
    code, lines = _doctor(["--repo", str(py_repo), "--model", f"replay:{replay}"], capsys)
    assert code == 1, lines
    failing = [line for line in lines if line.startswith("✗ ")]
    assert len(failing) == 1 and failing[0].startswith(f"✗ {where} rules: ") and says in failing[0] and str(path) in failing[0], lines
    assert any(line.startswith(("✓ bubblewrap: ", "! bubblewrap: ")) for line in lines), lines
    assert any(line.startswith("! sandbox: ") and "the default settings" in line for line in lines), lines
    assert lines[-1].startswith("not ready: fix the line marked ✗")


def test_doctor_is_ready_with_valid_rules(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[[rules]]\ntool = "Bash"\nmatch = "ls *"\ndecision = "allow"\n')
    replay = write_replay(tmp_path / "ok.jsonl", ["hi"])
    code, lines = _doctor(["--repo", str(py_repo), "--model", f"replay:{replay}"], capsys)
    assert code == 0, lines
    assert f"✓ user rules: {config_dir() / 'rules.toml'} (in force)" in lines
    assert f"✓ repository rules: {py_repo / '.frogtui.toml'} (none)" in lines
    assert any(line[2:].startswith("sandbox: ") for line in lines), lines


class _Server(http.server.BaseHTTPRequestHandler):
    listing: dict = {}
    asked: list[str] = []
    status = 200

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        _Server.asked.append(self.path)
        body = json.dumps(self.listing if self.path == "/v1/models" else {}).encode()
        self.send_response(self.status if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def models_server() -> Iterator[str]:
    """A tiny OpenAI-style server on 127.0.0.1 that answers ``/v1/models`` (no model behind it)."""
    _Server.asked, _Server.status = [], 200
    _Server.listing = {"object": "list", "data": [{"id": "frognano-q4", "object": "model", "max_model_len": 32768}]}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Server)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_doctor_asks_the_model_server(py_repo: Path, capsys: pytest.CaptureFixture[str], models_server: str) -> None:
    code, lines = _doctor(["--repo", str(py_repo), "--model", models_server], capsys)
    assert code == 0, lines
    assert f"✓ model: {models_server} (the server answers: model frognano-q4, context 32,768 tokens)" in lines
    assert "/v1/models" in _Server.asked
    _Server.listing = {"object": "list", "data": []}
    code, lines = _doctor(["--repo", str(py_repo), "--model", models_server], capsys)
    assert code == 1 and any(line.startswith(f"✗ model: {models_server} (") and "lists no model" in line for line in lines), lines


def test_doctor_marks_a_server_that_does_not_answer(py_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = f"http://127.0.0.1:{port}/v1"
    code, lines = _doctor(["--repo", str(py_repo), "--model", spec], capsys)
    assert code == 1
    (failing,) = [line for line in lines if line.startswith("✗ ")]
    assert failing.startswith(f"✗ model: {spec} (cannot reach the model server at {spec}/models"), failing


def test_doctor_marks_a_working_tree_git_cannot_record(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``.gitattributes`` filter that does not work here makes ``frogtui run`` exit 2: ✗ too."""
    replay = write_replay(tmp_path / "ok.jsonl", ["hi"])
    code, lines = _doctor(["--repo", str(py_repo), "--model", f"replay:{replay}"], capsys)
    assert code == 0 and any(line.startswith(f"✓ repository: {py_repo} ") for line in lines), lines
    git(py_repo, "config", "filter.lfs.clean", "git-lfs-not-installed clean -- %f")
    git(py_repo, "config", "filter.lfs.required", "true")
    (py_repo / ".gitattributes").write_text("*.dat filter=lfs\n")
    (py_repo / "big.dat").write_text("data\n")
    code, lines = _doctor(["--repo", str(py_repo), "--model", f"replay:{replay}"], capsys)
    assert code == 1
    (failing,) = [line for line in lines if line.startswith("✗ ")]
    assert failing.startswith("✗ repository: ") and "filter 'lfs'" in failing, lines
    assert git(py_repo, "for-each-ref", "refs/frogtui/") == "", "doctor leaves no ref"


def test_a_servers_error_text_reaches_the_terminal_without_control_characters(
    py_repo: Path, capsys: pytest.CaptureFixture[str], models_server: str
) -> None:
    _Server.status, _Server.listing = 500, {"error": {"message": "no \x1b]52;c;cHduZWQ=\x07 models \x9b2J here"}}
    code, lines = _doctor(["--repo", str(py_repo), "--model", models_server], capsys)
    assert code == 1
    assert any(line.startswith("✗ model: ") and "answered HTTP 500: no ]52;c;cHduZWQ= models 2J here" in line for line in lines), lines
    assert not any(ch in "\n".join(lines) for ch in "\x1b\x07\x9b"), lines


def test_doctor_says_how_the_models_process_is_confined(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from frogtui.models.confinement import Confinement, runner_argv

    replay = write_replay(tmp_path / "ok.jsonl", [turn("", answer="hi")])
    _, lines = _doctor(["--repo", str(py_repo), "--model", f"replay:{replay}"], capsys)
    (said,) = [line for line in lines if "model process:" in line]
    if runner_argv().sandboxed:
        assert said == "✓ model process: under bubblewrap (no network, home folder hidden, the model file read-only)"
    else:
        assert said.startswith("! model process: not sandboxed")
    unconfined = Confinement(["python"], False, "not sandboxed: bubblewrap (bwrap) is not installed (on PATH outside a repository)")
    assert unconfined.describe() == "model process: not sandboxed: bubblewrap (bwrap) is not installed (on PATH outside a repository)"
