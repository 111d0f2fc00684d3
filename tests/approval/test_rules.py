"""Rules files: parsing, one-line errors, deny beats ask beats allow, tighten-only project files,
trust remembered by path and hash, and the glob semantics of both kinds of rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.approval import (
    PolicyEngine,
    load_rules,
    parse_rules,
    trust_project,
    untrust_project,
)
from frogtui.approval.rules import command_matches, path_matches
from frogtui.config import config_dir
from frogtui.errors import ConfigError
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace


def bash(command: str) -> ToolCall:
    return ToolCall("t", "Bash", {"command": command})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[tools\nRead = 1", "not valid TOML"),
        ("[tools]\nRaed = \"allow\"", "unknown tool 'Raed'"),
        ("[tools]\nRead = \"yes\"", "must be \"allow\", \"ask\" or \"deny\""),
        ("[[rules]]\ntool = \"Bash\"\nmatch = \"x\"", "lacks decision"),
        ("[[rules]]\ntool = \"Bash\"\nmatch = \"'x\"\ndecision = \"allow\"", "cannot split match"),
        ("[[rules]]\ntool = \"Write\"\nmatch = \"!docs\"\ndecision = \"allow\"", "negated patterns"),
        ("[sandbox]\nbash = \"docker\"", "bash must be"),
        ("[sandbox]\nnetwork = \"yes\"", "network must be true or false"),
        ("color = 1", "unknown key"),
    ],
)
def test_bad_rules_give_one_clear_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_rules(text, "rules.toml")
    line = str(info.value)
    assert "\n" not in line and line.startswith("rules.toml: ") and message in line


def test_the_issue_example_parses() -> None:
    text = (Path(__file__).parent / "example_rules.toml").read_text()
    parsed = parse_rules(text, "example")
    assert parsed.tools == {"Read": "allow", "Bash": "ask"}
    assert [(r.tool, r.match, r.decision) for r in parsed.rules] == [("Bash", "pytest *", "allow"), ("Write", "docs/**", "allow")]
    assert parsed.sandbox == {"bash": "bwrap", "network": False}


def test_deny_beats_ask_beats_allow(py_repo: Path) -> None:
    (config_dir()).mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(
        '[[rules]]\ntool = "Bash"\nmatch = "git *"\ndecision = "allow"\n'
        '[[rules]]\ntool = "Bash"\nmatch = "git push *"\ndecision = "ask"\n'
        '[[rules]]\ntool = "Bash"\nmatch = "git push --force *"\ndecision = "deny"\n'
    )
    engine = PolicyEngine.load(Workspace(py_repo))
    assert engine.evaluate(bash("git log")).kind == "allow"
    assert engine.evaluate(bash("git push origin")).kind == "ask"
    decision = engine.evaluate(bash("git push --force origin"))
    assert (decision.kind, decision.rule) == ("deny", "Bash: git push --force *")
    assert str(config_dir() / "rules.toml") in decision.reason


def test_untrusted_project_file_only_tightens(py_repo: Path) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text('[[rules]]\ntool = "Bash"\nmatch = "pytest *"\ndecision = "allow"\n')
    (py_repo / ".frogtui.toml").write_text(
        '[tools]\nWrite = "allow"\nBash = "deny"\n'
        '[[rules]]\ntool = "Bash"\nmatch = "curl *"\ndecision = "allow"\n'
        '[sandbox]\nbash = "none"\nnetwork = true\n'
    )
    rules = load_rules(py_repo)
    engine = PolicyEngine(Workspace(py_repo), rules)
    assert engine.evaluate(bash("pytest -q")).kind == "deny", "the project's Bash = deny caps the user's allow"
    assert engine.evaluate(bash("curl x")).kind == "deny"
    assert engine.evaluate(ToolCall("t", "Write", {"file_path": "calc.py", "content": ""})).kind == "ask"
    assert rules.sandbox.bash == "bwrap" and rules.sandbox.network is False
    assert len(rules.notes) == 4 and all("not trusted" in note for note in rules.notes)


def test_trust_is_remembered_by_path_and_hash(py_repo: Path) -> None:
    project = py_repo / ".frogtui.toml"
    project.write_text('[[rules]]\ntool = "Bash"\nmatch = "make *"\ndecision = "allow"\n')
    assert PolicyEngine(Workspace(py_repo), load_rules(py_repo)).evaluate(bash("make test")).kind == "ask"
    trust_project(py_repo)
    assert PolicyEngine(Workspace(py_repo), load_rules(py_repo)).evaluate(bash("make test")).kind == "allow"
    project.write_text('[[rules]]\ntool = "Bash"\nmatch = "*"\ndecision = "allow"\n')
    assert PolicyEngine(Workspace(py_repo), load_rules(py_repo)).evaluate(bash("make test")).kind == "ask", "a changed file is untrusted"
    assert untrust_project(py_repo) is True


def test_missing_rules_file_given_explicitly(tmp_path: Path, py_repo: Path) -> None:
    with pytest.raises(ConfigError, match="rules file not found"):
        load_rules(py_repo, tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("pattern", "words", "expected"),
    [
        ("pytest *", ["pytest"], True),
        ("pytest *", ["pytest", "-q", "tests"], True),
        ("git status", ["git", "status"], True),
        ("git status", ["git", "status", "-s"], False),
        ("git push *", ["git", "pull"], False),
        ("python -m pytest *", ["python", "-m", "pytest", "-x"], True),
        ("npm run test*", ["npm", "run", "test:unit"], True),
        ("*", ["rm", "-rf", "/"], True),
    ],
)
def test_command_patterns(pattern: str, words: list[str], expected: bool) -> None:
    assert command_matches(pattern, words) is expected


def test_dynamic_words_only_match_a_trailing_star() -> None:
    assert command_matches("git status", ["git", "status"], [False, True]) is False
    assert command_matches("echo *", ["echo", "$X"], [False, True]) is True


@pytest.mark.parametrize(
    ("pattern", "rel", "expected"),
    [
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "src/docs/a.md", False),
        ("*.lock", "a/b/poetry.lock", True),
        ("docs", "docs/x.md", True),
        ("docs/", "docs/x.md", True),
        ("./calc.py", "calc.py", True),
        ("./calc.py", "sub/calc.py", False),
        ("src/*.py", "src/a/b.py", False),
        ("**/test_*.py", "tests/test_a.py", True),
        ("[ab].txt", "b.txt", True),
    ],
)
def test_gitignore_style_paths(pattern: str, rel: str, expected: bool) -> None:
    assert path_matches(pattern, rel, "/repo/" + rel) is expected


def test_absolute_and_home_patterns() -> None:
    assert path_matches("/usr/include/**", None, "/usr/include/stdio.h")
    assert path_matches("~/notes/**", None, "/home/p/notes/a.md", home="/home/p")
    assert not path_matches("docs/**", None, "/elsewhere/docs/a.md")
