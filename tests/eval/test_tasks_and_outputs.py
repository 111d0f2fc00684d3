"""Task sets (SWE-bench's format, both shapes of the test lists), shards, the summary's figures,
and the output folder's repair after a killed run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from frogtui.eval.cli import main as eval_main
from frogtui.eval.outputs import OutputBusy, OutputFolder
from frogtui.eval.summary import pass_at_k, summarize, wilson
from frogtui.eval.tasks import (
    TaskSetError,
    command_for_tests,
    load_tasks,
    parse_shard,
    parse_slice,
    safe_name,
    select,
    shard_of,
)
from tests.eval.support import read_jsonl, write_tasks
from tests.support import git

RECORD = {"instance_id": "o__r-1", "repo": "o/r", "base_commit": "abc0", "problem_statement": "fix it"}


def test_test_lists_are_read_as_json_strings_or_lists_and_bad_records_are_named(tmp_path: Path) -> None:
    tasks, problems = load_tasks(write_tasks(tmp_path / "t.jsonl", [
        {**RECORD, "FAIL_TO_PASS": '["t.py::a"]', "PASS_TO_PASS": "[]"},
        {**RECORD, "instance_id": "o__r-2", "FAIL_TO_PASS": ["t.py::b"], "PASS_TO_PASS": ["t.py::c"], "repo_path": "../r"},
        {**RECORD, "instance_id": "o__r-3", "FAIL_TO_PASS": "not json"},
        {**RECORD, "instance_id": "o__r-1"},
        {"instance_id": "o__r-5"},
        [1, 2],
        {**RECORD, "instance_id": "o__r-7", "base_commit": "--upload-pack=touch /tmp/x"},
    ]))
    assert [(t.instance_id, t.fail_to_pass, t.pass_to_pass) for t in tasks] == [
        ("o__r-1", ("t.py::a",), ()), ("o__r-2", ("t.py::b",), ("t.py::c",))]
    assert tasks[1].source(None) == tmp_path / "../r"
    assert tasks[0].source(tmp_path / "repos") == tmp_path / "repos" / "o__r"
    assert problems == [
        "task o__r-3 left out: FAIL_TO_PASS is a string that is not a JSON list",
        "task o__r-1 left out: a second task with this instance_id",
        "task o__r-5 left out: repo is missing or not a non-empty string",
        "task #6 left out: not a JSON object",
        "task o__r-7 left out: base_commit must be a commit id (4 to 64 hexadecimal digits)",
    ]
    # a .json file holding a list reads the same
    (tmp_path / "t.json").write_text(json.dumps([RECORD]))
    assert [t.instance_id for t in load_tasks(tmp_path / "t.json")[0]] == ["o__r-1"]
    with pytest.raises(TaskSetError, match="holds no usable task"):
        load_tasks(write_tasks(tmp_path / "bad.jsonl", [{"x": 1}]))
    with pytest.raises(TaskSetError, match="cannot read the tasks file"):
        load_tasks(tmp_path / "missing.jsonl")


def test_instance_ids_become_safe_distinct_file_names() -> None:
    assert safe_name("django__django-11099") == "django__django-11099"
    hostile = safe_name("../../etc/passwd")
    assert "/" not in hostile and hostile.startswith(".._.._etc_passwd-") and hostile != safe_name("..\\..\\etc\\passwd")
    assert safe_name("..") not in ("..", ".")


def test_test_ids_are_quoted_into_the_command() -> None:
    assert command_for_tests("pytest -q {tests}", ["a.py::t[x y]", "b;rm -rf /"]) == "pytest -q 'a.py::t[x y]' 'b;rm -rf /'"
    assert command_for_tests("./runtests.py", ["t1"]) == "./runtests.py t1"


def test_shards_split_the_ids_with_no_overlap_and_no_loss(tmp_path: Path) -> None:
    tasks, _ = load_tasks(write_tasks(tmp_path / "t.jsonl", [{**RECORD, "instance_id": f"o__r-{n}"} for n in range(200)]))
    for count in (1, 2, 3, 7):
        shares = [{t.instance_id for t in select(tasks, shard=(i, count))[0]} for i in range(1, count + 1)]
        assert sum(len(s) for s in shares) == 200 and set().union(*shares) == {t.instance_id for t in tasks}
        assert all(len(s) > 0 for s in shares)
    # stable: a share depends on the id alone, not on the order or the rest of the set
    assert {t.instance_id for t in select(tasks[::-1][:50], shard=(2, 3))[0]} <= {t.instance_id for t in select(tasks, shard=(2, 3))[0]}
    assert shard_of("o__r-7", 4) == shard_of("o__r-7", 4)
    assert [t.instance_id for t in select(tasks, pattern=r"-1\d$", part=parse_slice("2:4"))[0]] == ["o__r-12", "o__r-13"]
    assert [t.instance_id for t in select(tasks, part=parse_slice(":-198"))[0]] == ["o__r-0", "o__r-1"]
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/2", "3/2", "1", "a/b"):
        with pytest.raises(ValueError, match="I/N"):
            parse_shard(bad)


def test_shards_through_the_command_line_split_the_set(tmp_path: Path, py_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = git(py_repo, "rev-parse", "HEAD").strip()
    records = [{**RECORD, "instance_id": f"o__r-{n}", "base_commit": base, "repo_path": str(py_repo)} for n in range(6)]
    tasks = write_tasks(tmp_path / "t.jsonl", records)
    seen = []
    for share in ("1/2", "2/2"):
        assert eval_main([str(tasks), "--gold", "--shard", share, "--out", str(tmp_path / share.replace("/", "of"))]) == 0
        seen.append([p["instance_id"] for p in read_jsonl(tmp_path / share.replace("/", "of") / "preds.jsonl")])
    assert not set(seen[0]) & set(seen[1]) and sorted(seen[0] + seen[1]) == sorted(r["instance_id"] for r in records)
    assert all(seen), "each machine gets a share"
    capsys.readouterr()
    assert eval_main(["summary", str(tmp_path / "1of2"), str(tmp_path / "2of2" / "results.jsonl")]) == 0
    both = capsys.readouterr()
    assert json.loads(both.out)["tasks"] == 6 and "6 task(s) patch only" in both.err
    with pytest.raises(SystemExit) as exited:
        eval_main([str(tasks), "--gold", "--shard", "3/2"])
    assert exited.value.code == 2 and "argument --shard: must be I/N with 1 <= I <= N" in capsys.readouterr().err


def test_wilson_interval_and_pass_at_k() -> None:
    low, high = wilson(1, 3)
    assert round(low, 4) == 0.0615 and round(high, 4) == 0.7923
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(10, 10)[1] == 1.0 and wilson(0, 10)[0] == 0.0
    assert pass_at_k(4, 1, 1) == 0.25 and pass_at_k(4, 1, 4) == 1.0 and pass_at_k(4, 0, 2) == 0.0
    assert round(pass_at_k(4, 2, 2), 4) == round(1 - 1 / 6, 4)


def test_summary_counts_attempt_one_for_resolved_and_every_attempt_for_pass_at_k() -> None:
    rows = [
        {"instance_id": "a", "attempt": 1, "resolved": True, "failure": None},
        {"instance_id": "a", "attempt": 2, "resolved": False, "failure": "tests_fail"},
        {"instance_id": "b", "attempt": 1, "resolved": False, "failure": "no_patch"},
        {"instance_id": "b", "attempt": 2, "resolved": True, "failure": None},
        {"instance_id": "c", "attempt": 1, "resolved": None, "failure": None},
        {"instance_id": "c", "attempt": 2, "resolved": None, "failure": None},
    ]
    summary = summarize(rows, attempts=2)
    assert (summary["resolved"], summary["checked"], summary["patch_only"]) == (1, 2, 1)
    assert summary["pass_at"] == {"1": 0.5, "2": 1.0}
    assert summary["failures"] == {"no_patch": 1} and summary["unresolved"] == {"b": "no_patch"}


def test_a_killed_run_leaves_a_torn_line_and_stray_predictions_that_the_next_run_drops(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").write_text(json.dumps({"instance_id": "a", "attempt": 1, "failure": None}) + "\n" + '{"instance_id": "b", "att')
    (out / "preds.jsonl").write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": "m", "model_patch": ""}) + "\n"
                                             for i in ("a", "b")))
    (out / "checkouts" / "o__r-9.1.run" / "sub").mkdir(parents=True)
    folder = OutputFolder(out, 1)
    folder.open()
    assert list((out / "checkouts").iterdir()) == [], "a killed run's clones are removed"
    try:
        assert (out / "results.jsonl").read_text().count("\n") == 1 and folder.done() == {("a", 1)}
        assert [p["instance_id"] for p in read_jsonl(out / "preds.jsonl")] == ["a"]
        with pytest.raises(OutputBusy, match="another frogtui eval is writing"):
            OutputFolder(out, 1).open()
    finally:
        folder.close()
    # errors around the model are redone by a rerun; the model's own failures are not
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (
        {"instance_id": "a", "attempt": 1, "failure": "task_error"}, {"instance_id": "b", "attempt": 1, "failure": "tests_fail"})))
    assert OutputFolder(out, 1).done() == {("b", 1)}
    assert OutputFolder(out, 1).done(redo_existing=True) == set()
