"""llama.cpp runs in a process of its own (``models/local.py``, ``models/runner.py``): a native crash
there is one ``ModelError`` line, frogtui (and this test session) goes on, the next turn starts the
model again, the process never outlives frogtui, and extra weight buffers that crash a CPU are
turned off once and remembered. Real GGUFs, real processes, real signals."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from frogtui.config import Config, LlamaSettings
from frogtui.errors import ModelError, ModelLoadError
from frogtui.models import buffers, load_model
from frogtui.models.local import LocalModel, describe_exit
from frogtui.protocol import TurnEnd
from tests.models.conftest import load_local

STORY = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Write a long story about a frog."},
]


def gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
            return True  # a zombie: dead, waiting for its parent to read its status
        time.sleep(0.05)
    return False


def maps(pid: int | str, path: Path) -> bool:
    return str(path) in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.slow
def test_sigsegv_while_generating_is_one_line_and_the_next_turn_starts_the_model_again(smollm2_gguf: Path) -> None:
    model = load_local(smollm2_gguf, n_ctx=2048)
    try:
        first_pid = model.pid
        assert first_pid is not None and maps(first_pid, smollm2_gguf)
        assert not maps("self", smollm2_gguf)  # frogtui's own process never maps the model
        stream = model.stream_turn(STORY, [], max_tokens=4000, cancel=threading.Event())
        assert isinstance(next(stream), str)
        os.kill(first_pid, signal.SIGSEGV)
        with pytest.raises(ModelError) as caught:
            list(stream)
        line = str(caught.value)
        assert "\n" not in line and "SIGSEGV" in line and "while generating" in line
        assert "the model starts again when it is next asked" in line
        assert model.pid is None and gone(first_pid)
        again = list(model.stream_turn(STORY, [], max_tokens=8, cancel=threading.Event()))
        assert isinstance(again[-1], TurnEnd) and again[-1].finish_reason in ("stop", "length")
        assert "".join(x for x in again if isinstance(x, str))
        assert model.pid not in (None, first_pid)
    finally:
        model.close()


@pytest.mark.slow
def test_a_turn_left_unread_is_ended_and_the_process_ends_on_close(dense_gguf: Path) -> None:
    model = load_local(dense_gguf, n_ctx=4096)
    stream = model.stream_turn([{"role": "user", "content": "hi"}], [], max_tokens=500, cancel=threading.Event())
    next(stream)
    stream.close()  # the caller stops reading: its text must not become the next turn's
    items = list(model.stream_turn([{"role": "user", "content": "hi"}], [], max_tokens=3, cancel=threading.Event()))
    assert isinstance(items[-1], TurnEnd) and items[-1].usage.generated_tokens <= 3
    pid = model.pid
    model.close()
    assert pid is not None and gone(pid)


@pytest.mark.slow
def test_the_model_process_never_outlives_frogtui(dense_gguf: Path, tmp_path: Path) -> None:
    code = (
        "import sys\nfrom frogtui.config import Config, LlamaSettings\nfrom frogtui.models import load_model\n"
        f"m = load_model({str(dense_gguf)!r}, Config(llama=LlamaSettings(n_ctx=2048)), report=lambda line: None)\n"
        "print(m.pid, flush=True)\nsys.stdin.read()\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert not gone(child, timeout=0.2)
    parent.kill()  # SIGKILL: frogtui gets no chance to clean up
    parent.wait()
    assert gone(child), "the model's process outlived frogtui"


@pytest.mark.slow
def test_extra_buffers_that_crash_the_probe_are_turned_off_said_and_remembered(
    dense_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "extra-buffers-probe")  # this CPU's repacked kernels segfault (simulated)
    lines: list[str] = []
    model = LocalModel.from_spec(str(dense_gguf), Config(llama=LlamaSettings(n_ctx=2048)), report=lines.append)
    try:
        assert model.info is not None and model.info.extra_buffers is False
        said = [line for line in lines if "extra weight buffers" in line]
        assert len(said) == 2 and "crashed" in said[0] and "SIGSEGV" in said[0] and "off" in said[0]
        assert said[1].endswith("extra weight buffers off")  # the load summary says it too
        items = list(model.stream_turn([{"role": "user", "content": "hi"}], [], max_tokens=4, cancel=threading.Event()))
        assert isinstance(items[-1], TurnEnd)
    finally:
        model.close()
    store = json.loads(buffers.store_path().read_text())
    (entry,) = store.values()
    assert entry["extra_buffers"] is False and "SIGSEGV" in entry["reason"]
    # the next load on this build and CPU asks no probe (the fault would crash it again) and says why once
    lines.clear()
    again = LocalModel.from_spec(str(dense_gguf), Config(llama=LlamaSettings(n_ctx=2048)), report=lines.append)
    again.close()
    assert again.info is not None and again.info.extra_buffers is False and again.info.probe_tok_s is None
    assert any("extra weight buffers are off on this CPU" in line for line in lines)
    # the setting wins over what was remembered
    forced = LocalModel.from_spec(str(dense_gguf), Config(llama=LlamaSettings(n_ctx=2048, extra_buffers=True)), report=lines.append)
    forced.close()
    assert forced.info is not None and forced.info.extra_buffers is True


@pytest.mark.slow
def test_a_probe_that_works_is_remembered_too(dense_gguf: Path) -> None:
    """This machine's answer, whichever it is (the buffers crash on AMX: the test above simulates it)."""
    model = load_model(str(dense_gguf), Config(llama=LlamaSettings(n_ctx=2048)), report=lambda line: None)
    model.close()
    assert isinstance(model, LocalModel) and model.info is not None
    (entry,) = json.loads(buffers.store_path().read_text()).values()
    assert entry["extra_buffers"] is model.info.extra_buffers
    if model.info.extra_buffers:
        assert (model.info.probe_tok_s or 0) > 0
    else:
        assert "SIGSEGV" in entry["reason"] or "killed by" in entry["reason"]


