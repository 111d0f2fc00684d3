"""``frogtui eval mine`` on a repository with a known bug-fix commit, and the shipped example set."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from frogtui.config import load_config
from frogtui.eval.check import check_prediction
from frogtui.eval.cli import main as eval_main
from frogtui.eval.examples import make_examples
from frogtui.eval.mine import is_test_path, read_report
from frogtui.eval.tasks import load_tasks
from frogtui.vcs.clones import CheckoutFailed, clone_at
from tests.eval.support import read_jsonl
from tests.support import git

FAST_PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider {tests}"


@pytest.fixture
def history_repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose history holds one bug fix with its test (and commits that make no task);
    returns it and the fix's sha."""
    repo = tmp_path / "shapes"
    repo.mkdir()
    (repo / "area.py").write_text("def square(side):\n    return side * 2\n\n\ndef rect(w, h):\n    return w * h\n")
    (repo / "test_area.py").write_text("from area import rect\n\n\ndef test_rect():\n    assert rect(2, 3) == 6\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "area: first version")
    (repo / "area.py").write_text("def square(side):\n    return side * side\n\n\ndef rect(w, h):\n    return w * h\n")
    (repo / "test_area.py").write_text("from area import rect, square\n\n\ndef test_rect():\n    assert rect(2, 3) == 6\n\n\n"
                                       "def test_square():\n    assert square(3) == 9\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "square() doubles instead of squaring\n\nFixes #4: square(3) returned 6.")
    fix = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README").write_text("shapes\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "readme")
    return repo, fix


def test_mine_makes_a_task_whose_gold_patch_resolves_it_and_whose_base_does_not(history_repo, tmp_path: Path, capsys) -> None:
    repo, fix = history_repo
    tasks_file = tmp_path / "mined.jsonl"
    assert eval_main(["mine", str(repo), "--last", "5", "--output", str(tasks_file), "--test-cmd", FAST_PYTEST]) == 0
    err = capsys.readouterr().err
    assert "no task: changes no tests" in err and "1 task(s) from the last 5 commit(s)" in err
    (record,) = read_jsonl(tasks_file)
    assert record["instance_id"] == f"shapes-{fix[:12]}" and record["base_commit"] == git(repo, "rev-parse", f"{fix}~1").strip()
    assert record["problem_statement"] == "square() doubles instead of squaring\n\nFixes #4: square(3) returned 6."
    assert json.loads(record["FAIL_TO_PASS"]) == ["test_area.py::test_square"]
    assert json.loads(record["PASS_TO_PASS"]) == ["test_area.py::test_rect"]
    assert "area.py" in record["patch"] and "test_area.py" not in record["patch"]
    assert "test_area.py" in record["test_patch"] and "area.py b/area.py" not in record["test_patch"]
    (task,), _ = load_tasks(tasks_file)
    config = load_config()
    base = check_prediction(task, repo, "", config, tmp_path / "base-check", test_cmd="")
    assert not base.resolved and base.failure == "tests_fail" and base.fail_to_pass_failed == ["test_area.py::test_square"]
    assert eval_main([str(tasks_file), "--gold", "--out", str(tmp_path / "gold")]) == 0
    (result,) = read_jsonl(tmp_path / "gold" / "results.jsonl")
    assert result["resolved"] is True and result["exit_reason"] == "gold"
    assert "resolved 1 of 1 checked" in capsys.readouterr().err


def test_a_task_clone_holds_the_base_and_its_history_and_nothing_after_it(history_repo, tmp_path: Path) -> None:
    repo, fix = history_repo
    base = git(repo, "rev-parse", f"{fix}~1").strip()
    clone = clone_at(repo, tmp_path / "clone", base[:10])
    assert git(clone, "rev-parse", "HEAD").strip() == base and git(clone, "status", "--porcelain") == ""
    assert git(clone, "log", "--all", "--format=%s").splitlines() == ["area: first version"]
    assert subprocess.run(["git", "cat-file", "-e", fix], cwd=clone).returncode != 0, "the fix is not one git command away"
    assert git(clone, "for-each-ref") == "" and git(clone, "remote") == "", "no branch, tag or remote"
    with pytest.raises(CheckoutFailed, match="is not in"):
        clone_at(repo, tmp_path / "other", "0" * 40)


def test_what_counts_as_a_test_and_how_pytest_reports_are_read() -> None:
    assert all(map(is_test_path, ["tests/test_a.py", "test_b.py", "pkg/a_test.py", "conftest.py", "src/testing/x.py"]))
    assert not any(map(is_test_path, ["src/attest.py", "contest.py", "docs/latest.md"]))
    report = ("PASSED test_a.py::test_one\nFAILED test_a.py::test_two - assert 1 == 2\nERROR test_b.py - ImportError: x\n"
              "ERROR test_c.py::test_x[a - b] - boom\n")
    assert read_report(report) == {"test_a.py::test_one": "PASSED", "test_a.py::test_two": "FAILED", "test_c.py::test_x[a - b]": "ERROR"}


@pytest.mark.slow  # four pytest runs in the sandbox; test_eval_server.py covers the same path with a faster test runner
def test_the_shipped_examples_run_end_to_end_with_their_replay(tmp_path: Path, capsys) -> None:
    tasks = make_examples(tmp_path / "examples")
    assert eval_main(["example", str(tmp_path / "examples")]) == 2  # not an empty folder: one line, nothing lost
    assert "is not empty" in capsys.readouterr().err
    out = tmp_path / "out"
    assert eval_main([str(tasks), "--model", f"replay:{tasks.parent / 'replay.jsonl'}", "--out", str(out)]) == 0
    results = {r["instance_id"]: r for r in read_jsonl(out / "results.jsonl")}
    assert {i: (r["resolved"], r["failure"]) for i, r in results.items()} == {
        "example__median-1": (True, None), "example__slug-1": (False, "tests_fail"), "example__clamp-1": (False, "no_patch")}
    assert "resolved 1 of 3 checked" in capsys.readouterr().err
