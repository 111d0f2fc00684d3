"""Bounded resources against a hostile model (issue 9, finding 6; issue 15 item 1): Bash output
held in bounded memory and returned the moment the command ends, a ceiling on the timeout; Read
never blocks on a FIFO, never reads a device, and reads only what it returns; Glob survives symlink
loops and says when it stopped."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from frogtui.protocol import ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.bash import MAX_TIMEOUT, effective_timeout, run_bash
from frogtui.tools.globwalk import GlobSearch
from frogtui.tools.workspace import Workspace


def run(ws: Workspace, tool: str, **args: object) -> str:
    return ToolRunner(ws).run(ToolCall("c", tool, args)).observation


def test_huge_bash_output_costs_bounded_memory(ws: Workspace) -> None:
    tracemalloc.start()
    try:
        result = run_bash("head -c 200000000 /dev/zero | tr '\\0' y; echo END", str(ws.root))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000, peak
    assert result.exit_code == 0 and "yyyyEND\n" in result.observation and "[truncated " in result.observation
    assert len(result.observation) < 31_000


def test_endless_output_times_out_with_head_and_tail(ws: Workspace) -> None:
    result = run_bash("yes", str(ws.root), timeout=2)
    assert result.timed_out and result.observation.startswith("Timed out after 2.0s\nSTDOUT:\ny\ny\n")
    assert result.observation.endswith("y\n\nSTDERR:\n") and len(result.observation) < 31_000


def test_the_models_timeout_has_a_ceiling() -> None:
    assert effective_timeout(10**12) == MAX_TIMEOUT == 600.0
    assert effective_timeout(3600) == 3.6 and effective_timeout(900) == 600.0


@pytest.mark.timing
def test_bash_returns_when_the_command_ends(ws: Workspace) -> None:
    """No poll loop: ``true`` costs about what ``subprocess.run`` of it costs (the old 50 ms poll
    made every call at least 50 ms)."""
    tool, bare = [], []
    for _ in range(7):
        started = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], check=True)
        bare.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert run_bash("true", str(ws.root)).exit_code == 0
        tool.append(time.perf_counter() - started)
    assert min(tool) < min(bare) + 0.03, (tool, bare)


def test_a_background_child_does_not_hold_the_call(ws: Workspace) -> None:
    started = time.monotonic()
    result = run_bash("sleep 30 & echo started", str(ws.root))
    assert time.monotonic() - started < 5 and result.observation == "Exit code: 0\nSTDOUT:\nstarted\n\nSTDERR:\n"


def test_read_refuses_a_fifo_without_blocking(ws: Workspace) -> None:
    os.mkfifo(ws.root / "pipe")
    started = time.monotonic()
    out = run(ws, "Read", file_path="pipe")
    assert time.monotonic() - started < 2
    assert out == "NotRegularFileError: pipe is not a regular file (a FIFO); only regular files can be read"


def test_read_refuses_a_symlink_to_a_device(ws: Workspace) -> None:
    (ws.root / "zero").symlink_to("/dev/zero")
    expected = "NotRegularFileError: zero is not a regular file (a character device); only regular files can be read"
    assert run(ws, "Read", file_path="zero") == expected


def measured_read(ws: Workspace, name: str) -> tuple[str, int, float]:
    """Read ``name``: the observation, the peak of memory Python allocated meanwhile, the seconds."""
    tracemalloc.start()
    try:
        started = time.monotonic()
        out = run(ws, "Read", file_path=name)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak, time.monotonic() - started


@pytest.mark.slow  # more than 5 s of CPU (issue 29)
@pytest.mark.timing
def test_read_of_a_big_file_reads_only_what_it_returns(ws: Workspace) -> None:
    big = ws.root / "big.txt"
    line = "z" * 99 + "\n"
    with big.open("w") as handle:
        for _ in range(40):
            handle.write(line * 10_000)  # 40 MB
    out, peak, seconds = measured_read(ws, "big.txt")
    assert peak < 4_000_000, peak
    assert seconds < 10
    assert out.startswith("big.txt\n1. zzz") and out.endswith("more bytes]")
    assert out.splitlines()[-1].startswith("[truncated: the file goes on for about ")


def test_read_counts_what_it_cuts_exactly_in_a_medium_file(ws: Workspace) -> None:
    (ws.root / "m.txt").write_text("".join(f"é{i}\r\n" for i in range(20_000)))
    out = run(ws, "Read", file_path="m.txt", offset=3)
    full = "m.txt\n" + "\n".join(f"{i + 1}. é{i}" for i in range(2, 20_000))
    assert out == f"{full[:20_000]}\n[truncated {len(full) - 20_000} chars]"


def test_read_keeps_splitlines_semantics_across_chunks(ws: Workspace) -> None:
    text = "p\n" * 32767 + "q\r\n" + "b\x0cc\u2028d\re\n" + "p\n" * 40000 + "q\r\nlast"  # a CR ends the first 64 KiB chunk
    (ws.root / "s.txt").write_text(text, newline="")
    lines = text.splitlines()
    out = run(ws, "Read", file_path="s.txt", offset=32767, limit=8)
    assert out == "s.txt\n" + "\n".join(f"{n}. {lines[n - 1]}" for n in range(32767, 32775))
    assert run(ws, "Read", file_path="s.txt", offset=72770).splitlines()[-2:] == ["72773. q", "72774. last"]


def test_glob_survives_symlink_loops(ws: Workspace) -> None:
    (ws.root / "pkg").mkdir()
    (ws.root / "pkg" / "m.py").write_text("")
    (ws.root / "pkg" / "loop").symlink_to(".")
    (ws.root / "pkg" / "up").symlink_to("..")
    (ws.root / "self").symlink_to(ws.root)
    started = time.monotonic()
    out = run(ws, "Glob", pattern="**/*.py")
    assert time.monotonic() - started < 5
    assert out.splitlines()[0] == "pkg/m.py" and "stopped" not in out


def test_glob_says_when_it_stopped(ws: Workspace) -> None:
    for i in range(30):
        (ws.root / f"f{i}.txt").write_text("")
    search = GlobSearch(max_results=10)
    assert len(search.files(str(ws.root / "*.txt"))) == 10 and search.stopped == "stopped at 10 matches"
    slow = GlobSearch(time_s=0.0)
    assert slow.files(str(ws.root / "**" / "*.txt")) == [] and slow.stopped == "stopped after 0 s"


def test_write_resolves_its_path_again_when_applied(ws: Workspace, tmp_path: Path) -> None:
    """Issue 9 finding 7: a folder swapped for a symlink between the preview and the write."""
    from frogtui.tools.files import apply_preview

    (ws.root / "sub").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    runner = ToolRunner(ws)
    preview = runner.preview(ToolCall("c", "Write", {"file_path": "sub/f.txt", "content": "x\n"}))
    (ws.root / "sub").rmdir()
    (ws.root / "sub").symlink_to(outside)
    with pytest.raises(PermissionError, match="refusing to write sub/f.txt"):
        apply_preview(ws, preview)
    assert list(outside.iterdir()) == []


GLOB_PATTERNS = ["**", "**/*", "src/**", "**/*.py", "*.py", ".*", "src/*/*", "**/.f", "src/**/c.txt", "s?c/**/*.txt", "**/sub",
                 "[as]*", "src/../*.py", "./src/*.py", "**/**/*.py"]


@pytest.mark.parametrize("pattern", GLOB_PATTERNS)
def test_the_bounded_glob_finds_what_pythons_glob_finds(ws: Workspace, pattern: str) -> None:
    import glob as globlib

    for name in ["a.py", "src/b.py", "src/sub/c.txt", "src/.hid/d.py", ".e.py", "src/sub/.f"]:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text("")
    full = str(ws.root / pattern)
    want = sorted({os.path.normpath(p) for p in globlib.glob(full, recursive=True) if os.path.isfile(p)})
    assert sorted(os.path.normpath(p) for p in GlobSearch().files(full)) == want


# red team (rt9): what the bounds above still let through -------------------------------------
def test_read_of_one_enormous_line_is_linear_and_bounded(ws: Workspace) -> None:
    """A minified bundle or a sparse file is one huge line: Read keeps only what it can return
    (it used to join every 64 KiB chunk onto the whole line so far: 20 MB took 15 s, 200 MB
    minutes, a sparse 100 GB file all memory)."""
    with (ws.root / "bundle.js").open("w") as handle:
        handle.write("first\n" + "x" * 16_000_000 + "\nthird\n")
    out, peak, seconds = measured_read(ws, "bundle.js")
    assert seconds < 5
    assert peak < 4_000_000, peak
    assert out.startswith("bundle.js\n1. first\n2. xxx") and "\n3. third" not in out
    assert out.endswith(f"\n[truncated {len('bundle.js') + 9 + 4 + 16_000_000 + 9 - 20_000} chars]"), out[-80:]


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_write_and_edit_refuse_a_fifo_without_blocking(ws: Workspace, tool: str) -> None:
    """The preview read the old content with ``read_bytes``: a FIFO in the repository (``mkfifo``)
    hung frogtui for good, even when the call was then denied."""
    os.mkfifo(ws.root / "pipe")
    args = {"file_path": "pipe", "content": "x"} if tool == "Write" else {"file_path": "pipe", "old_string": "a", "new_string": "b"}
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", f"from tests.tools.test_bounds import run; from frogtui.tools.workspace import Workspace; "
                         f"print(run(Workspace({str(ws.root)!r}, {str(ws.tmp_dir)!r}), {tool!r}, **{args!r}))"],
        capture_output=True, text=True, timeout=20, check=False, cwd=Path(__file__).resolve().parents[2],
    )
    assert time.monotonic() - started < 15
    assert out.stdout.startswith("NotRegularFileError: pipe is not a regular file (a FIFO)"), out


def test_glob_survives_a_thousand_nested_folders(ws: Workspace) -> None:
    """A deep tree (``mkdir -p d/d/d/…``, or a repository holding one) made Glob raise RecursionError,
    which no tool catches: ``frogtui run`` ended with a traceback."""
    folder = ws.root
    for _ in range(1100):
        folder = folder / "d"
        folder.mkdir()
    (folder / "deep.txt").write_text("")
    (ws.root / "top.txt").write_text("")
    try:
        out = run(ws, "Glob", pattern="**/*.txt")
    finally:  # shutil.rmtree (pytest's clean-up) recurses too
        (folder / "deep.txt").unlink()
        while folder != ws.root:
            folder.rmdir()
            folder = folder.parent
    assert out.splitlines()[0] == "top.txt" and "more than 200 levels deep" in out.splitlines()[-1], out[:300]


def test_read_of_an_endless_line_stops(ws: Workspace) -> None:
    """Text, then a hole of 64 GB (a sparse file: NULs are valid UTF-8 after the first 8 KiB): one
    line that never ends was read to its end, for minutes."""
    big = ws.root / "sparse.txt"
    with big.open("wb") as handle:
        handle.write(b"a" * 70_000)
        handle.truncate(64 << 30)
    started = time.monotonic()
    out = run(ws, "Read", file_path="sparse.txt")
    assert time.monotonic() - started < 10
    assert out.startswith("sparse.txt\n1. aaa") and out.splitlines()[-1].startswith("[truncated: the file goes on for about ")


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_write_and_edit_a_file_whose_name_is_as_long_as_a_name_can_be(ws: Workspace, tool: str) -> None:
    """A 255-byte name is a name the file system takes; the temporary file beside it
    (``.NAME.XXXX.frogtui-tmp``) was longer, so the write failed with ``File name too long``."""
    name = "n" * 251 + ".txt"
    if tool == "Edit":
        (ws.root / name).write_text("old\n")
        out = run(ws, "Edit", file_path=name, old_string="old", new_string="new")
    else:
        out = run(ws, "Write", file_path=name, content="new\n")
    assert (ws.root / name).read_text() == "new\n", out
    assert sorted(p.name for p in ws.root.iterdir()) == [name], "nothing left beside it"
