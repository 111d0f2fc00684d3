"""Each Leaf tool is named once: one spec per tool in ``frogtui/tools/specs.py``, found by name
everywhere else; and one module (``frogtui/tools/observations.py``) owns the observation strings
both ways."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import frogtui
from frogtui.protocol import ToolCall
from frogtui.tools import MUTATING_TOOLS, TOOL_NAMES, TOOL_SCHEMAS, ToolRunner, Workspace
from frogtui.tools import observations as obs
from frogtui.tools.specs import BASH, EDIT, GLOB, READ, TOOL_SPECS, WRITE, runs_commands, short_arguments, tool_spec

LITERAL = re.compile(r"[\"'](Read|Write|Edit|Glob|Bash)[\"']")
"""The lead's count: ``grep -rlE "[\\"'](Read|Write|Edit|Glob|Bash)[\\"']" frogtui | grep -v frogtui/tools/``."""
MAX_MODULES_WITH_LITERALS = 4


def test_tool_names_are_literals_in_at_most_four_modules_outside_tools() -> None:
    package = Path(frogtui.__file__).parent
    found = sorted(
        str(path.relative_to(package.parent))
        for path in package.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and path.relative_to(package).parts[0] != "tools"
        and LITERAL.search(path.read_text(errors="replace"))
    )
    assert len(found) <= MAX_MODULES_WITH_LITERALS, found


def test_only_the_specs_say_which_kind_runs_commands() -> None:
    package = Path(frogtui.__file__).parent
    found = sorted(
        f"{path.relative_to(package.parent)}: {line.strip()}"
        for path in package.rglob("*.py")
        if path.relative_to(package).as_posix() != "tools/specs.py"
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"spec\.kind [!=]= [\"']execute[\"']", line)
    )
    assert found == [], "ask tools.specs.runs_commands"
    assert runs_commands(BASH) and runs_commands("Bash") and not runs_commands(READ) and not runs_commands("Nope")


def test_the_table_holds_the_five_leaf_tools_in_schema_order_with_their_verbatim_schemas() -> None:
    assert tuple(s.name for s in TOOL_SPECS) == TOOL_NAMES == ("Read", "Write", "Edit", "Glob", "Bash")
    assert [s.schema for s in TOOL_SPECS] == TOOL_SCHEMAS
    assert all(s.schema["function"]["name"] == s.name for s in TOOL_SPECS)
    assert (READ, WRITE, EDIT, GLOB, BASH) == TOOL_SPECS
    assert tool_spec("Bash") is BASH and tool_spec("bash") is None and tool_spec("Grep") is None


def test_what_each_spec_says_about_its_tool() -> None:
    assert {s.name: s.kind for s in TOOL_SPECS} == {"Read": "read", "Write": "edit", "Edit": "edit", "Glob": "search", "Bash": "execute"}
    assert MUTATING_TOOLS == frozenset(s.name for s in TOOL_SPECS if s.mutates) == {"Write", "Edit", "Bash"}
    assert {s.name: s.path_argument for s in TOOL_SPECS} == {
        "Read": "file_path", "Write": "file_path", "Edit": "file_path", "Glob": None, "Bash": None,
    }
    assert [s.name for s in TOOL_SPECS if s.preview is not None] == ["Write", "Edit"]
    for spec in TOOL_SPECS:  # the argument that says what a call does is one the schema requires
        assert spec.subject_argument in spec.schema["function"]["parameters"]["required"]


def test_summaries_and_the_short_arguments_of_a_call() -> None:
    assert BASH.summary({"command": "pytest -q\nmore"}) == "Bash `pytest -q …`"
    assert GLOB.summary({"pattern": "**/*.py"}) == "Glob **/*.py"
    assert GLOB.summary({"pattern": "*.py", "path": "src"}) == "Glob *.py in src"
    assert READ.summary({"file_path": "calc.py", "offset": 3}) == "Read calc.py"
    assert short_arguments(ToolCall("1", "Bash", {"command": "echo   a\nb"}), 80) == "echo a b"
    assert short_arguments(ToolCall("1", "Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}), 80) == "a.py"
    assert short_arguments(ToolCall("1", "Glob", {"pattern": "x" * 20}), 10) == "x" * 9 + "…"
    assert short_arguments(ToolCall("1", "Nope", {"pattern": "p"}), 10) == "p"


def test_the_runner_runs_each_tool_through_its_spec(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    runner = ToolRunner(Workspace(root, tmp_dir=tmp_path / "tmp"))
    assert runner.run(ToolCall("1", WRITE.name, {"file_path": "a.txt", "content": "hi\n"})).observation == "Wrote a.txt (3 bytes)."
    assert runner.run(ToolCall("2", READ.name, {"file_path": "a.txt"})).observation == "a.txt\n1. hi"
    assert runner.run(ToolCall("3", GLOB.name, {"pattern": "*.txt"})).observation == "a.txt"
    edited = runner.run(ToolCall("4", EDIT.name, {"file_path": "a.txt", "old_string": "hi", "new_string": "yo"}))
    assert edited.observation == "Edited a.txt (1 replacement)." and edited.ok and edited.kind == "ok"
    failed = runner.run(ToolCall("5", BASH.name, {"command": "exit 3"}))
    assert (failed.ok, failed.exit_code, failed.kind) == (False, 3, "exit")
    missing = runner.run(ToolCall("6", READ.name, {"file_path": "nope.txt"}))
    assert (missing.ok, missing.error, missing.kind) == (False, "FileNotFoundError", "error")
    unknown = runner.run(ToolCall("7", "Grep", {}))
    assert (unknown.observation, unknown.ok, unknown.kind) == ("Unknown tool: Grep", False, "error")


# the observation vocabulary, both ways ----------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "command", "kind", "exit_code"),
    [
        ("Exit code: 0\nSTDOUT:\n\nSTDERR:\n", True, "ok", 0),
        ("Exit code: 2\nSTDOUT:\n", True, "exit", 2),
        ("Exit code: -9\nSTDOUT:\n", True, "exit", -9),
        ("Timed out after 3.0s\nSTDOUT:\n", True, "timeout", None),
        ("Interrupted by the user\nSTDOUT:\n", True, "interrupted", None),
        ("Interrupted by the user before it ran", False, "interrupted", None),
        ("The user denied this tool call. Reason: no", False, "denied", None),
        ("PermissionError: writes outside the repository", False, "denied", None),
        ("FileNotFoundError: [Errno 2] No such file", False, "error", None),
        ("Unknown tool: Grep", False, "error", None),
        ("Not run: the run stopped at a failed checkpoint", False, "not_run", None),
        ("calc.py\n1. ValueError: in a file is not an error", False, "ok", None),
        ("Exit code: 1 is the name of a file\n1. x", False, "ok", None),  # only a command's observation has an exit code
        ("Note: the user edited this call before it ran; it ran with {}\nExit code: 1\nSTDOUT:\n", True, "exit", 1),
    ],
)
def test_classify_reads_back_what_the_vocabulary_writes(text: str, command: bool, kind: str, exit_code: int | None) -> None:
    reading = obs.classify(text, command=command)
    assert (reading.kind, reading.exit_code) == (kind, exit_code)


def test_the_produced_strings_are_leafs_and_classify_back_to_their_kind() -> None:
    cases = [
        (obs.bash_observation(obs.exit_head(0), "a\n", ""), True, "ok"),
        (obs.bash_observation(obs.exit_head(1), "", "boom\n"), True, "exit"),
        (obs.bash_observation(obs.timeout_head(2.0), "", ""), True, "timeout"),
        (obs.bash_observation(obs.INTERRUPTED, "", ""), True, "interrupted"),
        (obs.error_observation(ValueError("old_string was not found")), False, "error"),
        (obs.unknown_tool("Nope"), False, "error"),
        (obs.denied_by_person(""), False, "denied"),
        (obs.denied_by_policy("denied by policy"), False, "denied"),
        (obs.INTERRUPTED_BEFORE_RUN, False, "interrupted"),
        (obs.wrote("a.py", 3), False, "ok"),
        (obs.edited("a.py", 2), False, "ok"),
        (obs.NO_FILES_MATCHED, False, "ok"),
    ]
    assert cases[0][0] == "Exit code: 0\nSTDOUT:\na\n\nSTDERR:\n"
    assert cases[2][0].startswith("Timed out after 2.0s\nSTDOUT:\n")
    assert cases[4][0] == "ValueError: old_string was not found"
    assert cases[6][0] == "The user denied this tool call."
    assert obs.denied_by_person("too risky") == "The user denied this tool call. Reason: too risky"
    assert cases[9][0] == "Wrote a.py (3 bytes)." and cases[10][0] == "Edited a.py (2 replacements)."
    assert obs.edited("a.py", 1) == "Edited a.py (1 replacement)."
    assert obs.truncated_chars(5) == "\n[truncated 5 chars]" and obs.more_files(7) == "... 7 more files"
    for text, command, kind in cases:
        assert obs.classify(text, command=command).kind == kind, text
