"""``frogtui demo [DIR] [--headless]``: try frogtui without a model.

Makes a small Python repository with a failing test (``median`` is wrong for even-length lists),
writes a replay of a FrogNano-style session that finds and fixes it (Glob, Read, a failing pytest
run, an Edit, a passing run, a Markdown answer), and opens the app on it — or, with ``--headless``,
runs it through ``frogtui run --approve all``. Everything happens in a new folder; nothing else is
touched.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from frogtui.arguments import Parser
from frogtui.models.replay import recorded_call as _call
from frogtui.models.replay import recorded_turn as _turn
from frogtui.programs import at_start, which
from frogtui.tools.specs import BASH, EDIT, GLOB, READ

FILES = {
    "stats.py": (
        '"""Small statistics helpers."""\n\n\n'
        "def mean(values):\n    return sum(values) / len(values)\n\n\n"
        "def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
        "    return ordered[middle]\n"
    ),
    "test_stats.py": (
        "from stats import mean, median\n\n\n"
        "def test_mean():\n    assert mean([1, 2, 3, 4]) == 2.5\n\n\n"
        "def test_median_odd():\n    assert median([3, 1, 2]) == 2\n\n\n"
        "def test_median_even():\n    assert median([4, 1, 3, 2]) == 2.5\n"
    ),
    "README.md": "# stats\n\nTiny statistics helpers. Run the tests with `python -m pytest -q`.\n",
}


TURNS = [
    _turn("The user says a test fails. Let me see what is in the repository.", _call(GLOB.name, pattern="**/*.py")),
    _turn("Two files. Read the module and its tests.", _call(READ.name, file_path="stats.py"), _call(READ.name, file_path="test_stats.py")),
    _turn("Run the tests to see the failure.", _call(BASH.name, command="python -m pytest -q", description="Run the test suite")),
    _turn(
        "median returns the upper middle element for even-length lists; it should average the two middle ones.",
        _call(
            EDIT.name,
            file_path="stats.py",
            old_string="    return ordered[middle]",
            new_string="    if len(ordered) % 2:\n        return ordered[middle]\n    return (ordered[middle - 1] + ordered[middle]) / 2",
        ),
        answer="The bug is in `median`: for an even number of values it must average the two middle ones.",
    ),
    _turn("Validate the fix.", _call(BASH.name, command="python -m pytest -q", description="Run the test suite again")),
    _turn(
        "All three tests pass now.",
        answer=(
            "Fixed `median` in `stats.py`:\n\n"
            "- odd length: the middle element, as before;\n"
            "- even length: the mean of the two middle elements.\n\n"
            "```python\nif len(ordered) % 2:\n    return ordered[middle]\n"
            "return (ordered[middle - 1] + ordered[middle]) / 2\n```\n\n"
            "`python -m pytest -q`: 3 passed."
        ),
    ),
]
TASK = "test_median_even fails. Find the bug and fix it."
REPLAY_NOTE = (
    "This demo replays a recorded session: the model's turns are fixed, so it goes on as recorded "
    "whatever you answer (deny, edit, a message of your own). With a real model (--model), your answers steer it."
)
"""Said to the person (the app's chat, headless stderr): their answers do not change the replay."""


def make_demo(folder: Path) -> Path:
    """Create the demo repository in ``folder`` (new or empty) and its replay; return the replay.

    Raises:
        FileExistsError: ``folder`` exists and is not empty.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty: give a new folder for the demo")
    repo = folder / "stats"
    repo.mkdir()
    for name, text in FILES.items():
        (repo / name).write_text(text, encoding="utf-8")
    identity = ["-c", "user.name=frogtui demo", "-c", "user.email=demo@frogtui.invalid"]
    executable = which("git", repo)
    if executable is None:
        raise OSError("git was not found on PATH outside a repository")
    env = {**os.environ, "PATH": at_start().path}
    for args in (["init", "-q"], ["add", "."], [*identity, "commit", "-q", "-m", "stats: mean and median"]):
        subprocess.run([executable, *args], cwd=repo, check=True, capture_output=True, env=env)
    replay = folder / "demo-session.jsonl"
    replay.write_text("".join(json.dumps({"content": t}) + "\n" for t in TURNS), encoding="utf-8")
    return replay


def main(argv: list[str]) -> int:
    parser = Parser(
        prog="frogtui demo",
        description="Try frogtui without a model: a throwaway repository with a failing test and a replayed session that fixes it.",
    )
    parser.add_argument("folder", nargs="?", type=Path, help="a new (or empty) folder for the demo (default: a temp folder)")
    parser.add_argument("--headless", action="store_true", help="run it as `frogtui run --approve all` instead of opening the app")
    args = parser.parse_args(argv)
    folder = args.folder or Path(tempfile.mkdtemp(prefix="frogtui-demo-"))
    try:
        replay = make_demo(folder.expanduser())
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"frogtui: cannot make the demo: {err}", file=sys.stderr)
        return 2
    repo = folder.expanduser() / "stats"
    print(f"demo repository: {repo}\nreplayed model:  replay:{replay}\ntask:            {TASK}\n{REPLAY_NOTE}", file=sys.stderr)
    if args.headless:
        from frogtui import headless

        return headless.main([TASK, "--repo", str(repo), "--model", f"replay:{replay}", "--approve", "all"])
    from frogtui.ui import launch

    return launch.main(app_argv(repo, replay), prompt=TASK, note=REPLAY_NOTE)


def app_argv(repo: Path, replay: Path) -> list[str]:
    """The app's command line for the demo in ``repo`` replaying ``replay``."""
    return ["--repo", str(repo), "--model", f"replay:{replay}"]


def demo_app(folder: Path) -> Any:
    """The demo made in ``folder``, in the app as ``frogtui demo`` opens it (not started)."""
    from frogtui.ui import launch

    replay = make_demo(folder)
    return launch.make_app(app_argv(folder / "stats", replay), prompt=TASK, note=REPLAY_NOTE)
