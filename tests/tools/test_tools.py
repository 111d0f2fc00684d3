"""The five Leaf tools: observation strings, confinement, odd files, atomic writes."""
from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner, Workspace, convert_arguments
from frogtui.tools.bash import effective_timeout, run_bash
from frogtui.tools.files import StaleFileError, apply_preview


def run(ws: Workspace, name: str, **arguments: object) -> str:
    converted, invalid = convert_arguments(name, dict(arguments))
    if invalid:
        return invalid
    return ToolRunner(ws).run(ToolCall(id="c1", name=name, arguments=converted)).observation


# Read ----------------------------------------------------------------------------------
def test_read_numbers_lines_with_display_path(ws: Workspace) -> None:
    (ws.root / "src").mkdir()
    (ws.root / "src" / "a.py").write_text("one\ntwo\nthree\n")
    assert run(ws, "Read", file_path="src/a.py") == "src/a.py\n1. one\n2. two\n3. three"
    assert run(ws, "Read", file_path="src/a.py", offset=2, limit=1) == "src/a.py\n2. two"
    assert run(ws, "Read", file_path="src/a.py", offset=2, limit=0) == "src/a.py\n2. two\n3. three"


def test_read_absolute_path_inside_root_is_shown_relative(ws: Workspace) -> None:
    (ws.root / "a.txt").write_text("x\n")
    assert run(ws, "Read", file_path=str(ws.root / "a.txt")) == "a.txt\n1. x"


