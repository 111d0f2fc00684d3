"""Model specs and files (bad files, no network, quant picking), ``frogtui run`` end to end with
SmolLM2, ``frogtui doctor``."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from frogtui import doctor, headless
from frogtui.errors import ModelLoadError
from frogtui.models import buffers, load_model
from frogtui.models import threads as threads_module
from frogtui.models.gguf_spec import pick_gguf, read_gguf_header
from frogtui.models.threads import (
    available_cpus,
    busy_elsewhere,
    cpu_time,
    default_threads,
    idle_cpus,
    others_busy,
    physical_cores,
)
from tests.models.conftest import make_config


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d, src: d / "missing.gguf", "model file not found"),
        (lambda d, src: (d / "text.gguf").write_text("hello") and d / "text.gguf", "is not a GGUF file"),
        (lambda d, src: (d / "cut.gguf").write_bytes(src.read_bytes()[:200_000]) and d / "cut.gguf", "cannot load"),
        (lambda d, src: (d / "head.gguf").write_bytes(src.read_bytes()[:40]) and d / "head.gguf", "truncated or corrupt"),
        (lambda d, src: (d / "dir.gguf").mkdir() or d / "dir.gguf", "is a folder"),
        (lambda d, src: (d / "mmproj-F16.gguf").write_bytes(src.read_bytes()) and d / "mmproj-F16.gguf", "vision projector"),
    ],
)
@pytest.mark.slow
def test_bad_model_files_give_one_clear_line(make, message, tmp_path: Path, dense_gguf: Path) -> None:
    path = make(tmp_path, dense_gguf)
    with pytest.raises(ModelLoadError, match=message) as info:
        load_model(str(path), make_config())
    assert "\n" not in str(info.value)


def test_hf_spec_without_network_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelLoadError, match="not in the Hugging Face cache and HF_HUB_OFFLINE is set"):
        load_model("hf:someone/Some-Model-GGUF:IQ2_M", make_config())
    with socket.socket() as sock:  # a port nobody listens on: connection refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(ModelLoadError, match="no connection to the Hugging Face Hub"):
        load_model("hf:someone/Some-Model-GGUF:IQ2_M", make_config())
    with pytest.raises(ModelLoadError, match="expected hf:OWNER/REPO"):
        load_model("hf:not-a-repo", make_config())


def test_quant_picking() -> None:
    files = ["README.md", "m-Q4_K_M.gguf", "m-Q4_K_M_L.gguf", "m-IQ2_M.gguf", "mmproj-m-Q4_K_M.gguf",
             "big/m-Q8_0-00002-of-00002.gguf", "big/m-Q8_0-00001-of-00002.gguf"]
    assert pick_gguf(files, "q4_k_m") == ["m-Q4_K_M.gguf"]
    assert pick_gguf(files, "IQ2_M") == ["m-IQ2_M.gguf"]
    assert pick_gguf(files, "Q8_0") == ["big/m-Q8_0-00001-of-00002.gguf", "big/m-Q8_0-00002-of-00002.gguf"]
    with pytest.raises(ModelLoadError, match=r"no Q3_K_S GGUF .*available: .*IQ2_M"):
        pick_gguf(files, "Q3_K_S")


def _config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[sampling]\nseed = 3\n[llama]\nn_ctx = 2048\n")
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))


@pytest.mark.slow
def test_frogtui_run_with_a_local_gguf(
    py_repo: Path, smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _config_file(tmp_path, monkeypatch)
    trajectory = tmp_path / "t.json"
    code = headless.main(
        ["What is the capital of France?", "--repo", str(py_repo), "--model", str(smollm2_gguf), "--trajectory", str(trajectory)]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip()
    assert "n_ctx 2048" in err and "exit_reason=agent" in err
    data = json.loads(trajectory.read_text())
    assert data["exit_reason"] == "agent"


def test_frogtui_run_with_a_bad_model_exits_2(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x.gguf").write_text("not a model")
    assert headless.main(["hi", "--repo", str(py_repo), "--model", str(tmp_path / "x.gguf")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a GGUF file" in err


@pytest.mark.slow
def test_doctor_reports_the_setup(
    py_repo: Path, smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (py_repo / ".frogtui.toml").write_text("")
    monkeypatch.chdir(py_repo)
    assert doctor.main(["--repo", str(py_repo)]) == 1  # the default hf: model is not downloaded here
    out = capsys.readouterr().out
    assert "llama-cpp-python: 0." in out and "GPU offload:" in out
    assert "threads: " in out and " generating, " in out and " batch (defaults; " in out
    assert "not downloaded yet" in out
    assert "bubblewrap:" in out
    assert "git identity: Test Person <test@example.invalid>" in out
    assert f"repository rules: {py_repo / '.frogtui.toml'} (in force)" in out
    assert "user rules:" in out and "(none)" in out
    assert "sessions: " in out
    config = py_repo / "config.toml"
    config.write_text(f'model = "{smollm2_gguf}"\n')
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))
    assert doctor.main(["--repo", str(py_repo)]) == 0
    out = capsys.readouterr().out
    assert f"(on disk: {smollm2_gguf})" in out
    # which path llama.cpp's weights take on this CPU, tried both ways, with the speed of each: on
    # here, off where they crash (AMX; simulated in the next test), as remembered for later loads
    (line,) = [line for line in out.splitlines() if "extra weight buffers" in line]
    kept = buffers.remembered(buffers.machine_key(read_gguf_header(smollm2_gguf, {"general.file_type"})["general.file_type"]))
    if kept:
        assert line.startswith("✓ llama.cpp extra weight buffers: auto: on; with them ") and " tok/s, without " in line
    else:
        assert kept is False and line.startswith("✓ llama.cpp extra weight buffers: auto: off; with them crashed: was killed by ")
        assert " tok/s" in line


@pytest.mark.slow
def test_doctor_says_when_the_extra_buffers_crash_this_cpu(
    py_repo: Path, smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "extra-buffers-probe")  # an AMX machine's crash, simulated
    config = py_repo / "config.toml"
    config.write_text(f'model = "{smollm2_gguf}"\n')
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))
    assert doctor.main(["--repo", str(py_repo)]) == 0
    (buffers,) = [line for line in capsys.readouterr().out.splitlines() if "extra weight buffers" in line]
    assert buffers.startswith("✓ llama.cpp extra weight buffers: auto: off; with them crashed: was killed by SIGSEGV, without ")
    config.write_text(f'model = "{smollm2_gguf}"\n[llama]\nextra_buffers = true\n')
    assert doctor.main(["--repo", str(py_repo)]) == 1  # forced on where they crash: a run would die
    (buffers,) = [line for line in capsys.readouterr().out.splitlines() if "extra weight buffers" in line]
    assert buffers.startswith("✗ llama.cpp extra weight buffers: on (set in [llama])")


def test_doctor_with_a_local_model_path(
    py_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))
    missing = tmp_path / "nowhere" / "model.gguf"
    config.write_text(f'model = "{missing}"\n')
    assert doctor.main(["--repo", str(py_repo)]) == 1
    assert f"model: {missing} (file not found)" in capsys.readouterr().out
    bad = tmp_path / "model.gguf"
    bad.write_text("not a model")
    config.write_text(f'model = "{bad}"\n')
    assert doctor.main(["--repo", str(py_repo)]) == 1
    assert "is not a GGUF file" in capsys.readouterr().out


@pytest.mark.slow
def test_loading_a_local_gguf_imports_no_download_stack(dense_gguf: Path) -> None:
    from tests.test_cli import modules_after

    code = (
        "from frogtui.config import Config, LlamaSettings\nfrom frogtui.models import load_model\n"
        f"load_model({str(dense_gguf)!r}, Config(llama=LlamaSettings(n_ctx=4096)), report=lambda line: None).close()"
    )
    loaded = modules_after(code)
    assert "llama_cpp" not in loaded  # llama.cpp runs in the model's own process, never in frogtui's
    assert not loaded & {"httpx", "huggingface_hub", "tqdm"}


@pytest.mark.slow
def test_generation_and_batch_threads_are_set_apart_and_shown(dense_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], py_repo: Path) -> None:
    lines: list[str] = []
    model = load_model(str(dense_gguf), make_config(n_ctx=4096, n_threads=1, n_threads_batch=2), report=lines.append)
    try:
        facts = model.inspect()
        assert (facts["n_threads"], facts["n_threads_batch"]) == (1, 2)
        assert "threads 1 generating/2 batch" in lines[-1]
    finally:
        model.close()
    assert default_threads(busy=0.0) == (physical_cores(), available_cpus())  # a quiet machine: all of it
    assert default_threads(busy=99.0) == (1, 1)  # every CPU busy: more threads would wait on each other
    assert default_threads(4, 8, busy=99.0) == (4, 8)  # what [llama] sets is kept
    assert idle_cpus(4, 1.4) == 3 and idle_cpus(4, 1.6) == 2 and idle_cpus(2, 0.3) == 2
    default = load_model(str(dense_gguf), make_config(n_ctx=4096), report=lines.append)
    try:
        facts = default.inspect()
        assert 1 <= facts["n_threads"] <= physical_cores() and facts["n_threads"] <= facts["n_threads_batch"] <= available_cpus()
    finally:
        default.close()
    config = tmp_path / "config.toml"
    config.write_text("[llama]\nn_threads = 3\nn_threads_batch = 5\n")
    monkeypatch.setenv("FROGTUI_CONFIG", str(config))
    doctor.main(["--repo", str(py_repo)])
    assert "threads: 3 generating, 5 batch (set in [llama];" in capsys.readouterr().out


@pytest.mark.timing
def test_threads_count_other_processes_busy_not_this_one() -> None:
    """The defaults are capped by what other processes use now, not by the load average, which
    counted frogtui's own start-up and picked 1 thread of 2 on a quiet machine."""
    # this process's own time is left out: 2 of 4 CPU-seconds used, 1.5 of them by this process
    assert others_busy((0, 0, 0), (200, 400, 150), cpus=2) == pytest.approx(0.25)
    assert others_busy((10, 10, 5), (10, 10, 5), cpus=2) == 0.0  # no time passed
    assert others_busy((0, 0, 0), (100, 400, 150), cpus=2) == 0.0  # never below zero
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        assert busy_elsewhere(0.3) >= 0.5  # another process spinning takes about one CPU
    finally:
        spinner.kill()
        spinner.wait()
    done = threading.Event()

    def spin() -> None:
        while not done.is_set():
            pass

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        before, after = threads_module._jiffies(), None
        time.sleep(0.3)
        after = threads_module._jiffies()
    finally:
        done.set()
        thread.join()
    assert before is not None and after is not None
    assert after[2] - before[2] >= 10  # this process's spinning thread is read as its own time (utime, stime)


