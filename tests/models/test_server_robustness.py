"""The server backend when things go wrong: tool-call history over several steps, prompts longer
than the server's context, a server that dies mid-stream, cancel before the first token."""
from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from frogtui.errors import ContextOverflowError, ModelError
from frogtui.models import load_model
from frogtui.protocol import TurnEnd
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS
from tests.models.conftest import make_config, server_env, start_llama_server


def history(steps: int) -> list[dict[str, Any]]:
    """A Leaf conversation: assistant turns with JSON-string arguments and reasoning, tool results."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "List the files."}]
    for step in range(1, steps + 1):
        calls = [{"id": f"c{step}_{n}", "type": "function",
                  "function": {"name": "Glob", "arguments": json.dumps({"pattern": f"src/**/*{n}.py"})}} for n in range(2)]
        messages.append({"role": "assistant", "content": "", "reasoning_content": f"Step {step}.", "tool_calls": calls})
        messages += [{"role": "tool", "tool_call_id": c["id"], "content": f"  src/a{step}.py\n\n"} for c in calls]
    return messages


@pytest.mark.slow
def test_tool_call_history_is_accepted_over_several_steps(llama_server: str) -> None:
    model = load_model(llama_server, make_config())
    for steps in (1, 3):
        items = list(model.stream_turn(history(steps), TOOL_SCHEMAS, max_tokens=4, cancel=threading.Event()))
        assert isinstance(items[-1], TurnEnd) and items[-1].finish_reason in ("stop", "length")
    model.close()


@pytest.mark.slow
def test_prompt_over_the_servers_context_is_a_clear_error_and_the_next_turn_works(llama_server: str) -> None:
    model = load_model(llama_server, make_config())
    too_long = [{"role": "user", "content": "word " * 3000}]  # the fixture server has n_ctx 2048
    with pytest.raises(ModelError, match="ended the stream before the turn finished.*exceeds its n_ctx"):
        list(model.stream_turn(too_long, [], max_tokens=4, cancel=threading.Event()))
    # the server dropped the kept-alive connection: the next request retries on a new one
    items = list(model.stream_turn([{"role": "user", "content": "Hi"}], [], max_tokens=3, cancel=threading.Event()))
    assert items[-1].finish_reason in ("stop", "length")
    model.close()


@pytest.mark.slow
def test_cancel_before_the_first_token(llama_server: str) -> None:
    model = load_model(llama_server, make_config())
    prompt = [{"role": "user", "content": "Summarize: " + " ".join(f"item{i}" for i in range(150))}]
    cancel = threading.Event()
    threading.Timer(0.05, cancel.set).start()
    started = time.perf_counter()
    items = list(model.stream_turn(prompt, [], max_tokens=200, cancel=cancel))
    assert items[-1].finish_reason == "cancelled" and time.perf_counter() - started < 0.6
    model.close()


@pytest.fixture()
def doomed_server(
    smollm2_gguf: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    log = tmp_path / "server.log"
    proc, url = start_llama_server(smollm2_gguf, log, "--n_ctx", "512", "--n_threads", "1", env=server_env(tmp_path_factory))
    yield url, proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


@pytest.mark.slow
def test_server_dying_mid_stream_is_a_clear_model_error(doomed_server: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, proc = doomed_server
    model = load_model(url, make_config())
    # a first turn teaches the backend that this server puts no reasoning in content (until then
    # content is held back until </think> or the end of the turn)
    list(model.stream_turn([{"role": "user", "content": "Say hi."}], [], max_tokens=8, cancel=threading.Event()))
    assert model.raw_reasoning is False
    stream = model.stream_turn(
        [{"role": "user", "content": "Tell a very long story about frogs."}], [], max_tokens=400, cancel=threading.Event()
    )
    assert isinstance(next(stream), str)
    proc.kill()
    with pytest.raises(ModelError, match=r"dropped the stream|ended the stream before the turn finished"):
        list(stream)
    with pytest.raises(ModelError, match="cannot reach the model server"):
        list(model.stream_turn([{"role": "user", "content": "Hi"}], [], max_tokens=3, cancel=threading.Event()))
    model.close()


class LlamaServerRefusal(http.server.BaseHTTPRequestHandler):
    """Answers like llama-server when the prompt exceeds its context (its documented 400 body)."""

    def do_GET(self) -> None:
        body = {"data": [{"id": "frognano"}]} if self.path.endswith("/models") else {"default_generation_settings": {"n_ctx": 4096}}
        self._send(200, body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self._send(
            400,
            {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 5000,
                    "n_ctx": 4096,
                    "message": "the request exceeds the available context size, try increasing it",
                }
            },
        )

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def test_http_400_for_a_too_long_prompt_is_a_context_overflow() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LlamaServerRefusal)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = load_model(f"http://127.0.0.1:{server.server_address[1]}/v1", make_config())
        assert model.context_size == 4096  # read from /props
        with pytest.raises(ContextOverflowError, match="exceeds the available context size"):
            list(model.stream_turn(history(1), TOOL_SCHEMAS, max_tokens=4, cancel=threading.Event()))
        model.close()
    finally:
        server.shutdown()


class OneChunkThenHangUp(http.server.BaseHTTPRequestHandler):
    """Streams one chunk, waits until the test says so, then closes the connection mid-turn."""

    hang_up = threading.Event()

    def do_GET(self) -> None:
        LlamaServerRefusal._send(self, 200, {"data": [{"id": "frognano"}]})  # type: ignore[arg-type]

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for text in ("<think>\nHm", ".</think>\n\nHello", " there, and more words."):
            chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()
        self.hang_up.wait(10)
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        pass


def test_a_stream_cut_after_the_model_was_closed_ends_the_turn_with_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream's reader thread asked a closed client whether the server was still there
    (``Cannot send a request, as the client has been closed``): the thread died with a traceback
    and the turn waited for a line that never came."""
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), OneChunkThenHangUp)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = load_model(f"http://127.0.0.1:{server.server_address[1]}/v1", make_config())
        turn = model.stream_turn([{"role": "user", "content": "Hi"}], [], max_tokens=4, cancel=threading.Event())
        next(turn)  # the first text
        model.close()
        OneChunkThenHangUp.hang_up.set()
        ended: list[BaseException] = []

        def finish() -> None:
            try:
                list(turn)
            except ModelError as err:
                ended.append(err)

        reader = threading.Thread(target=finish, daemon=True)
        reader.start()
        reader.join(8)
        assert not reader.is_alive(), "the turn never ended"
        assert [type(e) for e in ended] == [ModelError] and "dropped the stream" in str(ended[0]), ended
        assert died == [], [f"{d.exc_type.__name__}: {d.exc_value}" for d in died]
    finally:
        server.shutdown()
