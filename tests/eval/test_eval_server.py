"""``frogtui eval`` end to end against a scripted OpenAI-compatible server: three tasks on a real
repository (a right fix, a wrong fix, no change), the local check in the sandbox, the outputs, a
rerun, workers, a kill -9 and SIGTERM mid-run."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from frogtui.eval.cli import main as eval_main
from tests.approval.test_sandbox import needs_bwrap
from tests.eval.support import SCRIPTS, ScriptedServer, make_calc_repo, read_jsonl, start_eval, task_record, write_tasks
from tests.support import git


@pytest.fixture
def calc_tasks(tmp_path: Path) -> tuple[Path, Path, str]:
    """(tasks.jsonl, the repository, its base commit): calc-add, calc-mul, calc-neg."""
    repo, base = make_calc_repo(tmp_path / "repos")
    tasks = write_tasks(tmp_path / "tasks.jsonl", [task_record(name, repo, base) for name in ("add", "mul", "neg")])
    return tasks, repo, base


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    yield scripted
    scripted.close()


def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``frogtui eval ARGS`` in this process (faster than a new interpreter): (exit status, stderr)."""
    status = eval_main(list(args))
    return status, capsys.readouterr().err


def applies_to_base(repo: Path, base: str, patch: str, where: Path) -> bool:
    git(repo.parent, "clone", "-q", str(repo), str(where))
    git(where, "checkout", "-q", "--detach", base)
    if not patch:
        return True
    (where.parent / "p.diff").write_text(patch)
    return subprocess.run(["git", "apply", "--check", str(where.parent / "p.diff")], cwd=where).returncode == 0


def test_three_tasks_give_predictions_results_and_a_summary_of_one_of_three(calc_tasks, server, tmp_path: Path, capsys) -> None:
    tasks, repo, base = calc_tasks
    out = tmp_path / "out"
    status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out))
    assert status == 0, stderr
    preds = read_jsonl(out / "preds.jsonl")
    assert [p["instance_id"] for p in preds] == ["calc-add", "calc-mul", "calc-neg"]
    assert all(set(p) == {"instance_id", "model_name_or_path", "model_patch"} for p in preds)
    assert all(p["model_name_or_path"] == server.url for p in preds)
    for n, pred in enumerate(preds):
        assert applies_to_base(repo, base, pred["model_patch"], tmp_path / f"apply{n}"), pred
    assert "a + b" in preds[0]["model_patch"] and "a * a" in preds[1]["model_patch"] and preds[2]["model_patch"] == ""
    results = {r["instance_id"]: r for r in read_jsonl(out / "results.jsonl")}
    assert [i for i, r in results.items() if r["resolved"]] == ["calc-add"]
    assert results["calc-mul"]["failure"] == "tests_fail" and results["calc-mul"]["fail_to_pass_failed"] == ["test_mul.py::test_mul"]
    assert results["calc-neg"]["failure"] == "no_patch"
    add = results["calc-add"]
    assert add["exit_reason"] == "agent" and add["steps"] == 2 and add["tokens_generated"] == 40 and add["tokens_evaluated"] == 250
    assert add["gate"] == {"allowed": {"edit": 1}, "denied": {}, "denied_by": {}}
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["resolved"], summary["checked"], summary["tasks"]) == (1, 3, 3)
    assert summary["failures"] == {"tests_fail": 1, "no_patch": 1}
    assert summary["interval_95"][0] < 1 / 3 < summary["interval_95"][1]
    assert "resolved 1 of 3 checked (33.3%, 95% interval 6.1-79.2%)" in stderr
    statements = {json.loads(line)["instance_id"]: json.loads(line)["problem_statement"] for line in tasks.read_text().splitlines()}
    for name, statement in statements.items():  # one Leaf trajectory per task; the statement is the first user message
        trajectory = json.loads((out / "trajectories" / f"{name}.json").read_text())
        assert trajectory["trajectory_format"] == "leaf-function-calling"
        assert trajectory["messages"][1] == {"role": "user", "content": statement}
    assert list((out / "checkouts").iterdir()) == [], "the throwaway clones are removed"
    assert git(repo, "status", "--porcelain") == "" and git(repo, "rev-parse", "HEAD").strip() == base

    # a rerun continues: everything is done, so no model is even asked
    posts, gets = len(server.posts), server.gets
    status, again = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out))
    assert status == 0, again
    assert (len(server.posts), server.gets) == (posts, gets)
    assert "3 done already, 0 to run" in again and "resolved 1 of 3 checked" in again
    assert len(read_jsonl(out / "results.jsonl")) == 3 and len(read_jsonl(out / "preds.jsonl")) == 3


