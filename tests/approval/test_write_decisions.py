"""``PolicyEngine.write_decisions``: the Write decisions a proposal's judgement takes for many
paths, each exactly what ``PolicyEngine.evaluate`` says of a Write of that path (decision, rule,
reason, floor), on a tree with every kind of link a path can go through."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine
from frogtui.approval.rules import RuleSet, combine, parse_rules
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace
from tests.support import git

RULES = {
    "defaults": "",
    "mixed": '[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n'
             '[[rules]]\ntool = "Write"\nmatch = "*.pem"\ndecision = "deny"\n'
             '[[rules]]\ntool = "Write"\nmatch = "docs/*.md"\ndecision = "ask"\n'
             '[[rules]]\ntool = "Write"\nmatch = "./top.txt"\ndecision = "allow"\n'
             '[[rules]]\ntool = "Write"\nmatch = "~/elsewhere/**"\ndecision = "allow"\n',
    "everything": '[[rules]]\ntool = "Write"\nmatch = "**"\ndecision = "allow"\n',
}
PATHS = [
    "src/a.py", "src/new.py", "src/d/keep.txt", "src/d", "src/d/new/deeper/x.py", "docs/b.md", "docs/new.md", "top.txt",
    "src/docs-link/new.md", "src/docs-link", "src/ext/x", "src/ext", "src/out", "src/in", "src/loop1", "src/loop1/x",
    "src/dangling", "src/a.py/x", "src/key.pem", "src/d/server.pem", ".git/config", ".git", ".GIT/x", ".gitignore",
    ".pre-commit-config.yaml", "conf/rules.toml", "conf/other", "~", "~root/x", "~/x", "src/a\nb", "src/\u202eb",
    "src/./a.py", "src/../docs/b.md", "src//a.py", "", ".env", "src/.ssh/id_rsa", "node_modules/.bin/x", "new/x/y/z",
    "home-link/.ssh/id_rsa", "home-link/x", "etc-link/passwd", "dev-link/null", "root-link", "root-link/src/a.py",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "d").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "conf").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "src" / "d" / "keep.txt").write_text("keep\n")
    (root / "docs" / "b.md").write_text("# b\n")
    (root / "conf" / "rules.toml").write_text("")
    (tmp_path / "outside").mkdir()
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (root / "src" / "docs-link").symlink_to("../docs")
    (root / "src" / "ext").symlink_to(tmp_path / "outside")
    (root / "src" / "out").symlink_to("/etc/hostname")
    (root / "src" / "in").symlink_to("a.py")
    (root / "src" / "loop1").symlink_to("loop2")
    (root / "src" / "loop2").symlink_to("loop1")
    (root / "src" / "dangling").symlink_to("nowhere")
    (root / "home-link").symlink_to(tmp_path / "home")
    (root / "etc-link").symlink_to("/etc")
    (root / "dev-link").symlink_to("/dev")
    (root / "root-link").symlink_to(".")
    git(root, "init", "-q")
    return root


@pytest.mark.parametrize("rules", list(RULES))
def test_each_write_decision_is_exactly_what_evaluate_says(tree: Path, tmp_path: Path, rules: str) -> None:
    ruleset = combine(parse_rules(RULES[rules], "test"), None) if RULES[rules] else RuleSet()
    via = tmp_path / "via"
    via.symlink_to(tree)  # the repository reached through a link: its real path is what counts
    engine = PolicyEngine(Workspace(via), ruleset, home=str(tmp_path / "home"), rules_file=tree / "conf" / "rules.toml")
    assert engine.places.trusted, "the rules file inside the repository is one of frogtui's own files"
    writes = engine.write_decisions()
    for path in PATHS + PATHS:  # twice: the second time from what the first resolved
        expected = engine.evaluate(ToolCall(id="x", name="Write", arguments={"file_path": path, "content": ""}))
        assert writes.decide(path) == expected, path
    assert {writes.decide(p).kind for p in PATHS} >= ({"allow", "ask", "deny"} if rules != "defaults" else {"ask", "deny"})


def test_a_folder_that_changes_into_a_link_is_seen_by_the_next_judgement(tree: Path, tmp_path: Path) -> None:
    """What a folder resolves to is kept for one judgement (one ``write_decisions``), never longer."""
    engine = PolicyEngine(Workspace(tree), combine(parse_rules(RULES["everything"], "test"), None))
    assert engine.write_decisions().decide("src/d/keep.txt").kind == "allow"
    os.rename(tree / "src" / "d", tree / "src" / "d-was")
    (tree / "src" / "d").symlink_to(tmp_path / "outside")
    again = engine.write_decisions().decide("src/d/keep.txt")
    assert again.kind == "deny" and again.floor, again
