"""Fixtures for the approval tests: a real git repository with symlinks pointing out of it, a
fake home folder holding secret stores, and the rules the table is written against."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, parse_rules
from frogtui.approval.rules import combine
from frogtui.tools.workspace import Workspace

TABLE_RULES = """
[tools]
Read = "allow"
Bash = "ask"

[bash]
read_only = false   # the table is about rules; the read-only default has its own (test_policy_effects.py)

[[rules]]
tool = "Bash"
match = "pytest *"
decision = "allow"

[[rules]]
tool = "Bash"
match = "git status"
decision = "allow"

[[rules]]
tool = "Bash"
match = "git diff *"
decision = "allow"

[[rules]]
tool = "Bash"
match = "git push *"
decision = "deny"

[[rules]]
tool = "Bash"
match = "ls *"
decision = "allow"

[[rules]]
tool = "Bash"
match = "cat *"
decision = "allow"

[[rules]]
tool = "Bash"
match = "echo *"
decision = "allow"

[[rules]]
tool = "Write"
match = "docs/**"
decision = "allow"

[[rules]]
tool = "Read"
match = "secrets/**"
decision = "deny"
"""


def make_home(base: Path) -> Path:
    """A home folder with the usual secret stores under ``base``."""
    folder = base / "home" / "person"
    for store in (".ssh", ".aws", ".config/gh", ".gnupg", ".local/share/keyrings"):
        (folder / store).mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (folder / ".aws" / "credentials").write_text("[default]\n")
    (folder / ".netrc").write_text("machine x login y password z\n")
    (folder / ".bashrc").write_text("# rc\n")
    return folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with the usual secret stores, set as $HOME."""
    folder = make_home(tmp_path)
    monkeypatch.setenv("HOME", str(folder))
    return folder


def make_repo(tmp_path: Path, home: Path) -> Path:
    """A git repository with docs/, secrets/, a sub folder, and symlinks that lead outside."""
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "secrets").mkdir()
    (root / "sub").mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "docs" / "guide.md").write_text("# guide\n")
    (root / "secrets" / "key.txt").write_text("k\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    os.symlink(outside, root / "link_out")
    os.symlink(home / ".ssh" / "id_rsa", root / "sshlink")
    subprocess.run(
        ["git", "init", "-q", str(root)],
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return root


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
    return make_repo(tmp_path, home)


def make_engine(repo: Path, tmp_path: Path, home: Path, rules_text: str = TABLE_RULES) -> PolicyEngine:
    """The policy for ``repo`` under ``rules_text`` (TABLE_RULES), with a private temp folder
    outside the repo."""
    tmp_dir = tmp_path / "session-tmp"
    tmp_dir.mkdir()
    rules = combine(parse_rules(rules_text, "table-rules.toml"), None)
    return PolicyEngine(Workspace(repo, tmp_dir=tmp_dir), rules, home=str(home))


@pytest.fixture
def engine(repo: Path, tmp_path: Path, home: Path) -> PolicyEngine:
    return make_engine(repo, tmp_path, home)


@pytest.fixture(scope="module")
def table_engine(tmp_path_factory: pytest.TempPathFactory) -> PolicyEngine:
    """One engine for a whole module of read-only checks (the policy table): the home folder is
    given to the engine, so $HOME is not needed."""
    base = tmp_path_factory.mktemp("table")
    home = make_home(base)
    return make_engine(make_repo(base, home), base, home)
