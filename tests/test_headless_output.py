"""What ``frogtui run`` writes to the terminal: nothing the model or a command wrote reaches it as a
control sequence (issue 23, build item 8), a progress line while the model works (issue 24, build
item 5), and SIGTERM / SIGHUP end a run as Ctrl+C does (issue 24, build item 2)."""
from __future__ import annotations

import fcntl
import io
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from frogtui.config import load_config
from frogtui.headless import run_task
from frogtui.models.replay import ReplayModel
from frogtui.run_progress import ProgressLine
from tests.support import turn, write_replay, xml_call

CONTROLS = ["\x1b]52;c;cHduZWQ=\x07", "\x1b[2J", "\x9b1m", "\x9d52;c;eA==\x9c", "\x1bP+q\x1b\\", "\x90x\x9c", "\r", "\x08"]
"""OSC 52 (write the clipboard), CSI (clear the screen), 8-bit CSI, 8-bit OSC with 8-bit ST, DCS,
8-bit DCS, a carriage return and a backspace (overwrite what was printed)."""


def frogtui_run(repo: Path, replay: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "frogtui", "run", "go", "--repo", str(repo), "--model", f"replay:{replay}", *args],
        capture_output=True, text=True, timeout=120,
    )


def test_control_sequences_from_the_model_and_commands_are_not_written(py_repo: Path, tmp_path: Path) -> None:
    hostile = "".join(CONTROLS)
    command = "printf 'out \\033]52;c;cHduZWQ=\\007 \\233 \\302\\235 done'"
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Bash", command=command)),
        turn("", xml_call("Read", file_path=f"x{hostile}.py")),
        turn("", answer=f"The answer {hostile} here.\n\tsecond line"),
    ])
    proc = frogtui_run(py_repo, replay, "--approve", "all")
    assert proc.returncode == 0, proc.stderr
    for stream in (proc.stdout, proc.stderr):
        assert not any(ch in stream for ch in "\x1b\x07\x08\r\x9b\x9d\x90\x9c"), repr(stream)
    assert proc.stdout.startswith("The answer ") and proc.stdout.endswith(" here.\n\tsecond line\n"), "lines and tabs stay"
    assert "Bash" in proc.stderr and "exit=0" in proc.stderr


def _session_folders() -> list[Path]:
    root = Path(os.environ["XDG_STATE_HOME"]) / "frogtui" / "sessions"
    return sorted(root.iterdir()) if root.is_dir() else []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_a_run_as_ctrl_c_does(py_repo: Path, tmp_path: Path, signum: int) -> None:
    replay = write_replay(tmp_path / "s.jsonl", [turn("", xml_call("Bash", command="sleep 60")), turn("", answer="x")])
    out = tmp_path / "t.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all",
         "--trajectory", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    log = lambda: "".join(p.joinpath("session.log").read_text() for p in _session_folders() if p.joinpath("session.log").exists())  # noqa: E731
    while time.monotonic() < deadline and "tool=Bash decision=allow" not in log():
        time.sleep(0.1)
    time.sleep(0.3)
    started = time.monotonic()
    proc.send_signal(signum)
    stdout, err = proc.communicate(timeout=30)
    assert time.monotonic() - started < 10, "the sleep is stopped, not waited for"
    assert proc.returncode == 1, err  # as for Ctrl+C: the run ended, not with ``agent``
    name = signal.Signals(signum).name
    assert [line for line in err.splitlines() if name in line] == [f"frogtui: {name}: interrupting the run (a second signal stops at once)"]
    assert "Traceback" not in err and "exit_reason=cancelled" in err and stdout == ""
    data = json.loads(out.read_text())
    assert data["exit_reason"] == "cancelled"
    told = f"Interrupted: frogtui was stopped by {name} (not by the user)"  # the model is not told the user did it
    assert data["steps"][0]["observations"][0]["observation"].startswith(told)
    assert [m["content"] for m in data["messages"] if m["role"] == "tool"][0].startswith(told)
    (session,) = _session_folders()
    assert json.loads((session / "trajectory.json").read_text())["exit_reason"] == "cancelled"
    recorded = [json.loads(line)["content"] for line in (session / "replay.jsonl").read_text().splitlines()]
    assert recorded[0] == turn("", xml_call("Bash", command="sleep 60"))


