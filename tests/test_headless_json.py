"""``frogtui run`` for scripts and CI (docs/HEADLESS.md): ``--output json|stream-json`` on stdout
and nothing else there, the session's id and folder said at the start and in the summary (with
tokens and wall time), a failed command's last lines in the trace, ``frogtui sessions``, and
headless follow-ups with ``--resume ID`` / ``--continue``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.cli import main
from frogtui.config import config_dir
from frogtui.session import Session
from tests.support import git, turn, write_replay, xml_call

FIX = xml_call("Edit", file_path="calc.py", old_string="return a - b", new_string="return a + b")
TURNS = [
    turn("Look.", xml_call("Read", file_path="calc.py")),
    turn("Search.", xml_call("Bash", command="grep -n multiply calc.py")),
    turn("Fix.", FIX),
    turn("Done.", answer="Fixed add()."),
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["run", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_stream_json_is_one_object_per_event_and_nothing_else_on_stdout(py_repo: Path, tmp_path: Path) -> None:
    replay = write_replay(tmp_path / "r.jsonl", [*TURNS[:3], turn("", xml_call("Frob", x="1")), TURNS[3]])
    proc = subprocess.run([sys.executable, "-m", "frogtui", "run", "fix it", "--repo", str(py_repo), "--model", f"replay:{replay}",
                           "--output", "stream-json"], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    objects = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is one JSON object
    assert proc.stdout.endswith("\n") and all(o["version"] == 1 for o in objects)
    kinds = [o["type"] for o in objects]
    assert kinds[0] == "start" and kinds[-1] == "result" and kinds.count("result") == 1
    assert kinds[1:6] == ["step", "usage", "assistant", "tool_call", "observation"]
    start, result = objects[0], objects[-1]
    session = Session.latest(py_repo)
    assert session is not None and start["session_id"] == result["session_id"] == session.id
    assert start["session_folder"] == result["session_folder"] == str(session.folder) and start["task"] == "fix it"
    calls = [(o["tool"], o["decision"], o["by"]) for o in objects if o["type"] == "tool_call"]
    assert calls == [("Read", "allow", "rule"), ("Bash", "allow", "rule"), ("Edit", "deny", "mode"), ("Frob", "invalid", None)]
    assert [o["rule"] for o in objects if o["type"] == "tool_call"][2] == "Edit: ask (default)"
    outcomes = [(o["tool"], o["outcome"], o["exit_code"]) for o in objects if o["type"] == "observation"]
    assert outcomes == [("Read", "ok", None), ("Bash", "exit", 1), ("Edit", "denied", None), ("Frob", "not_run", None)]
    assert sum(o["generated_tokens"] for o in objects if o["type"] == "usage") == result["tokens"]["generated"] > 0
    assert [o["text"] for o in objects if o["type"] == "assistant"][-1] == "Fixed add()."
    assert result["exit_reason"] == "agent" and result["status"] == 0 and result["final_message"] == "Fixed add()."
    assert result["calls"] == {"total": 4, "allowed": 2, "denied": 1, "invalid": 1, "denied_by": {"mode": 1}}
    assert "Fixed add()." not in proc.stdout.replace(json.dumps("Fixed add()."), ""), "the answer only inside the JSON"
    assert "[1] allow Read" in proc.stderr, "the trace stays on stderr"
    # docs/HEADLESS.md documents every type and field written
    doc = (Path(__file__).resolve().parent.parent / "docs" / "HEADLESS.md").read_text()
    for o in objects:
        row = next(line for line in doc.splitlines() if line.startswith(f"| `{o['type']}` |"))
        where = doc if o["type"] == "result" else row
        missing = [key for key in o if key not in ("type", "version") and f"`{key}`" not in where]
        assert missing == [], (o["type"], missing)


def test_json_is_one_object_at_the_end_with_what_the_run_did(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = write_replay(tmp_path / "r.jsonl", TURNS)
    code, out, err = run(capsys, "fix it", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all", "--output", "json")
    assert code == 0, err
    (result,) = [json.loads(line) for line in out.splitlines()]
    session = Session.latest(py_repo)
    assert session is not None
    assert {k: result[k] for k in ("type", "version", "exit_reason", "status", "final_message", "error", "session_id", "steps")} == {
        "type": "result", "version": 1, "exit_reason": "agent", "status": 0, "final_message": "Fixed add().", "error": None,
        "session_id": session.id, "steps": 4}
    assert Path(result["session_folder"]) == session.folder and session.folder.is_dir()
    assert result["calls"] == {"total": 3, "allowed": 3, "denied": 0, "invalid": 0, "denied_by": {}}
    assert result["files_changed"] == ["calc.py"] and "return a + b" in (py_repo / "calc.py").read_text()
    assert result["tokens"]["evaluated"] > 0 and result["tokens"]["generated"] > 0 and 0 <= result["seconds"] < 60
    # a run that cannot start still ends with one object (and its one line on stderr)
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text("[tools\n")
    code, out, err = run(capsys, "x", "--repo", str(py_repo), "--model", f"replay:{replay}", "--output", "json")
    (failed,) = [json.loads(line) for line in out.splitlines()]
    assert (code, failed["exit_reason"], failed["status"]) == (2, "error", 2) and "rules.toml: not valid TOML" in failed["error"]
    assert len(err.splitlines()) == 1 and "rules.toml: not valid TOML" in err


def test_the_trace_says_the_session_at_the_start_and_the_summary_adds_tokens_time_and_the_folder(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noisy = "for i in $(seq 1 30); do echo line $i; done; echo 'AssertionError: 3 != 4' >&2; exit 3"
    replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Bash", command=noisy)), turn("", answer="It fails.")])
    code, out, err = run(capsys, "why?", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all")
    assert code == 0 and out == "It fails.\n", err
    session = Session.latest(py_repo)
    assert session is not None
    lines = err.splitlines()
    said = lines.index(f"frogtui: session {session.id} in {session.folder}")
    assert said < next(i for i, line in enumerate(lines) if line.startswith("[1] ")), "before the first step"
    summary = lines[-1]
    assert summary.startswith("frogtui: agent · 2 steps · 1 call: 1 allowed, 0 denied · 0 files changed · tokens ")
    assert " evaluated, " in summary and summary.endswith(f"s · session {session.folder}")
    # the failed command's last lines, bounded, under its line
    at = next(i for i, line in enumerate(lines) if line.startswith("[1] Bash ") and "exit=3" in line)
    tail = lines[at + 1: at + 10]
    assert tail[0] == "    … 23 earlier lines in the trajectory"
    assert tail[1:] == [*(f"    line {i}" for i in range(24, 31)), "    AssertionError: 3 != 4"], err
    assert lines[at + 10].startswith("exit_reason=") or not lines[at + 10].startswith("    ")


def test_a_succeeding_command_shows_no_tail(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = write_replay(tmp_path / "r.jsonl", [turn("", xml_call("Bash", command="seq 1 30")), turn("", answer="ok")])
    code, _, err = run(capsys, "count", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all")
    assert code == 0 and not any(line.startswith("    ") for line in err.splitlines()), err


def test_follow_ups_headless_in_the_same_session(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_replay(tmp_path / "first.jsonl", [turn("", xml_call("Read", file_path="calc.py")), turn("", answer="It subtracts.")])
    code, out, err = run(capsys, "what does add do?", "--repo", str(py_repo), "--model", f"replay:{first}")
    assert code == 0 and out == "It subtracts.\n", err
    session = Session.latest(py_repo)
    assert session is not None
    second = write_replay(tmp_path / "second.jsonl", [turn("", FIX), turn("", answer="Now it adds.")])
    code, out, err = run(capsys, "make it add", "--resume", session.id, "--model", f"replay:{second}", "--approve", "all")
    assert code == 0 and out == "Now it adds.\n", err
    assert f"frogtui: session {session.id} in {session.folder} (resumed)\n" in err
    conversation = session.load_trajectory()
    assert conversation is not None and conversation.user_messages() == ["what does add do?", "make it add"]
    assert [s.step for s in conversation.steps] == [1, 2, 3, 4], "step numbers go on"
    assert "[3] Edit calc.py" in err and git(py_repo, "diff").count("+    return a + b") == 1
    # --continue: the latest session of this repository, from inside it
    third = write_replay(tmp_path / "third.jsonl", [turn("", answer="Still adds.")])
    monkeypatch.chdir(py_repo)
    code, out, err = run(capsys, "still?", "--continue", "--model", f"replay:{third}", "--output", "json")
    assert code == 0, err
    assert json.loads(out)["session_id"] == session.id and len(list(Session.newest_first(py_repo))) == 1
    assert session.load_trajectory().user_messages() == ["what does add do?", "make it add", "still?"]


def test_follow_ups_that_cannot_be_are_one_line_and_exit_2(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    replay = write_replay(tmp_path / "r.jsonl", [turn("", answer="ok")])
    code, out, err = run(capsys, "more", "--continue", "--repo", str(py_repo), "--model", f"replay:{replay}")
    assert (code, out) == (2, "") and err == f"frogtui: no saved session for {py_repo}; start one without --continue\n"
    code, out, err = run(capsys, "more", "--resume", "20990101-000000-abcdef", "--model", f"replay:{replay}")
    assert (code, out) == (2, "") and err.startswith("frogtui: no saved session '20990101-000000-abcdef'")
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = Session.create(other, f"replay:{replay}")
    elsewhere.save_trajectory({"messages": [{"role": "user", "content": "hi"}], "steps": []})
    code, out, err = run(capsys, "more", "--resume", elsewhere.id, "--repo", str(py_repo), "--model", f"replay:{replay}")
    assert (code, out, err) == (2, "", f"frogtui: session {elsewhere.id} belongs to {other}, not {py_repo}\n")
    empty = Session.create(py_repo, f"replay:{replay}")  # an app opened and closed: nothing sent
    code, out, err = run(capsys, "more", "--resume", empty.id, "--model", f"replay:{replay}")
    assert (code, out) == (2, "") and "holds no conversation" in err
    with pytest.raises(SystemExit) as exited:
        main(["run", "more", "--resume", empty.id, "--continue"])
    assert exited.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    code, out, err = run(capsys, "more", "--continue", "--attempts", "2", "--repo", str(py_repo), "--model", f"replay:{replay}")
    assert code == 2 and "--continue cannot go with --attempts" in err


def test_sessions_lists_them_newest_first(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions"]) == 0 and capsys.readouterr().out == "no saved sessions\n"
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    one = write_replay(tmp_path / "one.jsonl", [turn("", FIX), turn("", answer="fixed")])
    two = write_replay(tmp_path / "two.jsonl", [turn("", answer="hello")])
    assert run(capsys, "fix add\nplease", "--repo", str(py_repo), "--model", f"replay:{one}", "--approve", "all")[0] == 0
    assert run(capsys, "say hello", "--repo", str(other), "--model", f"replay:{two}", "--max-steps", "1")[0] == 0
    Session.create(py_repo, "")  # nothing sent: not listed
    assert main(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["repository"], r["task"], r["steps"], r["exit_reason"], r["files_changed"]) for r in rows] == [
        (str(other), "say hello", 1, "agent", []), (str(py_repo), "fix add\nplease", 2, "agent", ["calc.py"])]
    assert set(rows[0]) == {"id", "created", "repository", "folder", "task", "steps", "conversations", "exit_reason", "files_changed"}
    assert main(["sessions", "--repo", str(py_repo)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split() == ["ID", "STARTED", "STEPS", "FILES", "END", "REPOSITORY", "TASK"]
    assert row.startswith(rows[1]["id"]) and row.endswith(f"{py_repo}  fix add please") and " agent " in row
    assert main(["sessions", "--repo", str(tmp_path / "nope")]) == 2
    assert "repository folder not found" in capsys.readouterr().err