def test_threads_count_only_the_cpus_this_process_may_use() -> None:
    """Under ``taskset`` or a container's cpuset the CPUs counted busy are this process's CPUs, not
    the machine's: a process spinning on a CPU this one may not use leaves it all free, one spinning
    on its CPU leaves it none (machine-wide, both read as half a CPU busy on 2 CPUs)."""
    stat = ["cpu  1000 0 0 1000 0 0 0 0 0 0", "cpu0 1000 0 0 0 0 0 0 0 0 0", "cpu1 0 0 0 1000 0 0 0 0 0 0", "intr 1"]
    assert cpu_time(stat, {1}) == (0, 1000) and cpu_time(stat, {0}) == (1000, 1000)
    assert cpu_time(stat, None) == (1000, 2000) == cpu_time(stat, {4, 5})  # the machine's line (lxcfs renumbers)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return
    mine, other, original = cpus[0], cpus[1], set(cpus)

    def busy_with_spinner_on(cpu: int) -> float:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
        try:
            time.sleep(0.2)
            return busy_elsewhere(0.4)
        finally:
            spinner.kill()
            spinner.wait()

    os.sched_setaffinity(0, {mine})
    try:
        if busy_elsewhere(0.3) > 0.3:
            pytest.skip("other processes keep this CPU busy: a spinner elsewhere cannot be told apart")
        elsewhere, here = busy_with_spinner_on(other), busy_with_spinner_on(mine)
    finally:
        os.sched_setaffinity(0, original)
    assert here - elsewhere >= 0.5, (here, elsewhere)
