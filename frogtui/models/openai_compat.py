"""OpenAI-compatible chat servers (llama-server, vLLM, SGLang, Ollama, ``python -m llama_cpp.server``).

Spec: ``http(s)://HOST:PORT/v1[#MODEL]``. Requests stream (``/chat/completions``) with the Leaf
tools, the FrogNano sampling settings and ``chat_template_kwargs.enable_thinking``. Structured
``tool_calls`` deltas become ``ToolCall`` objects; otherwise the raw content goes to the core's
parser. Reasoning comes back three ways, and the text yielded is made uniform for the parser
(``opens_reasoning`` is False: reasoning is always yielded inside ``<think>…</think>``):

* split by the server (``reasoning_content`` or ``reasoning`` deltas): wrapped in the tags;
* raw, after a generation prompt that already opened ``<think>`` (content holds ``…</think>``):
  an opening ``<think>`` is yielded first. Until the first turn shows which, content is held back
  until ``</think>`` or the end of the turn;
* none (thinking off or a model without it): content as is.

The context size is read from ``/props`` (llama-server) or ``max_model_len`` in ``/models`` (vLLM).
Errors are one clear line; a request is retried only before any token streamed.
"""
from __future__ import annotations

import dataclasses
import json
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from frogtui.config import Config, Sampling
from frogtui.errors import ContextOverflowError, ModelError, ModelLoadError
from frogtui.protocol import ModelItem, ToolCall, TurnEnd, Usage

RETRIES = 2
RETRY_STATUS = {502, 503, 504}
_CONTEXT_WORDS = ("context length", "context size", "maximum context", "context_length_exceeded", "exceed_context_size", "too many tokens")


def _timeout() -> httpx.Timeout:
    return httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=10.0)