def test_workers_send_requests_at_once(calc_tasks, tmp_path: Path, capsys) -> None:
    tasks, _, _ = calc_tasks
    server = ScriptedServer(barrier=3)  # the first turns are answered only once all three are in flight
    try:
        status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(tmp_path / "out"), "--workers", "3")
    finally:
        server.close()
    assert status == 0, stderr
    assert server.max_inflight == 3
    results = read_jsonl(tmp_path / "out" / "results.jsonl")
    assert sorted(r["instance_id"] for r in results if r["resolved"]) == ["calc-add"] and len(results) == 3


def test_kill_9_mid_run_then_a_rerun_completes_the_set(calc_tasks, tmp_path: Path, capsys) -> None:
    tasks, _, _ = calc_tasks
    out = tmp_path / "out"
    server = ScriptedServer(hold="calc-mul")
    try:
        proc = start_eval(str(tasks), "--model", server.url, "--out", str(out))
        try:
            assert server.held.wait(60), "the second task never asked the model"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
        assert [r["instance_id"] for r in read_jsonl(out / "results.jsonl")] == ["calc-add"]
        server.release.set()
        before = len(server.posts)
        status, again = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out))
    finally:
        server.close()
    assert status == 0, again
    assert "1 done already, 2 to run" in again
    assert {task for task, _ in server.posts[before:]} == {"calc-mul", "calc-neg"}, "the finished task is not asked again"
    results = read_jsonl(out / "results.jsonl")
    assert sorted(r["instance_id"] for r in results) == ["calc-add", "calc-mul", "calc-neg"]
    assert sorted(p["instance_id"] for p in read_jsonl(out / "preds.jsonl")) == ["calc-add", "calc-mul", "calc-neg"]
    assert list((out / "checkouts").iterdir()) == [], "the killed run's clone was cleared when its task was redone"


def test_sigterm_stops_cleanly_and_keeps_what_finished(calc_tasks, tmp_path: Path) -> None:
    tasks, _, _ = calc_tasks
    out = tmp_path / "out"
    server = ScriptedServer(hold="calc-mul")
    try:
        proc = start_eval(str(tasks), "--model", server.url, "--out", str(out))
        try:
            assert server.held.wait(60)
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    finally:
        server.close()
    assert proc.returncode == 1, stderr
    assert "SIGTERM: stopping" in stderr and "1 attempt(s) finished and recorded, 2 left for a rerun" in stderr
    assert [r["instance_id"] for r in read_jsonl(out / "results.jsonl")] == ["calc-add"]
    assert [p["instance_id"] for p in read_jsonl(out / "preds.jsonl")] == ["calc-add"]
    assert json.loads((out / "summary.json").read_text())["resolved"] == 1
    assert list((out / "checkouts").iterdir()) == []


def test_attempts_give_pass_at_k_and_a_prediction_file_per_attempt(calc_tasks, server, tmp_path: Path, capsys) -> None:
    tasks, _, _ = calc_tasks
    out = tmp_path / "out"
    status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out), "--attempts", "2", "--ids", "calc-add")
    assert status == 0, stderr
    results = read_jsonl(out / "results.jsonl")
    assert sorted((r["instance_id"], r["attempt"], r["resolved"]) for r in results) == [("calc-add", 1, True), ("calc-add", 2, True)]
    assert results[0]["seed"] != results[1]["seed"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pass_at"] == {"1": 1.0, "2": 1.0}
    for k in (1, 2):
        assert (out / "trajectories" / f"calc-add.attempt-{k}.json").is_file()
        assert [p["instance_id"] for p in read_jsonl(out / f"preds.attempt-{k}.jsonl")] == ["calc-add"]
    assert [p["instance_id"] for p in read_jsonl(out / "preds.jsonl")] == ["calc-add"]


def _outside_tmp_and_home() -> Path | None:
    """A writable folder neither under /tmp nor under the home folder (the sandbox hides both
    anyway, so a test there would prove nothing)."""
    home = str(Path.home())
    for candidate in ("/srv", "/opt", "/mnt", "/var/lib"):
        if os.access(candidate, os.W_OK) and not candidate.startswith((home, "/tmp")):
            return Path(candidate)
    return None


@needs_bwrap
def test_the_model_cannot_read_the_task_set_the_source_repository_or_the_results(tmp_path: Path, capsys, monkeypatch) -> None:
    parent = _outside_tmp_and_home()
    if parent is None:
        pytest.skip("no writable folder outside /tmp and the home folder")
    base_dir = Path(tempfile.mkdtemp(prefix="frogtui-eval-test-", dir=parent))
    server = ScriptedServer()
    try:
        repo, base = make_calc_repo(base_dir / "repos")
        tasks = base_dir / "tasks.jsonl"
        out = base_dir / "out"
        (repo / "MARK.txt").write_text("SOURCE-VISIBLE\n")
        peek = f"cat {tasks}; cat {repo}/MARK.txt; cat {out}/results.jsonl; echo done"
        monkeypatch.setitem(SCRIPTS, "calc-peek", [{"calls": [("Bash", {"command": peek})]}, {"content": "Looked."}])
        write_tasks(tasks, [task_record("add", repo, base),
                            {**task_record("neg", repo, base), "instance_id": "calc-peek", "problem_statement": "calc-peek: look around"}])
        status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out))
        assert status == 0, stderr
        assert '"resolved": true' in (out / "results.jsonl").read_text(), "the results were there to read"
        trajectory = json.loads((out / "trajectories" / "calc-peek.json").read_text())
        seen = trajectory["steps"][0]["observations"][0]["observation"]
        assert "done" in seen
        assert "calc-add: add(2, 3)" not in seen, "the task set is hidden"
        assert "SOURCE-VISIBLE" not in seen, "the source repository is hidden"
        assert '"resolved"' not in seen, "the run's results are hidden"
    finally:
        server.close()
        shutil.rmtree(base_dir, ignore_errors=True)


