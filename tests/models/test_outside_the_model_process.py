"""What starts llama.cpp outside frogtui's model process (the tests' ``llama_cpp.server``,
``bench/overhead.py``'s raw and in-process sides) loads with the extra weight buffers frogtui
chose for this CPU, build and quantisation (issue 29, item 1).

A CPU whose repacked kernels crash (AMX, llama.cpp issue 20824) is simulated with
``FROGTUI_RUNNER_FAULT=extra-buffers-probe`` (``models/faults.py``): with it, a process whose
llama.cpp loaded with the buffers on dies of SIGSEGV at its first decode, as on such a CPU. On
this machine, without the fault, whichever path frogtui takes is checked against what it remembered."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from frogtui.config import Config, LlamaSettings
from frogtui.models import buffers
from frogtui.models.gguf_spec import read_gguf_header
from frogtui.models.local import extra_buffers_choice
from tests.models.conftest import start_llama_server, stop_server

ROOT = Path(__file__).resolve().parents[2]


def remembered_for(gguf: Path) -> bool | None:
    return buffers.remembered(buffers.machine_key(read_gguf_header(gguf, {"general.file_type"}).get("general.file_type")))


def chat(url: str) -> httpx.Response:
    return httpx.post(f"{url}/chat/completions", json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}, timeout=60)


def launcher_said(log: Path) -> str:
    (line,) = [line for line in log.read_text(errors="replace").splitlines() if "extra weight buffers" in line]
    return line


@pytest.mark.slow
def test_the_tests_server_takes_the_choice_where_the_buffers_crash(
    smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "extra-buffers-probe")
    # the simulation bites: llama_cpp.server with the buffers on dies on its first request, as on AMX
    proc, url = start_llama_server(smollm2_gguf, tmp_path / "on.log", "--extra-buffers", "on", "--n_ctx", "512", "--n_threads", "1")
    try:
        with pytest.raises(httpx.TransportError):
            chat(url)
        assert proc.wait(timeout=30) == -signal.SIGSEGV
    finally:
        stop_server(proc)
    # the way the tests start it (``llama_server``): frogtui's choice, found by its probe, remembered
    proc, url = start_llama_server(smollm2_gguf, tmp_path / "auto.log", "--n_ctx", "512", "--n_threads", "1")
    try:
        assert chat(url).status_code == 200 and chat(url).status_code == 200
        assert proc.poll() is None
    finally:
        stop_server(proc)
    assert launcher_said(tmp_path / "auto.log").endswith("extra weight buffers off (frogtui's choice for this CPU, build and quantisation)")
    assert remembered_for(smollm2_gguf) is False


@pytest.mark.slow
def test_the_tests_server_takes_this_machines_choice(smollm2_gguf: Path, tmp_path: Path) -> None:
    proc, url = start_llama_server(smollm2_gguf, tmp_path / "server.log", "--n_ctx", "512", "--n_threads", "1")
    try:
        assert chat(url).status_code == 200
    finally:
        stop_server(proc)
    taken = remembered_for(smollm2_gguf)  # either path: what the probe found on this CPU
    assert taken is not None
    said = launcher_said(tmp_path / "server.log")
    assert said.endswith(f"buffers {'on' if taken else 'off'} (frogtui's choice for this CPU, build and quantisation)")


def test_the_setting_decides_without_a_probe(smollm2_gguf: Path) -> None:
    for setting in (True, False):
        assert extra_buffers_choice(smollm2_gguf, Config(llama=LlamaSettings(extra_buffers=setting))) is setting
    assert not buffers.store_path().exists()


def test_the_launcher_needs_a_model_to_choose_for(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "frogtui.models.llama_server", "--port", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.strip() == (
        "frogtui.models.llama_server: --extra-buffers auto needs --model PATH.gguf (or give --extra-buffers on|off)"
    )


def overhead(gguf: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "overhead.py"), str(gguf), "--runs", "1", "--tokens", "4", "--n-ctx", "4096",
         "--threads", "1"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ),
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_the_overhead_bench_takes_the_choice_on_every_side(dense_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = overhead(dense_gguf)  # this machine: whichever path its probe found, on every side
    taken = remembered_for(dense_gguf)
    assert result["extra_buffers"] == {"process": taken, "inproc": taken, "raw": taken}
    buffers.store_path().unlink()
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "extra-buffers-probe")  # a CPU where they crash: the bench still measures
    result = overhead(dense_gguf)
    assert result["extra_buffers"] == {"process": False, "inproc": False, "raw": False}
    assert isinstance(result["process_vs_raw"], float) and result["raw_tok_s"] > 0
