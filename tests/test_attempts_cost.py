"""Attempts at a bounded cost (issue 30, item 9): each attempt's diff was held whole in memory (a
150 MB file took frogtui to 626 MB). The diff is streamed to the parent session folder as git
writes it, kept up to ``DIFF_CAP`` (the table says the cap, and which attempt went over it), and a
pick of an attempt over the cap is applied from its commit, streamed too."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.attempts.results import AttemptResult, best, group_same, table
from frogtui.config import sessions_dir
from frogtui.vcs.repository import discover
from frogtui.vcs.snapshot import snapshot_tree
from frogtui.vcs.worktrees import DIFF_CAP, SHOWN_CAP, apply_change, base_commit, changed_files, commit_tree, write_diff
from tests.support import git, turn, write_replay, xml_call

PEAK = """
import sys
from frogtui.cli import main
code = main(sys.argv[1:])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("PEAK", int(peak.split()[1]) * 1024, file=sys.stderr)
sys.exit(code)
"""


def run_measured(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """``frogtui ARGS`` in a process of its own: its result and its peak resident memory (bytes)."""
    proc = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, timeout=300, env=os.environ.copy())
    peak = int(next(line.split()[1] for line in proc.stderr.splitlines() if line.startswith("PEAK ")))
    return proc, peak


def attempts_of(repo: Path, tmp_path: Path, size: int, name: str) -> tuple[subprocess.CompletedProcess[str], int]:
    make = f"head -c {size} /dev/zero | tr '\\0' 'a' | fold -w 100 > big.txt"  # text: {size // 101} lines of 100 a's
    replay = write_replay(tmp_path / f"{name}.jsonl", [turn("", xml_call("Bash", command=make)), turn("", answer="wrote it")])
    return run_measured("run", "write a big file", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", "all",
                        "--attempts", "1", "--check", "test -s big.txt", "--pick", "best")


@pytest.mark.slow
def test_a_150_mb_change_costs_frogtui_no_more_memory_than_a_small_one(py_repo: Path, tmp_path: Path) -> None:
    small, small_peak = attempts_of(py_repo, tmp_path, 1000, "small")
    assert small.returncode == 0, small.stderr
    git(py_repo, "checkout", "-q", "--", ".")
    (py_repo / "big.txt").unlink()
    large, large_peak = attempts_of(py_repo, tmp_path, 150_000_000, "large")
    assert large.returncode == 0, large.stderr
    print(f"\npeak memory: small change {small_peak / 2**20:.0f} MiB, 150 MB change {large_peak / 2**20:.0f} MiB")
    assert large_peak < small_peak + 48 * 2**20, (small_peak, large_peak)  # was +450 MiB and more
    assert (py_repo / "big.txt").stat().st_size > 150_000_000  # the pick applied it whole, from the commit
    assert f"each diff kept up to {DIFF_CAP // 2**20:g} MiB" in large.stderr and "diff over the 32 MiB cap: not kept" in large.stderr
    record = max((json.loads(p.read_text()) for p in sessions_dir().glob("*/attempts.json")), key=lambda r: r["results"][0]["diff_bytes"])
    assert record["results"][0]["diff_file"] == "" and record["results"][0]["diff_bytes"] > DIFF_CAP


def test_the_diff_is_streamed_and_kept_up_to_its_cap(py_repo: Path, tmp_path: Path) -> None:
    state = discover(py_repo, "cap")
    assert state is not None
    repo, base = base_commit(py_repo)
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (py_repo / "data.txt").write_text("x" * 5000 + "\n")
    commit = commit_tree(repo, snapshot_tree(repo), base, "attempt")
    whole = subprocess.run(["git", "diff", "--binary", base, commit], cwd=py_repo, capture_output=True).stdout
    kept = tmp_path / "diffs" / "attempt-1.diff"
    assert write_diff(repo, base, commit, kept, cap=len(whole)) == (len(whole), True)
    assert kept.read_bytes() == whole
    over = tmp_path / "diffs" / "attempt-2.diff"
    assert write_diff(repo, base, commit, over, cap=1000) == (1001, False)
    assert not over.exists()
    git(py_repo, "checkout", "-q", "--", "calc.py")
    (py_repo / "data.txt").unlink()
    apply_change(repo, commit, None)  # no kept diff: streamed from the commit
    assert (py_repo / "calc.py").read_text().endswith("a + b\n") and (py_repo / "data.txt").stat().st_size == 5001


def test_the_viewer_reads_no_file_past_its_cap(py_repo: Path) -> None:
    repo, base = base_commit(py_repo)
    (py_repo / "huge.txt").write_text("y" * (SHOWN_CAP + 10))
    (py_repo / "calc.py").write_text("changed\n")
    commit = commit_tree(repo, snapshot_tree(repo), base, "attempt")
    files = dict((path, after) for path, _before, after in changed_files(py_repo, base, commit))
    assert files["calc.py"] == "changed\n"
    assert files["huge.txt"].startswith(f"(not shown: {SHOWN_CAP + 10:,} bytes") and len(files["huge.txt"]) < 200


def test_the_table_states_the_cap_and_the_pick_and_grouping_need_no_diff_text() -> None:
    one = AttemptResult(1, 1, "s1", "w1", exit_reason="agent", commit="c" * 40, tree="t1", diff_bytes=DIFF_CAP + 1, files=1, added=9)
    two = AttemptResult(2, 2, "s2", "w2", exit_reason="agent", commit="d" * 40, tree="t1", diff_file="/x/attempt-2.diff", diff_bytes=10,
                        files=1, added=9)
    nothing = AttemptResult(3, 3, "s3", "w3", exit_reason="agent", commit="e" * 40, tree="t0", files=0)
    group_same([one, two, nothing])
    assert two.same_as == 1 and nothing.same_as is None
    lines = table([one, two, nothing], "true")
    assert lines[0].endswith(f"each diff kept up to {DIFF_CAP // 2**20:g} MiB in the session folder")
    assert f"diff over the {DIFF_CAP // 2**20:g} MiB cap: not kept; commit {'c' * 12} holds it" in lines[2]
    assert best([nothing]) is None


def test_a_sessions_patch_over_its_cap_is_its_files_and_a_note(py_repo: Path) -> None:
    from frogtui.vcs.snapshot import diff_trees

    repo, base = base_commit(py_repo)
    before = snapshot_tree(repo)
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (py_repo / "café.txt").write_text("z" * 3000 + "\n")
    after = snapshot_tree(repo)
    whole = diff_trees(repo, before, after)
    assert whole == subprocess.run(["git", "diff", "--binary", before, after], cwd=py_repo, capture_output=True).stdout.decode()
    short = diff_trees(repo, before, after, cap=1000)
    assert short.startswith("diff --git a/café.txt b/café.txt\ndiff --git a/calc.py b/calc.py\n")
    assert "this diff is larger than 1,000 bytes; its text is left out" in short and len(short) < 300
