"""What a checkpoint costs before each Write/Edit/Bash, against git's own ways to snapshot a tree.

Usage: python bench/checkpoint.py [--files 5000] [--changed 20] [--runs 5] [--per-folder 1]

Builds a real repository in a temp folder (FILES files of ~1 KB, PER_FOLDER to a folder, in
nested folders, committed, packed with ``git gc``, ``gc.auto=0`` so no background gc runs during
the timings), takes one checkpoint (the session's first, which seeds frogtui's private index),
then times two series, alternating the three ways per run:

- clean: nothing changes between runs (a checkpoint before ``ls`` or ``true``);
- dirty: before each run CHANGED files change and CHANGED untracked ones appear.

The three ways:

- frogtui: ``Checkpoints.before_action`` as a sandboxed session takes it (the private index
  brought up to date from ``git status`` with the untracked cache, ``git add`` of what changed,
  ``write-tree``, ``update-ref``; on a tree the kernel saw no change in (``vcs.watch``, inotify)
  no git at all, the ref waits for the next ``update-ref``): tracked and untracked files, the
  person's index untouched; ``--no-watch``: as an unsandboxed session takes it (``git status``
  on a clean tree);
- ``git stash create``: git's own snapshot of tracked changes (untracked files are not included);
- a fresh temporary index (``read-tree HEAD``, ``add --all``, ``write-tree``): the same snapshot as
  frogtui without reusing the index's stat data.

The last line is one JSON object with the median milliseconds of each and frogtui's ratio to
``git stash create``, for both series.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.protocol import ToolCall  # noqa: E402
from frogtui.vcs.checkpoints import Checkpoints  # noqa: E402
from frogtui.vcs.repository import discover  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@b"}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full_env = {**os.environ, **GIT_ENV, **(env or {})}
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=full_env).stdout


def file_path(root: Path, i: int, per_folder: int = 1) -> Path:
    return root / f"pkg{i % 50}" / f"mod{i // (50 * per_folder)}" / f"file{i}.py"


def make_repo(root: Path, files: int, per_folder: int = 1) -> None:
    git(root, "init", "-q")
    for i in range(files):
        path = file_path(root, i, per_folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"value_{i}_{j} = {j}\n" for j in range(60)))
    git(root, "config", "gc.auto", "0")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    git(root, "gc", "-q")  # no loose objects left, no background gc during the timings


def change(root: Path, files: int, changed: int, run: int, per_folder: int = 1) -> None:
    for k in range(changed):
        i = (k * 997 + run) % files
        path = file_path(root, i, per_folder)
        path.write_text(path.read_text() + f"# run {run}\n")
        (root / f"new_{run}_{k}.txt").write_text(f"untracked {run} {k}\n")


def timed(action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def fresh_index_snapshot(root: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(root, "read-tree", "HEAD", env=env)
        git(root, "add", "--all", env=env)
        git(root, "write-tree", env=env)


def series(root: Path, args: argparse.Namespace, checkpoints: Checkpoints, dirty: bool, first: int) -> dict[str, float]:
    call = ToolCall("bench", "Bash", {"command": "true"})
    results: dict[str, list[float]] = {"frogtui": [], "stash_create": [], "fresh_index": []}
    for run in range(first, first + args.runs):
        if dirty:
            change(root, args.files, args.changed, run, args.per_folder)
        results["frogtui"].append(timed(lambda step=run + 1: checkpoints.before_action(step, call)))
        results["stash_create"].append(timed(lambda: git(root, "stash", "create")))
        results["fresh_index"].append(timed(lambda: fresh_index_snapshot(root)))
        print(f"{'dirty' if dirty else 'clean'} run {run - first + 1}: " + "   ".join(f"{k} {v[-1]:7.1f} ms" for k, v in results.items()))
    medians = {f"{k}_ms": round(statistics.median(v), 1) for k, v in results.items()}
    ratios = [a / b for a, b in zip(results["frogtui"], results["stash_create"], strict=False)]
    return {**medians, "ratio_to_stash_create": round(statistics.median(ratios), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--changed", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--per-folder", type=int, default=1, help="files to a folder (1: as many folders as files)")
    parser.add_argument("--no-watch", action="store_true", help="git status for every checkpoint (an unsandboxed session's)")
    args = parser.parse_args()
    if args.per_folder < 1:
        parser.error("--per-folder must be at least 1")
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        make_repo(root, args.files, args.per_folder)
        print(f"repository: {args.files} files committed in {time.perf_counter() - started:.1f}s; "
              f"{args.changed} changed + {args.changed} untracked per dirty run")
        state = discover(root, "bench")  # the session's start: seeds the private index
        assert state is not None
        checkpoints = Checkpoints(state, watched=not args.no_watch)
        clean = series(root, args, checkpoints, dirty=False, first=0)
        dirty = series(root, args, checkpoints, dirty=True, first=args.runs)
        layout = {"per_folder": args.per_folder} if args.per_folder != 1 else {}
        layout |= {"watched": not args.no_watch}
        print(json.dumps({"files": args.files, **layout, "changed": args.changed, "runs": args.runs, "clean": clean, "dirty": dirty}))


if __name__ == "__main__":
    main()