class TimedStream(io.StringIO):
    """A stderr that notes when each line was written."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[tuple[float, str]] = []

    def write(self, text: str) -> int:
        self.times.append((time.monotonic(), text))
        return super().write(text)


def test_a_progress_line_on_stderr_at_most_once_a_second_while_the_model_works(py_repo: Path, tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(150))  # 300 pieces (words and spaces)
    replay = write_replay(tmp_path / "slow.jsonl", [turn(words, xml_call("Read", file_path="calc.py")), turn("", answer="Done.")])
    model = ReplayModel(replay, piece_delay=0.01)  # about 3 s for the first turn: the model is slow
    err, out = TimedStream(), io.StringIO()
    started = time.monotonic()
    code = run_task("go", load_config(repo=py_repo, approve="all"), model, stderr=err, stdout=out)
    elapsed = time.monotonic() - started
    assert code == 0, err.getvalue()
    assert out.getvalue() == "Done.\n", "stdout holds only the final message"
    progress = [(at, text) for at, text in err.times if re.match(r"frogtui: step \d+: ", text)]
    assert progress, err.getvalue()
    assert len(progress) <= elapsed + 1
    for (a, _), (b, _) in zip(progress, progress[1:], strict=False):
        assert b - a >= 0.9, "at most once a second (the fake clock test pins it exactly)"
    for _, text in progress:
        assert re.fullmatch(r"frogtui: step 1: (reading the prompt|[\d,]+ tokens so far(, [\d.]+ tok/s)?) \(\d+s\)(: .+)?\n", text), text
    assert any("tokens so far" in text and "tok/s" in text for _, text in progress), progress
    assert err.getvalue().index("frogtui: step 1:") < err.getvalue().index("[1] Read calc.py")


def test_the_progress_line_counts_tokens_and_their_rate_by_the_clock() -> None:
    now = [100.0]
    lines: list[str] = []
    progress = ProgressLine(lines.append, clock=lambda: now[0])
    progress.tick()
    assert lines == [], "no turn, no line"
    progress.turn_started(3)
    now[0] = 100.5
    progress.tick()
    assert lines == [], "a turn shorter than a second prints nothing"
    now[0] = 101.0
    progress.tick()
    assert lines == ["frogtui: step 3: reading the prompt (1s)"]
    for i in range(21):  # 21 tokens from 102 s to 104 s: 20 in the 2 s after the first
        now[0] = 102.0 + i / 10
        progress.token()
    now[0] = 104.0
    progress.tick()
    progress.tick()
    assert lines[1:] == ["frogtui: step 3: 21 tokens so far, 10.0 tok/s (4s)"], "once, however often it looks"
    progress.token("  the last\n words  written ")
    now[0] = 105.0
    progress.tick()
    assert lines[2] == "frogtui: step 3: 22 tokens so far, 7.0 tok/s (5s): the last words written", "the last words, spaces as one"
    progress.turn_ended()
    now[0] = 110.0
    progress.tick()
    assert len(lines) == 3, "the model is not working: no line"


def test_a_closed_terminal_ends_the_run_cleanly_with_its_records(py_repo: Path, tmp_path: Path) -> None:
    """The terminal goes away (its master side closed: every write to it fails with EIO), then
    SIGHUP comes: the run still ends ``cancelled`` with its trajectory and replay written."""
    replay = write_replay(tmp_path / "s.jsonl", [turn("", xml_call("Bash", command="sleep 60")), turn("", answer="x")])
    out = tmp_path / "t.json"
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all",
         "--trajectory", str(out)],
        stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
    )
    os.close(slave)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("tool=Bash decision=allow" in p.joinpath("session.log").read_text()
                                                  for p in _session_folders() if p.joinpath("session.log").exists()):
        time.sleep(0.1)
    time.sleep(0.3)
    os.close(master)
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(timeout=30) == 1
    assert json.loads(out.read_text())["exit_reason"] == "cancelled"
    (session,) = _session_folders()
    assert json.loads((session / "trajectory.json").read_text())["exit_reason"] == "cancelled"
    assert (session / "replay.jsonl").read_text().strip()


def test_on_a_terminal_the_progress_line_is_rewritten_in_place_with_the_last_words() -> None:
    from frogtui.run_trace import TraceSink
    from frogtui.terminal_text import ControlFreeStream

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 200, 0, 0))
    try:
        terminal = open(slave, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - closed below
        sink = TraceSink(ControlFreeStream(terminal))
        now = [0.0]
        sink.progress.clock = lambda: now[0]
        sink.progress.turn_started(1)
        for i, piece in enumerate(["I will", " repeat\x1b[2J", " myself.\n"] * 20):
            now[0] = 1 + i / 10
            sink.progress.token(piece)
            sink.progress.tick()
        sink.write("[1] Read calc.py")
        terminal.close()
        chunks = b""
        while select.select([master], [], [], 0.2)[0]:
            chunks += os.read(master, 65536)
        written = chunks.decode()
    finally:
        os.close(master)
        os.close(slave)
    lines = written.replace("\r\n", "\n").split("\n")
    assert lines[-1] == "", written
    shown = lines[0].split("\r\x1b[K")
    assert len(shown) >= 4 and shown[0] == "", "each progress line replaces the last, none ends a line"
    assert shown[-1] == "[1] Read calc.py", "the next trace line wipes it first"
    assert re.fullmatch(r"frogtui: step 1: [\d,]+ tokens so far, [\d.]+ tok/s \(\d+s\): ….*repeat\[2J myself\.", shown[-2]), shown[-2]
    assert "\x1b[2J" not in written, "what the model wrote reaches the terminal without its controls"
