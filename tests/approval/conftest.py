"""Fixtures for the approval tests: a real git repository with symlinks pointing out of it, a
fake home folder holding secret stores, and the rules the table is written against."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, parse_rules
from frogtui.approval.rules import combine
from frogtui.tools.workspace import Workspace
from tests.support import git

TABLE_RULES = """
[tools]
Read = "allow"
Bash = "ask"

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


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with the usual secret stores, set as $HOME."""
    folder = tmp_path / "home" / "person"
    for store in (".ssh", ".aws", ".config/gh", ".gnupg", ".local/share/keyrings"):
        (folder / store).mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (folder / ".aws" / "credentials").write_text("[default]\n")
    (folder / ".netrc").write_text("machine x login y password z\n")
    (folder / ".bashrc").write_text("# rc\n")
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def repo(tmp_path: Path, home: Path) -> Path:
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
    git(root, "init", "-q")
    return root


@pytest.fixture
def engine(repo: Path, tmp_path: Path, home: Path) -> PolicyEngine:
    """The policy for ``repo`` under TABLE_RULES, with a private temp folder outside the repo."""
    tmp_dir = tmp_path / "session-tmp"
    tmp_dir.mkdir()
    rules = combine(parse_rules(TABLE_RULES, "table-rules.toml"), None)
    return PolicyEngine(Workspace(repo, tmp_dir=tmp_dir), rules, home=str(home))
