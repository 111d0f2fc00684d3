"""Start-up: each command imports only what it needs (checked in a fresh interpreter). Usage
errors: one line plus a hint, exit 2, never argparse's usage block; an unknown subcommand suggests
the closest one; an empty task is refused."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui import cli

HEAVY = ("llama_cpp", "httpx", "huggingface_hub", "tqdm", "textual", "numpy", "openai")


def modules_after(code: str) -> set[str]:
    """The top-level modules a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=os.environ.copy(), check=False)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "argv, allowed",
    [
        (["--help"], set()),
        (["run", "--help"], set()),
        (["policy", "check", "ls -la"], set()),
    ],
)
def test_a_command_imports_no_model_stack_and_no_ui_it_does_not_use(argv: list[str], allowed: set[str]) -> None:
    code = (
        "import contextlib, io\nfrom frogtui import cli\n"
        f"with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    cli.main({argv!r})"
    )
    loaded = modules_after(code)
    assert loaded & set(HEAVY) == allowed


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = cli.main(argv)
    except SystemExit as stop:
        code = int(stop.code or 0)
    captured = capsys.readouterr()
    return code, captured.err


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run"], "frogtui run: the following arguments are required: task (see frogtui run --help)"),
        (["run", ""], "frogtui run: argument task: the task is empty"),
        (["run", "   "], "frogtui run: argument task: the task is empty"),
        (["run", "fix it", "--modle", "x"], "frogtui run: unrecognized arguments: --modle x; did you mean --model?"),
        (["run", "fix it", "--approve", "sometimes"], "frogtui run: argument --approve: invalid choice: 'sometimes'"),
        (["--reume"], "frogtui: unrecognized arguments: --reume; did you mean --resume?"),
        (["doctor", "--verbose"], "frogtui doctor: unrecognized arguments: --verbose (see frogtui doctor --help)"),
        (["demo", "--hedless"], "frogtui demo: unrecognized arguments: --hedless; did you mean --headless?"),
        (["policy"], "frogtui policy: the following arguments are required: action"),
        (["rn", "fix it"], "frogtui: unknown command 'rn'; did you mean 'frogtui run'?"),
        (["docter"], "frogtui: unknown command 'docter'; did you mean 'frogtui doctor'?"),
        (["fix the failing test"], "to run a task headless: frogtui run \"TASK\""),
        (["acp", "--bogus"], "frogtui acp: unrecognized arguments: --bogus (see frogtui acp --help)"),
        (["acp", "--mdoel", "x"], "frogtui acp: unrecognized arguments: --mdoel x; did you mean --model?"),
        (["--theme", "nope"], "frogtui: no theme named 'nope'; themes: frog-dark, frog-light"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, err = run_cli(argv, capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert expected in err and "usage:" not in err


def test_an_empty_task_never_reaches_the_model(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["run", "", "--repo", str(py_repo), "--model", f"replay:{tmp_path / 'missing.jsonl'}"], capsys)
    assert code == 2 and "the task is empty" in err and "replay" not in err


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["acp", "--help"], ["demo", "--help"], ["doctor", "--help"]])
@pytest.mark.parametrize("columns", ["60", "80"])
def test_help_lists_every_command_and_never_breaks_a_word(argv: list[str], columns: str, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from frogtui.config import SETTINGS_HELP

    monkeypatch.setenv("COLUMNS", columns)
    with pytest.raises(SystemExit):
        cli.main(argv)
    out = capsys.readouterr().out
    words = re.sub(r"/ ", "/", " ".join(out.split()))  # a list of keys may wrap after a slash
    if argv == ["--help"]:
        for command in cli.SUBCOMMANDS:
            assert f"frogtui {command}" in words
    if argv[0] in ("--help", "run", "acp"):
        assert " ".join(SETTINGS_HELP.split()) in words  # the long slash-joined key lists are whole


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from frogtui import __version__
    from frogtui.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"frogtui {__version__} (Python 3.")
    assert main(["--repo", ".", "-V"]) == 0 and capsys.readouterr().out.startswith("frogtui ")