class OpenAICompatModel:
    """A model served over the OpenAI chat API. Build it with ``from_spec``."""

    opens_reasoning = False

    def __init__(self, base_url: str, model: str, *, sampling: Sampling, context_size: int | None, client: httpx.Client) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = f"{model.rstrip('/').rsplit('/', 1)[-1]} @ {self.base_url}"
        self.sampling = sampling
        self.context_size = context_size
        self.client = client
        self.raw_reasoning: bool | None = None
        """Whether this server returns reasoning inside content (learned from the first turn)."""
        self.last_total_tokens = 0
        self.owns_client = True

    @classmethod
    def from_spec(cls, spec: str, config: Config, *, report: Callable[[str], None] | None = None) -> OpenAICompatModel:
        """Connect, pick the model (``#MODEL`` or the server's first) and read the context size.

        ``report`` receives a progress line while connecting.

        Raises:
            ModelLoadError: bad URL, server unreachable, or it lists no model.
        """
        url, _, wanted = spec.partition("#")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ModelLoadError(f"bad server URL {url!r}: expected http(s)://HOST:PORT/v1[#MODEL]")
        if report is not None:
            report(f"connecting to {url}…")
        client = httpx.Client(timeout=_timeout())
        base = url.rstrip("/")
        try:
            listing = _get_json(client, f"{base}/models")
        except ModelError as err:
            client.close()
            raise ModelLoadError(str(err)) from None
        entries = [e for e in (listing.get("data") or []) if isinstance(e, dict) and e.get("id")]
        if wanted:
            model = wanted
        elif entries:
            model = str(entries[0]["id"])
        else:
            client.close()
            raise ModelLoadError(f"{base}/models lists no model; name one with {url}#MODEL")
        entry = next((e for e in entries if e["id"] == model), entries[0] if entries else {})
        context = entry.get("max_model_len") or (entry.get("meta") or {}).get("n_ctx")
        if not context:
            root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
            try:
                props = _get_json(client, f"{root}/props")
                context = (props.get("default_generation_settings") or {}).get("n_ctx") or props.get("n_ctx")
            except ModelError:
                context = None
        return cls(base, model, sampling=config.sampling, context_size=int(context) if context else None, client=client)

    def with_seed(self, seed: int) -> OpenAICompatModel:
        """The same server and model for another conversation, sampling with ``seed`` (the
        connection is shared; the copy's ``close`` leaves it open). Copies may stream at once:
        the server batches their requests."""
        copy = OpenAICompatModel(self.base_url, self.model, sampling=dataclasses.replace(self.sampling, seed=seed),
                                 context_size=self.context_size, client=self.client)
        copy.raw_reasoning = self.raw_reasoning
        copy.owns_client = False
        return copy

    def close(self) -> None:
        if self.owns_client:
            self.client.close()

    # the protocol -------------------------------------------------------------------
    def stream_turn(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[ModelItem]:
        """Stream one assistant turn from the server (see the module docstring for reasoning).

        Raises:
            ContextOverflowError: the server says the prompt is too long, or the previous turn
                already filled the known context.
            ModelError: connection or HTTP error, or a malformed stream.
        """
        if self.context_size and self.last_total_tokens >= self.context_size:
            raise ContextOverflowError(f"the conversation uses {self.last_total_tokens} of the server's {self.context_size} context tokens")
        s = self.sampling
        body: dict[str, Any] = {
            "model": self.model, "messages": messages, "tools": tools, "stream": True, "max_tokens": max_tokens,
            "temperature": s.temperature, "top_p": s.top_p, "top_k": s.top_k, "min_p": s.min_p,
            "repeat_penalty": s.repeat_penalty, "repetition_penalty": s.repeat_penalty,
            "chat_template_kwargs": {"enable_thinking": True}, "stream_options": {"include_usage": True},
        }
        if s.seed is not None:
            body["seed"] = s.seed
        started = time.perf_counter()
        turn = _TurnState(self.raw_reasoning)
        for line in self._stream_lines(body, cancel):
            yield from turn.take_line(line)
        if not cancel.is_set() and not turn.ended:
            raise ModelError(
                f"the server at {self.base_url} ended the stream before the turn finished (no finish_reason); "
                "its log says why (llama_cpp.server does this when the prompt exceeds its n_ctx)"
            )
        yield from turn.finish()
        if turn.saw_content and not turn.saw_reasoning:
            self.raw_reasoning = turn.raw_reasoning
        elif turn.saw_reasoning:
            self.raw_reasoning = False
        usage = turn.usage(started)
        self.last_total_tokens = usage.prompt_tokens + usage.generated_tokens
        finish = "cancelled" if cancel.is_set() else ("length" if turn.finish_reason == "length" else "stop")
        yield TurnEnd(finish, usage)  # type: ignore[arg-type]

    def _stream_lines(self, body: dict[str, Any], cancel: threading.Event) -> Iterator[str]:
        """The response's lines, read by a worker thread so that cancel ends the turn within
        about 50 ms even while the server is silent: servers (llama-server, llama_cpp.server) send
        nothing until the prompt is evaluated, which can take minutes, and a blocked socket read
        does not wake up when another thread closes the response. On cancel the connection is
        shut down (the server sees the client leave) and the lines stop.

        Raises:
            ModelError: the request failed, or the stream was cut.
        """
        lines: queue.Queue[tuple[str, Any]] = queue.Queue()
        opened: list[httpx.Response] = []

        def pump() -> None:
            try:
                response = self._open_stream(body, cancel)
                opened.append(response)
                try:
                    for line in response.iter_lines():
                        if cancel.is_set():
                            break
                        lines.put(("line", line))
                finally:
                    response.close()
                lines.put(("end", None))
            except (httpx.StreamError, httpx.TransportError) as err:
                dropped = f"the server at {self.base_url} dropped the stream ({err or type(err).__name__})"
                lines.put(("error", ModelError(self._after_a_drop(dropped))))
            except ModelError as err:  # ContextOverflowError included
                lines.put(("error", err))
            except Exception as err:  # noqa: BLE001 - whatever it is, the turn ends with it instead of waiting for a line
                lines.put(("error", ModelError(f"reading the stream from {self.base_url} failed: {type(err).__name__}: {err}")))

        threading.Thread(target=pump, name="frogtui-stream", daemon=True).start()
        while True:
            try:
                kind, value = lines.get(timeout=0.05)
            except queue.Empty:
                kind, value = "wait", None
            if cancel.is_set():
                for response in opened:
                    _shut_down(response)
                return
            if kind == "line":
                yield value
            elif kind == "end":
                return
            elif kind == "error":
                raise value

    def _open_stream(self, body: dict[str, Any], cancel: threading.Event) -> Any:
        """Open the streaming response, retrying connection failures and 502/503/504 (nothing streamed yet)."""
        url = f"{self.base_url}/chat/completions"
        hung_up: Exception | None = None
        for attempt in range(RETRIES + 1):
            try:
                response = self.client.send(self.client.build_request("POST", url, json=body), stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as err:
                # nothing streamed yet, so a retry is safe; a kept-alive connection the server
                # dropped (after a failed stream) fails this way on first use
                if not isinstance(err, (httpx.ConnectError, httpx.ConnectTimeout)):
                    hung_up = err  # the server took the request and closed the connection
                if attempt == RETRIES or cancel.is_set():
                    if hung_up is not None:
                        closed = f"the server at {self.base_url} closed the connection on the request ({hung_up})"
                        raise ModelError(self._after_a_drop(closed)) from None
                    raise ModelError(f"cannot reach the model server at {self.base_url}: {err}") from None
                cancel.wait(0.5 * (attempt + 1))
                continue
            except httpx.TransportError as err:
                raise ModelError(f"request to the model server at {self.base_url} failed: {err}") from None
            if response.status_code == 200:
                return response
            text = response.read().decode("utf-8", errors="replace")
            response.close()
            if response.status_code in RETRY_STATUS and attempt < RETRIES and not cancel.is_set():
                cancel.wait(0.5 * (attempt + 1))
                continue
            message = _error_message(text)
            if response.status_code in (400, 413) and any(w in message.lower() for w in _CONTEXT_WORDS):
                raise ContextOverflowError(f"the server refused the prompt: {message}")
            raise ModelError(f"the model server answered HTTP {response.status_code}: {message}")
        raise ModelError(f"the model server at {self.base_url} is unavailable")


    def _after_a_drop(self, what: str) -> str:
        """``what`` happened to a request: the one line that says it, and whether the server is
        still there (asked of ``/models`` at once): a server that no longer answers most likely
        crashed on the request, and its own log says why."""
        if self.client.is_closed:  # frogtui closed it (the model was closed mid-turn): nothing to ask
            return f"{what}; frogtui had closed its connection to the server"
        try:
            alive = self.client.get(f"{self.base_url}/models", timeout=3.0).status_code < 500
        except httpx.TransportError:
            alive = False
        if alive:
            return f"{what}; it still answers, so the connection was cut (a proxy, a time-out) or the request failed: its log says why"
        return (f"{what} and no longer answers: it most likely crashed on this request; its log (the terminal you started it "
                "in) says why. llama.cpp servers crash this way on some CPUs: docs/MODELS.md, \"A server that dies\"")


class _TurnState:
    """Turns the server's stream chunks into text and tool calls for one turn."""

    def __init__(self, raw_reasoning: bool | None) -> None:
        self.raw_reasoning = raw_reasoning
        self.saw_reasoning = False
        self.in_reasoning = False
        self.saw_content = False
        self.held = ""
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason = "stop"
        self.ended = False
        """A ``finish_reason`` or ``[DONE]`` arrived (a stream that stops without either was cut)."""
        self.server_usage: dict[str, Any] = {}
        self.timings: dict[str, Any] = {}
        self.first: float | None = None
        self.chunks = 0

    def take_line(self, line: str) -> Iterator[str]:
        line = line.strip()
        if not line.startswith("data:"):
            return
        data = line[5:].strip()
        if data == "[DONE]":
            self.ended = True
            return
        try:
            chunk = json.loads(data)
        except json.JSONDecodeError:
            return
        try:
            yield from self._take_chunk(chunk)
        except (AttributeError, TypeError, ValueError) as err:  # a field of the wrong shape
            raise ModelError(f"the model server sent a malformed chunk ({type(err).__name__}: {err}): {data[:200]}") from None

    def _take_chunk(self, chunk: dict[str, Any]) -> Iterator[str]:
        if "error" in chunk and not chunk.get("choices"):
            raise ModelError(f"the model server reported an error: {_error_message(json.dumps(chunk))}")
        self.server_usage = chunk.get("usage") or self.server_usage
        self.timings = chunk.get("timings") or self.timings
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                yield from self._text(reasoning, reasoning=True)
            if delta.get("content"):
                yield from self._text(delta["content"], reasoning=False)
            for call in delta.get("tool_calls") or []:
                yield from self._close_reasoning()
                slot = self.calls.setdefault(int(call.get("index", len(self.calls))), {"id": "", "name": "", "arguments": ""})
                function = call.get("function") or {}
                slot["id"] = call.get("id") or slot["id"]
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
                self._mark_token()
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
                self.ended = True

    def _mark_token(self) -> None:
        self.chunks += 1
        self.first = self.first or time.perf_counter()

    def _text(self, text: str, *, reasoning: bool) -> Iterator[str]:
        self._mark_token()
        if reasoning:
            self.saw_reasoning = True
            if not self.in_reasoning:
                self.in_reasoning = True
                yield "<think>"
            yield text
            return
        yield from self._close_reasoning()
        if self.saw_reasoning:
            yield text
            return
        if not self.saw_content:
            self.saw_content = True
            if self.raw_reasoning:
                yield "<think>"
        if self.raw_reasoning is None:
            self.held += text
            if "</think>" in self.held:
                self.raw_reasoning = "<think>" not in self.held.split("</think>")[0]
                held, self.held = self.held, ""
                yield ("<think>" if self.raw_reasoning else "") + held
            return
        yield text

    def _close_reasoning(self) -> Iterator[str]:
        if self.in_reasoning:
            self.in_reasoning = False
            yield "</think>"

    def finish(self) -> Iterator[ModelItem]:
        yield from self._close_reasoning()
        if self.held:
            self.raw_reasoning = False
            yield self.held
            self.held = ""
        for index in sorted(self.calls):
            slot = self.calls[index]
            try:
                arguments = json.loads(slot["arguments"]) if slot["arguments"].strip() else {}
                error = None if isinstance(arguments, dict) else "ValueError: tool-call arguments must be a JSON object"
            except json.JSONDecodeError as err:
                arguments, error = {}, f"ValueError: tool-call arguments are not valid JSON ({err.msg})"
            arguments = arguments if isinstance(arguments, dict) else {}
            yield ToolCall(id=slot["id"], name=slot["name"], arguments=arguments, raw=slot["arguments"], error=error)

    def usage(self, started: float) -> Usage:
        u, t = self.server_usage, self.timings
        prompt = int(u.get("prompt_tokens") or 0) or int(t.get("prompt_n", 0)) + int(t.get("cache_n", 0))
        cached = int((u.get("prompt_tokens_details") or {}).get("cached_tokens") or t.get("cache_n") or 0)
        generated = int(u.get("completion_tokens") or t.get("predicted_n") or self.chunks)
        end = time.perf_counter()
        speed = float(t.get("predicted_per_second") or 0.0)
        if not speed and self.first is not None and generated > 1 and end > self.first:
            speed = (generated - 1) / (end - self.first)
        return Usage(
            prompt_tokens=prompt,
            evaluated_tokens=max(prompt - cached, 0),
            cached_tokens=cached,
            generated_tokens=generated,
            ttft_s=(self.first - started) if self.first else 0.0,
            gen_tok_s=speed,
        )


def _shut_down(response: httpx.Response) -> None:
    """Shut the response's socket down, which wakes a read blocked on it in another thread."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed


def _get_json(client: httpx.Client, url: str) -> dict[str, Any]:
    try:
        response = client.get(url)
    except httpx.TransportError as err:
        raise ModelError(f"cannot reach the model server at {url}: {err or type(err).__name__}") from None
    if response.status_code != 200:
        raise ModelError(f"{url} answered HTTP {response.status_code}: {_error_message(response.text)}")
    try:
        data = response.json()
    except json.JSONDecodeError:
        raise ModelError(f"{url} did not answer JSON: is this an OpenAI-compatible server?") from None
    return data if isinstance(data, dict) else {}


def _error_message(text: str) -> str:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return " ".join(text.split())[:300] or "(no message)"
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        return str(error.get("message") or error.get("detail") or error)[:300]
    return str(error)[:300]
