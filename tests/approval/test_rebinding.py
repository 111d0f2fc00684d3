"""A command that rebinds what a name runs (issue 30, item 7): ``hash -p /usr/bin/rm ls``, an alias,
a write to ``BASH_CMDS``/``BASH_ALIASES`` (also through ``read``, ``printf -v``, ``declare``), ``enable``,
``shopt -s expand_aliases``. Every program of such a command is only known when it runs: denied
while any deny rule exists (``--approve all`` included), asked otherwise. The examples kept beside
each entry of ``shell.rebinds.REBINDS`` are swept here, each first run in real bash to show that it
does rebind."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, parse_rules
from frogtui.approval.rules import combine
from frogtui.approval.shell import analyze
from frogtui.approval.shell.rebinds import REBINDS
from frogtui.cli import main
from frogtui.config import config_dir
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace
from tests.support import git, turn, write_replay, xml_call

EXAMPLES = sorted({example for entry in REBINDS.values() for example in entry.examples})
DENY_RM = '[[rules]]\ntool = "Bash"\nmatch = "rm *"\ndecision = "deny"\n'
DENY_PUSH = '[[rules]]\ntool = "Bash"\nmatch = "git push *"\ndecision = "deny"\n'

# what the review of issue 30 ran, and the ways around a spelling: each rebinds, and none is allowed
ATTACKS = [
    "hash -p /usr/bin/rm ls; ls calc.py",
    "printf -v 'BASH_CMDS[ls]' /usr/bin/rm; ls calc.py",
    "printf -v BASH_C\\MDS[ls] /usr/bin/rm; ls calc.py",  # a backslash inside the name
    "printf -v 'BASH_C''MDS[ls]' /usr/bin/rm; ls calc.py",  # quotes inside the name
    "printf -v $'BASH_\\x43MDS[ls]' /usr/bin/rm; ls calc.py",  # an ANSI-C escape
    "read 'BASH_CMDS[ls]' <<< /usr/bin/rm; ls calc.py",
    "BASH_CMDS[ls]=/usr/bin/rm; ls calc.py",
    ": ${BASH_CMDS[ls]:=/usr/bin/rm}; ls calc.py",
    "n=BASH_CMDS; printf -v \"$n[ls]\" /usr/bin/rm; ls calc.py",
    "n=BASH_CMDS; declare -n r=$n; r[ls]=/usr/bin/rm; ls calc.py",
    "BASH_CMDS=([ls]=/usr/bin/rm); ls calc.py",  # unparseable: the raw text says it
    "f() { ls calc.py; }; hash -p /usr/bin/rm ls; f",  # the function runs after the rebinding
    "for i in 1 2; do ls calc.py; hash -p /usr/bin/rm ls; done",  # the second turn runs rm
    "command hash -p /usr/bin/rm ls; ls calc.py",
    "bash -c 'hash -p /usr/bin/rm ls; ls calc.py'",
    "sh -c 'alias ls=rm\nls calc.py'",  # dash expands aliases without expand_aliases
    "shopt -s expand_aliases\nBASH_ALIASES[ls]=rm\nls calc.py",
    "enable -f ./x.so ls; ls calc.py",
    "x=hash; $x -p /usr/bin/rm ls; ls calc.py",  # the rebinding program only known when it runs
    "eval \"$(printf 'hash -p /usr/bin/rm ls')\"; ls calc.py",
]


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("x = 1\n")
    git(repo, "init", "-q")
    tmp_dir = tmp_path / "session-tmp"
    tmp_dir.mkdir()
    return repo, tmp_dir


def decide(places: tuple[Path, Path], command: str, rules: str = "") -> object:
    repo, tmp_dir = places
    engine = PolicyEngine(Workspace(repo, tmp_dir=tmp_dir), combine(parse_rules(rules, "rules.toml"), None))
    return engine.evaluate(ToolCall("t", "Bash", {"command": command}))


@pytest.mark.parametrize(("command", "shows"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_each_example_rebinds_in_real_bash_and_is_not_allowed(places: tuple[Path, Path], command: str, shows: str) -> None:
    repo, _ = places
    ran = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True, timeout=10)
    if shows == "rm":
        assert not (repo / "calc.py").exists(), f"{command!r} did not run rm: {ran.stderr}"
        (repo / "calc.py").write_text("x = 1\n")
    else:
        assert shows in ran.stdout, f"{command!r}: {ran.stdout!r} {ran.stderr!r}"
    assert analyze(command).rebinds, command
    assert decide(places, command).kind == "ask", command
    denied = decide(places, command, DENY_PUSH)
    assert denied.kind == "deny" and denied.rule == "Bash: git push *", (command, denied)


def test_every_entry_that_can_show_itself_does() -> None:
    shown = {name for name, entry in REBINDS.items() if entry.examples}
    assert {"hash", "enable", "alias", "shopt", "read", "printf", "declare"} <= shown


@pytest.mark.parametrize("command", ATTACKS)
def test_a_deny_rule_denies_every_program_of_a_command_that_rebinds(places: tuple[Path, Path], command: str) -> None:
    decision = decide(places, command, DENY_RM)
    assert decision.kind == "deny" and decision.rule == "Bash: rm *", (command, decision)
    assert decide(places, command).kind == "ask", command  # no deny rule: a person reads it


@pytest.mark.parametrize(
    "command",
    ["ls -la", "alias", "alias ll", "hash", "hash -r", "hash -t ls", "printf -v line '%s' \"$x\"; echo \"$line\"",
     "local out=$(date); echo \"$out\"", "read -r name <<< x; echo \"$name\"", "declare -a list=(a b)", "enable", "shopt -s nullglob"],
)
def test_commands_that_rebind_nothing_are_left_alone(places: tuple[Path, Path], command: str) -> None:
    assert analyze(command).rebinds is None, command
    assert not any(c.unknown_program for c in analyze(command).commands), command


def test_the_reason_says_why(places: tuple[Path, Path]) -> None:
    decision = decide(places, "hash -p /usr/bin/rm ls; ls calc.py", DENY_RM)
    assert "hash -p rebinds what a name runs" in decision.reason and "deny is deny" in decision.reason


def test_approve_all_runs_no_renamed_rm_or_git_push(py_repo: Path, tmp_path: Path) -> None:
    """The reproduction: deny rules on ``rm`` and ``git push``, ``--approve all``: the renamed rm
    and git push were asked about, so run. Now each is denied by the rule, and nothing happened."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(DENY_RM + DENY_PUSH)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(py_repo, "remote", "add", "origin", str(remote))
    (py_repo / "victim.txt").write_text("keep me\n")
    replay = write_replay(
        tmp_path / "replay.jsonl",
        [
            turn("", xml_call("Bash", command="hash -p /usr/bin/rm ls; ls victim.txt")),
            turn("", xml_call("Bash", command="read 'BASH_CMDS[ls]' <<< /usr/bin/rm; ls victim.txt")),
            turn("", xml_call("Bash", command=f"printf -v 'BASH_CMDS[gp]' {shutil.which('git')}; gp push origin HEAD:main")),
            turn("", xml_call("Bash", command="shopt -s expand_aliases\nBASH_ALIASES[g]='git push'\ng origin HEAD:main")),
            turn("", xml_call("Bash", command="echo still-runs > ok.txt")),
            turn("", answer="done"),
        ],
    )
    trajectory = tmp_path / "t.json"
    code = main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all", "--trajectory", str(trajectory)])
    assert code == 0
    decided = [a for step in json.loads(trajectory.read_text())["steps"] for a in step["approvals"]]
    assert [(a["decision"], a["by"]) for a in decided] == [("deny", "rule")] * 4 + [("allow", "mode")], decided
    assert (py_repo / "victim.txt").exists()
    assert not subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", "main"], capture_output=True).stdout
    assert (py_repo / "ok.txt").read_text() == "still-runs\n"


def test_the_documented_table_is_the_data() -> None:
    from frogtui.approval.effect_table import rebinds_table

    text = (Path(__file__).parents[2] / "docs" / "APPROVALS.md").read_text(encoding="utf-8")
    documented = text.split("<!-- rebinds-table:start -->\n", 1)[1].split("<!-- rebinds-table:end -->", 1)[0]
    assert documented == rebinds_table(), "regenerate with: python -m frogtui.approval.effect_table"
