"""``frogtui eval example DIR``: the shipped task set, made in a new folder — three tiny Python
repositories, each with a bug and the commit history of its fix, ``tasks.jsonl`` in SWE-bench's
format (``repo_path`` pointing at them, ``test_cmd`` pytest) and ``replay.jsonl``, a recorded
model that fixes the first task, makes a wrong fix to the second and gives up on the third. So

    frogtui eval DIR/tasks.jsonl --model replay:DIR/replay.jsonl --out DIR/out

resolves 1 of 3, ``--gold`` resolves 3 of 3, and ``frogtui eval mine DIR/repos/…`` finds each
repository's fix again.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from frogtui.arguments import Parser
from frogtui.models.replay import recorded_call as _call
from frogtui.models.replay import recorded_turn as _turn
from frogtui.programs import at_start, which
from frogtui.tools.specs import EDIT

PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider {tests}"
"""The examples' test command (they need no pytest plugin, and loading every installed one can take seconds)."""

EXAMPLES = [
    {
        "name": "median",
        "module": "stats.py",
        "buggy": "def median(values):\n    ordered = sorted(values)\n    return ordered[len(ordered) // 2]\n",
        "fixed": ("def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
                  "    if len(ordered) % 2:\n        return ordered[middle]\n    return (ordered[middle - 1] + ordered[middle]) / 2\n"),
        "tests_before": "from stats import median\n\n\ndef test_odd():\n    assert median([3, 1, 2]) == 2\n",
        "tests_after": ("from stats import median\n\n\ndef test_odd():\n    assert median([3, 1, 2]) == 2\n\n\n"
                        "def test_even():\n    assert median([4, 1, 3, 2]) == 2.5\n"),
        "test_file": "test_stats.py",
        "fail_to_pass": ["test_stats.py::test_even"],
        "pass_to_pass": ["test_stats.py::test_odd"],
        "statement": "median() is wrong for lists of even length\n\nmedian([4, 1, 3, 2]) returns 3; it should be 2.5, "
                     "the mean of the two middle values.",
    },
    {
        "name": "slug",
        "module": "slug.py",
        "buggy": "def slugify(title):\n    return title.lower().replace(' ', '-')\n",
        "fixed": "def slugify(title):\n    return '-'.join(title.lower().split())\n",
        "tests_before": "from slug import slugify\n\n\ndef test_simple():\n    assert slugify('Hello World') == 'hello-world'\n",
        "tests_after": ("from slug import slugify\n\n\ndef test_simple():\n    assert slugify('Hello World') == 'hello-world'\n\n\n"
                        "def test_spaces():\n    assert slugify('  Hello   World ') == 'hello-world'\n"),
        "test_file": "test_slug.py",
        "fail_to_pass": ["test_slug.py::test_spaces"],
        "pass_to_pass": ["test_slug.py::test_simple"],
        "statement": "slugify() keeps runs of spaces\n\nslugify('  Hello   World ') gives '--hello---world-'; "
                     "it should give 'hello-world'.",
    },
    {
        "name": "clamp",
        "module": "clamp.py",
        "buggy": "def clamp(value, low, high):\n    return max(low, value)\n",
        "fixed": "def clamp(value, low, high):\n    return min(high, max(low, value))\n",
        "tests_before": "from clamp import clamp\n\n\ndef test_low():\n    assert clamp(-5, 0, 10) == 0\n",
        "tests_after": ("from clamp import clamp\n\n\ndef test_low():\n    assert clamp(-5, 0, 10) == 0\n\n\n"
                        "def test_high():\n    assert clamp(50, 0, 10) == 10\n"),
        "test_file": "test_clamp.py",
        "fail_to_pass": ["test_clamp.py::test_high"],
        "pass_to_pass": ["test_clamp.py::test_low"],
        "statement": "clamp() ignores the upper bound\n\nclamp(50, 0, 10) returns 50; it should return 10.",
    },
]
"""Each example: a module with a bug, its tests before and after the fix, the fix."""