@pytest.mark.slow
def test_a_crash_while_loading_is_a_load_error_and_blames_no_buffers(dense_gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FROGTUI_RUNNER_FAULT", "segv-on-load")  # crashes whatever the buffers
    with pytest.raises(ModelLoadError) as caught:
        LocalModel.from_spec(str(dense_gguf), Config(llama=LlamaSettings(n_ctx=2048)), report=lambda line: None)
    assert str(caught.value).startswith("cannot load tiny-llama.gguf: the model's process (llama.cpp) was killed by SIGSEGV while loading")
    assert "\n" not in str(caught.value)
    store = buffers.store_path()
    assert not store.exists() or all(e["extra_buffers"] is not False for e in json.loads(store.read_text()).values())


def test_exits_are_named() -> None:
    assert describe_exit(-signal.SIGSEGV) == "was killed by SIGSEGV"
    assert describe_exit(1) == "exited with status 1"
    assert describe_exit(None) == "stopped answering"


@pytest.mark.slow
def test_closing_while_a_turn_streams_ends_it_at_once(smollm2_gguf: Path) -> None:
    model = load_local(smollm2_gguf, n_ctx=2048)
    pid = model.pid
    ended: list[object] = []
    first = threading.Event()

    def consume() -> None:
        try:
            for item in model.stream_turn(STORY, [], max_tokens=4000, cancel=threading.Event()):
                first.set()
                if isinstance(item, TurnEnd):
                    ended.append(item.finish_reason)
        except ModelError as err:
            ended.append(str(err))

    worker = threading.Thread(target=consume)
    worker.start()
    assert first.wait(30)
    started = time.monotonic()
    model.close()
    worker.join(10)
    assert not worker.is_alive() and ended and time.monotonic() - started < 2.0, ended
    assert pid is not None and gone(pid)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hybrid", "dense"])
def test_seeded_conversations_share_the_prefix_and_differ_by_seed(kind: str, hybrid_gguf: Path, dense_gguf: Path) -> None:
    from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS

    model = load_local(hybrid_gguf if kind == "hybrid" else dense_gguf, n_ctx=8192)
    task = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "Fix the failing test in src/."}]
    try:
        texts, usages = [], []
        for seed in (1, 2, 2):
            items = list(model.with_seed(seed).stream_turn(task, TOOL_SCHEMAS, max_tokens=12, cancel=threading.Event()))
            texts.append("".join(x for x in items if isinstance(x, str)))
            usages.append(items[-1].usage)
        first, second, third = usages
        assert first.evaluated_tokens == first.prompt_tokens > 1000
        for later in (second, third):  # the system prompt, tools and task were evaluated once
            assert later.prompt_tokens == first.prompt_tokens and later.evaluated_tokens <= 16, later  # the generation prompt
        assert texts[1] == texts[2]  # the same seed from the same cached prefix: the same sample (the seed reaches the sampler)
    finally:
        model.close()