def test_read_truncates_long_output_with_leaf_suffix(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("".join(f"line {i} " + "x" * 90 + "\n" for i in range(400)))
    out = run(ws, "Read", file_path="big.txt")
    head, _, tail = out.rpartition("\n[truncated ")
    assert len(head) == 20_000
    full = "big.txt\n" + "\n".join(f"{i + 1}. line {i} " + "x" * 90 for i in range(400))
    assert tail == f"{len(full) - 20_000} chars]"


def test_read_missing_file_is_an_observation(ws: Workspace) -> None:
    out = run(ws, "Read", file_path="nope.py")
    assert out.startswith("FileNotFoundError: [Errno 2] No such file or directory:")


def test_read_binary_file_gives_clear_observation(ws: Workspace) -> None:
    (ws.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    out = run(ws, "Read", file_path="img.png")
    assert out.startswith("NotTextError: img.png is a binary file (")


def test_read_non_utf8_file_gives_clear_observation(ws: Workspace) -> None:
    (ws.root / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    out = run(ws, "Read", file_path="latin.txt")
    assert out == (
        "NotTextError: latin.txt is not UTF-8 text (invalid byte 0xe9 at offset 3); "
        "inspect it with Bash (e.g. file, iconv) instead"
    )


def test_read_crlf_file_shows_clean_lines(ws: Workspace) -> None:
    (ws.root / "w.txt").write_bytes(b"a\r\nb\r\n")
    assert run(ws, "Read", file_path="w.txt") == "w.txt\n1. a\n2. b"


def test_read_directory_is_an_error(ws: Workspace) -> None:
    (ws.root / "d").mkdir()
    assert run(ws, "Read", file_path="d").startswith("IsADirectoryError:")


# Write ---------------------------------------------------------------------------------
def test_write_creates_parents_and_reports_length(ws: Workspace) -> None:
    content = "héllo\n"
    assert run(ws, "Write", file_path="new/dir/f.txt", content=content) == f"Wrote new/dir/f.txt ({len(content)} bytes)."
    assert (ws.root / "new/dir/f.txt").read_text(encoding="utf-8") == content
    assert not [p for p in (ws.root / "new/dir").iterdir() if p.name != "f.txt"], "temp files left behind"


def test_write_keeps_mode_and_crlf(ws: Workspace) -> None:
    script = ws.root / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    script.chmod(0o755)
    run(ws, "Write", file_path="run.sh", content="#!/bin/sh\necho bye\n")
    assert script.read_bytes() == b"#!/bin/sh\r\necho bye\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


@pytest.mark.parametrize(
    "target",
    ["../escape.txt", "sub/../../escape.txt", "/tmp/frogtui-escape-test.txt", "~/frogtui-escape-test.txt"],
)
def test_write_outside_root_is_refused(ws: Workspace, target: str) -> None:
    out = run(ws, "Write", file_path=target, content="x")
    assert out.startswith("OutsideRootError: refusing to write ")
    resolved = Path(os.path.expanduser(target)) if not target.startswith(("..", "sub")) else ws.root.parent / "escape.txt"
    assert not resolved.exists()


def test_write_through_symlink_pointing_out_is_refused(ws: Workspace, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws.root / "link").symlink_to(outside)
    (ws.root / "flink").symlink_to(outside / "target.txt")
    assert run(ws, "Write", file_path="link/x.txt", content="x").startswith("OutsideRootError")
    assert run(ws, "Write", file_path="flink", content="x").startswith("OutsideRootError")
    assert run(ws, "Edit", file_path="link/x.txt", old_string="a", new_string="b").startswith("OutsideRootError")
    assert list(outside.iterdir()) == []


def test_write_through_symlink_inside_root_keeps_the_link(ws: Workspace) -> None:
    (ws.root / "real.txt").write_text("old\n")
    (ws.root / "alias.txt").symlink_to("real.txt")
    run(ws, "Write", file_path="alias.txt", content="new\n")
    assert (ws.root / "alias.txt").is_symlink()
    assert (ws.root / "real.txt").read_text() == "new\n"


def test_write_to_private_tmp_is_allowed(ws: Workspace) -> None:
    target = ws.tmp_dir / "scratch.txt"
    assert run(ws, "Write", file_path=str(target), content="ok") == f"Wrote {target} (2 bytes)."


# Edit ----------------------------------------------------------------------------------
def test_edit_observations(ws: Workspace) -> None:
    f = ws.root / "m.py"
    f.write_text("a = 1\nb = 1\n")
    assert run(ws, "Edit", file_path="m.py", old_string="c = 1", new_string="x") == "ValueError: old_string was not found"
    assert run(ws, "Edit", file_path="m.py", old_string=" = 1", new_string=" = 2") == (
        "ValueError: old_string matched 2 times; set replace_all=true or use a more specific old_string"
    )
    assert f.read_text() == "a = 1\nb = 1\n"
    assert run(ws, "Edit", file_path="m.py", old_string=" = 1", new_string=" = 2", replace_all=True) == "Edited m.py (2 replacements)."
    assert run(ws, "Edit", file_path="m.py", old_string="a = 2", new_string="a = 3") == "Edited m.py (1 replacement)."
    assert f.read_text() == "a = 3\nb = 2\n"
    assert run(ws, "Edit", file_path="m.py", old_string="", new_string="x") == "ValueError: old_string must not be empty"


def test_edit_keeps_crlf_and_mode(ws: Workspace) -> None:
    f = ws.root / "w.bat"
    f.write_bytes(b"@echo off\r\necho one\r\necho two\r\n")
    f.chmod(0o750)
    out = run(ws, "Edit", file_path="w.bat", old_string="echo one\necho two", new_string="echo 1\necho 2\necho 3")
    assert out == "Edited w.bat (1 replacement)."
    assert f.read_bytes() == b"@echo off\r\necho 1\r\necho 2\r\necho 3\r\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o750


def test_edit_refuses_binary_and_missing(ws: Workspace) -> None:
    (ws.root / "b.bin").write_bytes(b"\0\1\2abc")
    assert run(ws, "Edit", file_path="b.bin", old_string="abc", new_string="x").startswith("NotTextError: b.bin is a binary file")
    assert (ws.root / "b.bin").read_bytes() == b"\0\1\2abc"
    assert run(ws, "Edit", file_path="missing.py", old_string="a", new_string="b").startswith("FileNotFoundError:")


def test_stale_preview_is_not_written(ws: Workspace) -> None:
    f = ws.root / "s.txt"
    f.write_text("one\n")
    runner = ToolRunner(ws)
    preview = runner.preview(ToolCall("c", "Edit", {"file_path": "s.txt", "old_string": "one", "new_string": "two"}))
    f.write_text("changed meanwhile\n")
    with pytest.raises(StaleFileError):
        apply_preview(ws, preview)
    assert f.read_text() == "changed meanwhile\n"


# Glob ----------------------------------------------------------------------------------
def test_glob_sorted_files_only_and_no_match(ws: Workspace) -> None:
    for name in ["b.py", "a.py", "pkg/c.py", "pkg/d.txt"]:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text("")
    (ws.root / "dir.py").mkdir()
    assert run(ws, "Glob", pattern="**/*.py") == "a.py\nb.py\npkg/c.py"
    assert run(ws, "Glob", pattern="*.py", path="pkg") == "pkg/c.py"
    assert run(ws, "Glob", pattern="*.rs") == "No files matched."
    assert run(ws, "Glob", pattern="*", path="nowhere") == "FileNotFoundError: [Errno 2] No such file or directory: 'nowhere'"
    assert run(ws, "Glob", pattern="*", path="a.py") == "NotADirectoryError: [Errno 20] Not a directory: 'a.py'"


def test_glob_caps_at_1000(ws: Workspace) -> None:
    for i in range(1005):
        (ws.root / f"f{i:04d}.txt").write_text("")
    lines = run(ws, "Glob", pattern="*.txt").splitlines()
    assert len(lines) == 1001 and lines[0] == "f0000.txt" and lines[-1] == "... 5 more files"


# Bash ----------------------------------------------------------------------------------
def test_bash_observation_shape(ws: Workspace) -> None:
    out = run(ws, "Bash", command="echo out; echo err >&2; exit 3")
    assert out == "Exit code: 3\nSTDOUT:\nout\n\nSTDERR:\nerr\n"


def test_bash_runs_in_root_with_stdin_closed(ws: Workspace) -> None:
    out = run(ws, "Bash", command="pwd; cat; echo done")
    assert out.startswith(f"Exit code: 0\nSTDOUT:\n{ws.root}\ndone\n")


def test_bash_timeout_kills_sleeping_child(ws: Workspace) -> None:
    marker = ws.root / "child.pid"
    started = time.monotonic()
    out = run(ws, "Bash", command=f"(sleep 60 & echo $! > {marker}; wait); echo never", timeout=1)
    assert time.monotonic() - started < 10
    assert out.startswith("Timed out after 1.0s\nSTDOUT:\n")
    pid = int(marker.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid), "the sleeping child survived the timeout"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_bash_cancel_stops_at_once(ws: Workspace) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = run_bash("sleep 30", str(ws.root), cancel=cancel)
    assert time.monotonic() - started < 5
    assert result.cancelled and result.exit_code is None
    assert result.observation.startswith("Interrupted by the user")


def test_bash_output_is_truncated_keeping_head_and_tail(ws: Workspace) -> None:
    out = run(ws, "Bash", command="printf HEAD; head -c 40000 /dev/zero | tr '\\0' x; printf TAIL")
    head, _marker, tail = out.partition("\n[truncated ")
    assert head.startswith("Exit code: 0\nSTDOUT:\nHEADxxx") and tail.endswith("xxxTAIL\nSTDERR:\n")
    dropped = int(tail.split(" bytes]\n")[0])
    assert len(head) + len(tail.split(" bytes]\n")[1]) < 30_000
    assert dropped + head.split("STDOUT:\n")[1].count("x") + tail.count("x") + len("HEADTAIL") == 40_008


def test_timeout_over_1000_is_milliseconds() -> None:
    assert effective_timeout(None) == 120.0
    assert effective_timeout(5) == 5.0
    assert effective_timeout(1500) == 1.5


# invalid calls ---------------------------------------------------------------------------
def test_unknown_tool_and_bad_arguments(ws: Workspace) -> None:
    assert run(ws, "Delete", file_path="x") == "Unknown tool: Delete"
    assert run(ws, "Read") == "TypeError: Read() missing 1 required argument: 'file_path'"
    assert run(ws, "Read", file_path="a", colour="red") == "TypeError: Read() got an unexpected keyword argument 'colour'"
    assert run(ws, "Read", file_path="a", offset="ten") == "ValueError: parameter 'offset' of Read expects an integer, got 'ten'"


def test_bash_output_is_passed_on_as_it_arrives(ws: Workspace) -> None:
    pieces: list[tuple[float, str]] = []
    started = time.monotonic()
    result = run_bash(
        "printf 'first \\342\\234'; sleep 0.5; printf '\\223 done\\n'; echo oops >&2",
        str(ws.root),
        on_output=lambda text: pieces.append((time.monotonic() - started, text)),
    )
    streamed = "".join(text for _, text in pieces)
    assert "first ✓ done\n" in streamed and streamed.endswith("oops\n")  # the split ✓ is decoded whole
    first = next(t for t, text in pieces if "first" in text)
    assert first < pieces[-1][0] - 0.3  # passed on before the command ended
    assert result.observation.startswith("Exit code: 0\nSTDOUT:\nfirst ✓ done\n\nSTDERR:\n") and result.observation.endswith("oops\n")


def test_bash_environment_points_at_the_repository(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYENV_DIR", "/somewhere/the/sandbox/hides")
    monkeypatch.setenv("OLDPWD", "/elsewhere")
    out = run(ws, "Bash", command='echo "$PWD|$TMPDIR|${PYENV_DIR-unset}|${OLDPWD-unset}"')
    assert out.startswith(f"Exit code: 0\nSTDOUT:\n{ws.root}|{ws.tmp_dir}|unset|")


def test_glob_never_lists_git_internals(ws: Workspace) -> None:
    (ws.root / ".git" / "objects").mkdir(parents=True)
    (ws.root / ".git" / "config").write_text("")
    (ws.root / "a.txt").write_text("")
    assert run(ws, "Glob", pattern="**/*", path=".") == "a.txt"
    assert run(ws, "Glob", pattern=".git/*") == "No files matched."


def test_bash_never_sees_credentials(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = {
        "GITHUB_TOKEN": "ghp_x", "AWS_SECRET_ACCESS_KEY": "a", "OPENAI_API_KEY": "o", "HF_TOKEN": "h",
        "MY_SERVICE_PASSWORD": "p", "SSH_AUTH_SOCK": "/tmp/agent.sock", "NPM_CONFIG_TOKEN": "n",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("EDITOR", "vi")
    out = run(ws, "Bash", command="env")
    for name in secrets:
        assert f"{name}=" not in out, name
    assert "EDITOR=vi" in out and f"TMPDIR={ws.tmp_dir}" in out


@pytest.mark.parametrize("path", ["sub/.git", "nest/.git/config", "nest/.GIT/config", "deep/er/.git/hooks/pre-commit"])
def test_write_never_creates_git_files_anywhere(tmp_path: Path, path: str) -> None:
    """Red team (rt9): the sandbox keeps ``.git`` and submodules' ``.git`` read-only, but Write runs
    outside it: ``sub/.git`` (``gitdir: ../evil``) or ``nest/.git/config`` with a ``core.fsmonitor``
    ran at the person's next ``git status`` (in ``nest/``, or recursing into the submodule)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "sub").mkdir()
    ws = Workspace(root, tmp_dir=tmp_path / "tmp")
    runner = ToolRunner(ws)
    out = runner.run(ToolCall("c", "Write", {"file_path": path, "content": "[core]\n\tfsmonitor = touch PWNED\n"})).observation
    assert out.startswith("PermissionError: refusing to write") and "git's own files" in out, out
    assert not (root / path).exists() and not (root / path.lower()).exists()
