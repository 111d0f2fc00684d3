"""Deny is deny (issue 23, item 5): a user's or project's deny rule, and ``[tools] Bash = "deny"``,
wins over the read-only default, over an opaque word, over "runs as another user" and over every
approval mode, ``--approve all`` included; the reason names the rule."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from frogtui.approval.sandbox import probe_bwrap
from frogtui.cli import main
from frogtui.config import config_dir
from tests.support import turn, write_replay, xml_call


def user_rules(text: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(text)


def deny(match: str) -> str:
    return f'[[rules]]\ntool = "Bash"\nmatch = "{match}"\ndecision = "deny"\n'


def check(capsys: pytest.CaptureFixture[str], repo: Path, command: str) -> list[str]:
    code = main(["policy", "check", "--repo", str(repo), command])
    fields = capsys.readouterr().out.strip().split("\t")
    assert code == {"allow": 0, "ask": 1, "deny": 2}[fields[0]]  # the decision is the exit status too
    return fields


CASES = [
    # rules, command, the rule the denial must name
    (deny("echo *"), "echo ${x@P} RAN", "Bash: echo *"),  # an opaque word: was only asked
    (deny("echo *"), "echo `date`", "Bash: echo *"),
    (deny("sudo *"), "sudo -n true", "Bash: sudo *"),  # runs as another user: was only asked
    (deny("sudo *"), "env X=1 sudo -n true", "Bash: sudo *"),
    (deny("bash *"), "bash -c 'ls'", "Bash: bash *"),  # the wrapper as written, not only what it runs
    (deny("ls *"), "ls -la", "Bash: ls *"),  # the read-only default
    (deny("cat *"), "case x in x) cat calc.py;; esac", "Bash: cat *"),  # unparseable, a piece of it denied
    (deny("rm *"), "/bin/rm calc.py", "Bash: rm *"),  # a path to the program
    (deny("rm *"), "$(echo rm) calc.py", "Bash: rm *"),  # the program only known when it runs may be rm
    (deny("rm *"), 'eval "$X"', "Bash: rm *"),
    (deny("rm *"), "timeout $(printf '9 rm') calc.py", "Bash: rm *"),
    ('[tools]\nBash = "deny"\n', "ls -la", "Bash: deny (default)"),  # was allowed by the read-only default
    ('[tools]\nBash = "deny"\n', "echo ${x@P}", "Bash: deny (default)"),
    ('[tools]\nBash = "deny"\n', "case x in x) ls;; esac", "Bash: deny (default)"),
]


@pytest.mark.parametrize(("rules", "command", "rule"), CASES, ids=[c[1] for c in CASES])
def test_policy_check_denies_naming_the_rule(
    py_repo: Path, capsys: pytest.CaptureFixture[str], rules: str, command: str, rule: str
) -> None:
    user_rules(rules)
    fields = check(capsys, py_repo, command)
    assert fields[:2] == ["deny", rule], fields


@pytest.mark.parametrize("project", [deny("echo *"), '[tools]\nBash = "deny"\n'])
def test_an_untrusted_projects_deny_is_deny_too(py_repo: Path, capsys: pytest.CaptureFixture[str], project: str) -> None:
    (py_repo / ".frogtui.toml").write_text(project)
    for command in ("echo ${x@P} RAN", "echo hi"):
        assert check(capsys, py_repo, command)[0] == "deny", command


@pytest.mark.skipif(shutil.which("bwrap") is None or probe_bwrap(shutil.which("bwrap") or "") is not None, reason="no sandbox")
def test_a_deny_rule_leaves_other_commands_alone(py_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    user_rules(deny("sudo *"))
    assert check(capsys, py_repo, "ls -la")[:2] == ["allow", "read-only"]
    assert check(capsys, py_repo, "echo sudo")[0] == "allow"
    user_rules("")
    assert check(capsys, py_repo, "$(echo rm) calc.py")[0] == "ask"  # no deny rule: an unknown program is asked about


def test_deny_holds_under_approve_all(py_repo: Path, tmp_path: Path) -> None:
    user_rules(deny("echo *") + deny("sudo *") + deny("ls *"))
    marker = py_repo / "RAN"
    replay = write_replay(
        tmp_path / "replay.jsonl",
        [
            turn("", xml_call("Bash", command=f"x='$(touch {marker})'; echo ${{x@P}} RAN")),
            turn("", xml_call("Bash", command="sudo -n true")),
            turn("", xml_call("Bash", command="ls -la")),
            turn("", xml_call("Bash", command="touch made.txt")),
            turn("", answer="done"),
        ],
    )
    trajectory = tmp_path / "t.json"
    code = main(["run", "go", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all", "--trajectory", str(trajectory)])
    assert code == 0
    decided = [a for step in json.loads(trajectory.read_text())["steps"] for a in step["approvals"]]
    assert [(a["decision"], a["by"], a["rule"]) for a in decided] == [
        ("deny", "rule", "Bash: echo *"),
        ("deny", "rule", "Bash: sudo *"),
        ("deny", "rule", "Bash: ls *"),
        ("allow", "mode", "--approve all"),
    ]
    assert all("Bash: " in a["reason"] for a in decided[:3])
    assert not marker.exists()