REPLAY = [
    _turn("Average the two middle values for an even length.",
          _call(EDIT.name, file_path="stats.py", old_string="return ordered[len(ordered) // 2]",
                new_string="middle = len(ordered) // 2\n    if len(ordered) % 2:\n        return ordered[middle]\n"
                           "    return (ordered[middle - 1] + ordered[middle]) / 2")),
    _turn("Done.", answer="median now averages the two middle values."),
    _turn("Strip the ends.", _call(EDIT.name, file_path="slug.py", old_string="title.lower()", new_string="title.strip().lower()")),
    _turn("Done.", answer="slugify strips the title first."),
    _turn("I cannot tell what to change.", answer="I could not find the problem."),
]
"""The recorded model: a right fix, a wrong fix (runs of spaces inside stay), no change."""


def _run_git(repo: Path, *args: str) -> str:
    """frogtui's own git (``frogtui.programs``: never a bare ``git`` looked up on an unclean ``PATH``)."""
    git = which("git", repo)
    if git is None:
        raise OSError("git was not found on PATH outside a repository")
    return subprocess.run([git, *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, "PATH": at_start().path}).stdout


def _git(repo: Path, *args: str) -> None:
    identity = ["-c", "user.name=frogtui example", "-c", "user.email=example@frogtui.invalid", "-c", "commit.gpgsign=false"]
    _run_git(repo, *identity, *args)


def _rev(repo: Path, rev: str) -> str:
    return _run_git(repo, "rev-parse", rev).strip()


def _diff(repo: Path, base: str, head: str, path: str) -> str:
    return _run_git(repo, "diff", "--no-color", "--no-ext-diff", base, head, "--", path)


def make_examples(folder: Path) -> Path:
    """The example task set in ``folder`` (new or empty); returns its ``tasks.jsonl``.

    Raises:
        FileExistsError: ``folder`` is not empty.
        OSError, subprocess.CalledProcessError: it cannot be written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if any(folder.iterdir()):
        raise FileExistsError(f"{folder} is not empty: give a new folder for the examples")
    records = []
    for example in EXAMPLES:
        repo = folder / "repos" / example["name"]
        repo.mkdir(parents=True)
        (repo / example["module"]).write_text(example["buggy"])
        (repo / example["test_file"]).write_text(example["tests_before"])
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", f"{example['name']}: first version")
        base = _rev(repo, "HEAD")
        (repo / example["module"]).write_text(example["fixed"])
        (repo / example["test_file"]).write_text(example["tests_after"])
        _git(repo, "add", ".")
        _git(repo, "commit", "-q", "-m", example["statement"])
        records.append({
            "instance_id": f"example__{example['name']}-1", "repo": f"example/{example['name']}", "base_commit": base,
            "problem_statement": example["statement"], "patch": _diff(repo, base, "HEAD", example["module"]),
            "test_patch": _diff(repo, base, "HEAD", example["test_file"]),
            "FAIL_TO_PASS": json.dumps(example["fail_to_pass"]), "PASS_TO_PASS": json.dumps(example["pass_to_pass"]),
            "repo_path": f"repos/{example['name']}", "test_cmd": PYTEST,
        })
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (folder / "replay.jsonl").write_text("".join(json.dumps({"content": t}) + "\n" for t in REPLAY), encoding="utf-8")
    return tasks


def main(argv: list[str]) -> int:
    parser = Parser(prog="frogtui eval example", description="Make the shipped example task set (three tiny repositories) in a "
                    "new folder, with a replayed model that resolves one of the three.")
    parser.add_argument("folder", type=Path, help="a new (or empty) folder")
    args = parser.parse_args(argv)
    try:
        tasks = make_examples(args.folder.expanduser())
    except (OSError, subprocess.CalledProcessError) as err:
        print(f"frogtui: cannot make the examples: {err}", file=sys.stderr)
        return 2
    folder = tasks.parent
    print(f"tasks:  {tasks}\nreplay: {folder / 'replay.jsonl'}\nrun:    frogtui eval {tasks} --model replay:{folder / 'replay.jsonl'} "
          f"--out {folder / 'out'}\ncheck the gold patches: frogtui eval {tasks} --gold --out {folder / 'gold'}", file=sys.stderr)
    return 0