def test_a_run_past_timeout_is_timed_out_and_a_model_error_is_redone_by_a_rerun(calc_tasks, tmp_path: Path, capsys) -> None:
    tasks, _, _ = calc_tasks
    out = tmp_path / "out"
    server = ScriptedServer(hold="calc-add", fail="calc-mul")
    try:
        status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out), "--ids", "calc-add,calc-mul",
                                    "--timeout", "1")
        assert status == 0, stderr
        results = {r["instance_id"]: r for r in read_jsonl(out / "results.jsonl")}
        assert results["calc-add"]["failure"] == "timed_out" and results["calc-add"]["exit_reason"] == "cancelled"
        assert results["calc-mul"]["failure"] == "model_error" and "scripted failure" in results["calc-mul"]["why"]
        server.fail = None
        status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out), "--ids", "calc-add,calc-mul")
    finally:
        server.close()
    assert status == 0, stderr
    assert "1 done already, 1 to run" in stderr, "the model error is redone, the timed-out run is the model's own"
    results = {r["instance_id"]: r for r in read_jsonl(out / "results.jsonl")}
    assert results["calc-mul"]["failure"] == "tests_fail" and results["calc-add"]["failure"] == "timed_out"


@pytest.mark.slow  # a real GGUF in its own process
def test_a_local_gguf_runs_the_attempts_one_after_another_each_with_its_seed(calc_tasks, tmp_path: Path, capsys, tiny_gguf: Path) -> None:
    tasks, _, _ = calc_tasks
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "frogtui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[limits]\nmax_tokens_per_turn = 8\n[llama]\nn_ctx = 16384\n[sampling]\nseed = 11\n")
    out = tmp_path / "out"
    status, stderr = in_process(capsys, str(tasks), "--model", str(tiny_gguf), "--out", str(out), "--workers", "3", "--max-steps", "2")
    assert status == 0, stderr
    assert "--workers 3: this model decodes one conversation at a time, so attempts run one after another" in stderr
    results = read_jsonl(out / "results.jsonl")
    assert sorted(r["instance_id"] for r in results) == ["calc-add", "calc-mul", "calc-neg"]
    assert all(r["tokens_generated"] > 0 and r["tokens_evaluated"] > 0 for r in results), results
    assert len({r["seed"] for r in results}) == 3 and all(r["failure"] for r in results)


def test_approve_none_denies_the_edit_and_the_failure_says_the_gate_denied(calc_tasks, server, tmp_path: Path, capsys) -> None:
    tasks, _, _ = calc_tasks
    out = tmp_path / "out"
    status, stderr = in_process(capsys, str(tasks), "--model", server.url, "--out", str(out), "--ids", "calc-add", "--approve", "none")
    assert status == 0, stderr
    (result,) = read_jsonl(out / "results.jsonl")
    assert result["failure"] == "gate_denied" and result["resolved"] is False
    assert result["gate"] == {"allowed": {}, "denied": {"edit": 1}, "denied_by": {"mode": 1}}
    assert "unresolved: 1 gate_denied" in stderr
