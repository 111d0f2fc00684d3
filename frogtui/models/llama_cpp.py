"""Local GGUF models through llama-cpp-python (the only module that imports ``llama_cpp``).

This engine runs in the model's own process (``models/runner.py``), never in frogtui's: frogtui
talks to it through ``models/local.py``, so a crash in native code is an error, not a dead app.

Prompts come from the GGUF's own chat template (``prompt.ChatTemplate``); generation runs over tokens
with llama.cpp's low-level API and streams text into the core's parser. Between steps nothing is
re-evaluated: the ``Transcript`` keeps the tokens evaluated and sampled, and each step evaluates only
what the new messages add. Hybrid models (Qwen3.5: Gated DeltaNet plus attention) cannot cut their
recurrent state back, so it is checkpointed at user messages (``llama_state_seq_*_ext``, ``PARTIAL_ONLY``).
"""
from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import llama_cpp

from frogtui.config import Config, LlamaSettings, Sampling
from frogtui.errors import ContextOverflowError, ModelError, ModelLoadError
from frogtui.models.faults import crash, fault
from frogtui.models.gguf_spec import read_gguf_header, resolve_spec
from frogtui.models.prompt import ChatTemplate
from frogtui.models.saved_state import StateFolder, state_key
from frogtui.models.threads import thread_settings
from frogtui.models.tokens import TokenTextDecoder, tokenize_keeping_text
from frogtui.models.transcript import Transcript, common_prefix
from frogtui.protocol import ModelItem, TurnEnd, Usage

KV_CACHE_TYPES = {
    "f32": llama_cpp.GGML_TYPE_F32, "f16": llama_cpp.GGML_TYPE_F16,
    "q8_0": llama_cpp.GGML_TYPE_Q8_0, "q5_1": llama_cpp.GGML_TYPE_Q5_1, "q5_0": llama_cpp.GGML_TYPE_Q5_0,
    "q4_1": llama_cpp.GGML_TYPE_Q4_1, "q4_0": llama_cpp.GGML_TYPE_Q4_0, "iq4_nl": llama_cpp.GGML_TYPE_IQ4_NL,
}
PARTIAL_STATE = llama_cpp.LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY
END_OF_TURN = "<|im_end|>"
PROBE_TOOL = {
    "type": "function",
    "function": {"name": "frogtui_probe_tool", "description": "probe", "parameters": {"type": "object", "properties": {}, "required": []}},
}
"""A tool definition used to see whether a chat template shows tools to the model at all."""


def gpu_offload_supported() -> bool:
    """True when this llama-cpp-python build has a GPU backend (CUDA, Metal, Vulkan...)."""
    return bool(llama_cpp.llama_supports_gpu_offload())


def library_version() -> str:
    return str(llama_cpp.__version__)


def library_facts() -> dict[str, Any]:
    """What this build of llama.cpp can do here: GPU offload, and the CPU features it uses."""
    info = llama_cpp.llama_print_system_info()
    return {
        "version": library_version(), "gpu_offload": gpu_offload_supported(),
        "system_info": (info.decode("utf-8", errors="replace") if isinstance(info, bytes) else str(info)).strip(),
    }


@dataclass(frozen=True)
class Checkpoint:
    """The recurrent part of the model state after ``position`` tokens."""

    position: int
    data: Any  # ctypes byte array


@contextmanager
def extra_weight_buffers(on: bool) -> Iterator[None]:
    """Load with llama.cpp's extra weight buffers on or off (``--no-repack``).

    llama-cpp-python's ``Llama`` takes no argument for it, but builds its model parameters from
    ``llama_model_default_params`` while it loads: those are what is changed here, for the loads
    inside the block (this process loads one model at a time). Also for what loads llama.cpp outside
    the model's process with frogtui's choice (``models/llama_server.py``, the benches).
    """
    default = llama_cpp.llama_cpp.llama_model_default_params

    def with_choice() -> Any:
        params = default()
        params.use_extra_bufts = on
        return params

    llama_cpp.llama_cpp.llama_model_default_params = with_choice
    if on and fault("extra-buffers-probe") is not None:
        _decode_crashes()
    try:
        yield
    finally:
        llama_cpp.llama_cpp.llama_model_default_params = default


def _decode_crashes() -> None:
    """From now on a decode in this process is killed by SIGSEGV (``faults.py``: a CPU whose repacked
    kernels crash, simulated where llama.cpp decodes)."""
    def decode(*args: Any) -> int:
        crash("extra-buffers-probe")
        return -1

    llama_cpp.llama_cpp.llama_decode = decode


def usable_context(llm: llama_cpp.Llama) -> int:
    """Tokens the conversation may hold: llama.cpp may round ``n_ctx`` up, not the token buffer (``input_ids``)."""
    return min(llm.n_ctx(), len(llm.input_ids))


class LlamaCppModel:
    """A GGUF model behind ``frogtui.protocol.Model``.

    Build it with ``from_spec``. ``load_summary`` says what was chosen (context, GPU layers, flash
    attention, KV cache type, threads).
    """

    def __init__(self, llm: llama_cpp.Llama, path: Path, *, settings: LlamaSettings, sampling: Sampling, load_summary: str) -> None:
        self.llm = llm
        self.path = path
        self.settings = settings
        self.sampling = sampling
        self.load_summary = load_summary
        self.name = path.name
        self.gpu_offload = gpu_offload_supported()
        self.context_size: int | None = usable_context(llm)
        self.vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self._piece_buffer = ctypes.create_string_buffer(256)
        self.recurrent = bool(llama_cpp.llama_model_is_hybrid(llm.model) or llama_cpp.llama_model_is_recurrent(llm.model))
        template = llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelLoadError(f"{path} has no chat template (tokenizer.chat_template); frogtui needs one to build prompts")
        end_ids = llm.tokenize(END_OF_TURN.encode(), add_bos=False, special=True)
        self.end_of_turn_id = end_ids[0] if len(end_ids) == 1 else llm.token_eos()
        self.template = ChatTemplate(
            template,
            bos_token=self._token_text(llm.token_bos()),
            eos_token=self._token_text(llm.token_eos()),
            end_of_turn=self._token_text(self.end_of_turn_id),
        )
        self.add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        self.control_texts = self._control_token_texts()
        self.transcript = Transcript()
        self.checkpoints: list[Checkpoint] = []
        self.state_folder: StateFolder | None = None
        """Where the state is saved after each turn (``keep_state``; ``models/saved_state.py``)."""
        self.restored_tokens = 0
        """Tokens a saved state brought back (not evaluated again) in this process."""
        self._state_tried = False
        self.notes: list[str] = []
        """Lines for the person, said once (``take_notes``)."""
        try:
            self.opens_reasoning = self.template.generation_prompt({"role": "system", "content": ""}, None).endswith("<think>\n")
        except ModelError as err:
            raise ModelLoadError(f"{path}: {err}") from None

    # loading ------------------------------------------------------------------------
    @classmethod
    def from_spec(
        cls, spec: str, config: Config, *, report: Callable[[str], None] | None = None, extra_buffers: bool = True,
    ) -> LlamaCppModel:
        """Resolve the spec (download ``hf:`` specs), load the model and say what was chosen.

        Args:
            spec: a path to a ``.gguf`` or ``hf:REPO[:QUANT]``.
            config: the ``llama`` and ``sampling`` settings are used.
            extra_buffers: llama.cpp's extra weight buffers (repacked weights for the CPU's matrix
                units: AMX, AVX-512...); False is llama.cpp's ``--no-repack``.
            report: receives progress lines (download, loading) and the one-line load summary
                (default: printed to stderr).

        Raises:
            ModelLoadError: the file cannot be found, fetched, read or loaded (one clear line).
        """
        say = report or (lambda line: print(f"frogtui: {line}", file=sys.stderr))
        path = resolve_spec(spec, report=report)
        header = read_gguf_header(path, {"general.architecture", "{arch}.context_length", "{arch}.block_count"})
        arch = str(header.get("general.architecture", "?"))
        if arch == "clip":
            raise ModelLoadError(f"{path} is a vision projector (mmproj); FrogNano is text-only: give the language model's .gguf")
        s = config.llama
        if s.cache_type_k not in KV_CACHE_TYPES or s.cache_type_v not in KV_CACHE_TYPES:
            raise ModelLoadError(f"unknown KV cache type {s.cache_type_k}/{s.cache_type_v}: use one of {', '.join(KV_CACHE_TYPES)}")
        if s.prompt_mode not in ("append", "exact"):
            raise ModelLoadError(f"unknown llama.prompt_mode {s.prompt_mode!r}: use append or exact")
        trained = header.get(f"{arch}.context_length")
        n_ctx = min(s.n_ctx, int(trained)) if isinstance(trained, int) and trained > 0 else s.n_ctx
        gpu = gpu_offload_supported()
        if report is not None:
            report(f"loading {path.name} ({path.stat().st_size / 1e9:.2f} GB)…")
        n_gpu_layers = s.n_gpu_layers if s.n_gpu_layers is not None else (-1 if gpu else 0)
        seed = llama_cpp.LLAMA_DEFAULT_SEED if config.sampling.seed is None else config.sampling.seed
        try:
            with extra_weight_buffers(extra_buffers):
                llm = llama_cpp.Llama(
                    model_path=str(path), n_ctx=n_ctx, n_batch=s.n_batch, n_ubatch=s.n_batch, n_gpu_layers=n_gpu_layers,
                    flash_attn=s.flash_attn, type_k=KV_CACHE_TYPES[s.cache_type_k], type_v=KV_CACHE_TYPES[s.cache_type_v],
                    seed=seed, verbose=False, **thread_settings(s.n_threads, s.n_threads_batch),
                )
        except (ValueError, RuntimeError) as err:
            raise ModelLoadError(
                f"cannot load {path}: {err} (truncated or corrupt file, or an architecture ({arch}) that "
                f"llama-cpp-python {library_version()} does not support)"
            ) from None
        layers = header.get(f"{arch}.block_count", "?")
        offload = "all" if n_gpu_layers < 0 else str(n_gpu_layers)
        summary = (
            f"{path.name}: {arch}, n_ctx {n_ctx}" + (f" (model trained for {trained}; {s.n_ctx} asked)" if n_ctx < s.n_ctx else "")
            + f", GPU layers {offload} of {layers}" + ("" if gpu else " (CPU-only build)")
            + f", flash attention {'on' if s.flash_attn else 'off'}, KV cache {s.cache_type_k}/{s.cache_type_v}"
            + f", threads {llm.n_threads} generating/{llm.n_threads_batch} batch, prompt mode {s.prompt_mode}"
            + ("" if extra_buffers else ", extra weight buffers off")
        )
        try:
            model = cls(llm, path, settings=s, sampling=config.sampling, load_summary=summary)
        except ModelLoadError:
            llm.close()
            raise
        if not model.template.renders_tools([PROBE_TOOL]):
            model.load_summary = summary = summary + (
                "; warning: its chat template does not show the tools to the model, so it cannot call"
                " Read, Write, Edit, Glob or Bash (FrogNano's template does)"
            )
        say(summary)
        return model

    def keep_state(self, folder: str | None) -> None:
        """Save the state after each turn in ``folder`` (a session's; None stops), and look there
        for one to resume from before the first prompt is evaluated."""
        budget = self.settings.saved_state_mb * 1024 * 1024
        if not folder or budget <= 0:
            self.state_folder = None
            return
        key = state_key(self.path, dataclasses.asdict(self.settings), library_version())
        self.state_folder = StateFolder(Path(folder), key, budget)
        self._state_tried = False

    def close(self) -> None:
        self.checkpoints.clear()
        self.llm.close()

    # the protocol -------------------------------------------------------------------
    def stream_turn(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, max_tokens: int, cancel: threading.Event,
        seed: int | None = None,
    ) -> Iterator[ModelItem]:
        """Evaluate what the new messages add, then sample up to ``max_tokens`` tokens (with
        ``seed`` instead of ``[sampling] seed`` when given).

        Yields text pieces as they decode (multi-byte characters are never split), then a
        ``TurnEnd`` with the step's telemetry. Stops on ``<|im_end|>``, at ``max_tokens``
        (``length``), when the context is full (``length``) or within one token of ``cancel``.

        Raises:
            ContextOverflowError: the prompt does not fit in ``n_ctx``.
            ModelError: the template or llama.cpp failed.
        """
        started = time.perf_counter()
        cached = self._prepare(messages, tools)
        prompt_tokens = len(self.transcript.tokens)
        if not self._evaluate_pending(cancel):
            yield TurnEnd("cancelled", self._usage(prompt_tokens, cached, 0, started, None, None))
            return
        sampler = self._make_sampler(seed)
        decoder = TokenTextDecoder(self._piece)
        generated, first, finish = 0, None, "length"
        try:
            while generated < max_tokens:
                if cancel.is_set():
                    finish = "cancelled"
                    break
                if len(self.transcript.tokens) >= self.context_size or not self._evaluate_pending(cancel):
                    finish = "cancelled" if cancel.is_set() else "length"
                    break
                token = llama_cpp.llama_sampler_sample(sampler, self.llm.ctx, -1)
                first = first or time.perf_counter()
                generated += 1
                self.transcript.tokens.append(token)
                if token == self.end_of_turn_id or llama_cpp.llama_vocab_is_eog(self.vocab, token):
                    finish = "stop"
                    break
                text = decoder.feed(token)
                if text:
                    yield text
        finally:
            llama_cpp.llama_sampler_free(sampler)
        tail = decoder.flush()
        if tail:
            yield tail
        if finish in ("stop", "length") and self.state_folder is not None:
            self._save_state()
        yield TurnEnd(finish, self._usage(prompt_tokens, cached, generated, started, first, time.perf_counter()))  # type: ignore[arg-type]

    def feed_assistant_turn(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], text: str) -> Usage:
        """Record ``text`` as the assistant turn for ``messages``, as if the model had generated it.

        For benchmarks and tests: the prompt is prepared and evaluated exactly as in
        ``stream_turn``; then the text's tokens (plus ``<|im_end|>``) join the transcript and all but
        the last are evaluated, as generation would have done.
        """
        started = time.perf_counter()
        cached = self._prepare(messages, tools)
        prompt_tokens = len(self.transcript.tokens)
        self._evaluate_pending(threading.Event())
        forced = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if not forced or forced[-1] != self.end_of_turn_id:
            forced.append(self.end_of_turn_id)
        first = time.perf_counter()
        self.transcript.tokens.extend(forced)
        self._evaluate_to(len(self.transcript.tokens) - 1, threading.Event())
        return self._usage(prompt_tokens, cached, len(forced), started, first, time.perf_counter())

    def probe(self, prompt_tokens: int = 16, generate: int = 8) -> float:
        """Decode a short prompt and a few tokens greedily, then forget them; the tokens per second.

        The first decodes after a load are where a CPU kernel that does not work on this machine
        crashes (llama.cpp's AMX repacked weights: issue 20824), so a load that must be trusted
        runs this before any real turn.
        """
        tokens = self.llm.tokenize(b"def probe(value):\n    return value * 2\n" * 4, add_bos=self.add_bos, special=False)[:prompt_tokens]
        self.llm.eval(tokens)
        sampler = llama_cpp.llama_sampler_init_greedy()
        started = time.perf_counter()
        try:
            for _ in range(generate):
                self.llm.eval([llama_cpp.llama_sampler_sample(sampler, self.llm.ctx, -1)])
        finally:
            llama_cpp.llama_sampler_free(sampler)
        elapsed = time.perf_counter() - started
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.llm.ctx), True)
        self.llm.n_tokens = 0
        return generate / elapsed if elapsed > 0 else 0.0

    def inspect(self, what: str, **args: Any) -> dict[str, Any]:
        """Facts for tests and benchmarks, read in the model's process.

        ``transcript``: tokens, evaluated count, rendered text, checkpoint positions, threads;
        ``decode`` (``text``): its tokens, streamed back piece by piece as generation would;
        ``tokenization`` (``text``, ``literal``): llama.cpp's plain tokenization of the text and
        frogtui's, which keeps control-token text inside ``literal`` spans as text;
        ``prepare`` (``messages``, ``tools``): the transcript brought to those messages, not evaluated.
        """
        if what == "decode":
            tokens = self.llm.tokenize(args["text"].encode(), add_bos=False, special=True)
            return {"tokens": tokens, "pieces": TokenTextDecoder(self._piece).decode_tokens(tokens)}
        if what == "tokenization":
            literal = tuple(tuple(span) for span in args["literal"])
            return {"plain": self._llama_tokenize(args["text"], True), "split": self._tokenize(args["text"], literal)}  # type: ignore[arg-type]
        if what == "prepare":
            self._prepare(args["messages"], args["tools"])
        t = self.transcript
        return {
            "tokens": list(t.tokens), "evaluated": t.evaluated, "text": self.rendered_transcript(),
            "checkpoints": [c.position for c in self.checkpoints], "recurrent": self.recurrent,
            "end_of_turn_id": self.end_of_turn_id, "n_threads": self.llm.n_threads, "n_threads_batch": self.llm.n_threads_batch,
            "control_texts": list(self.control_texts),
        }

    def rendered_transcript(self) -> str:
        """The transcript's tokens as text (special tokens included)."""
        return b"".join(self._piece(t) for t in self.transcript.tokens).decode("utf-8", errors="replace")

    # preparing the prompt -----------------------------------------------------------
    def _prepare(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """Bring the transcript to ``messages`` + a generation prompt; return the cached token count."""
        if not messages:
            raise ModelError("no messages to answer")
        tools_digest = hashlib.sha1(json.dumps(tools, sort_keys=True).encode()).hexdigest()
        if self.state_folder is not None and not self.transcript.tokens and not self._state_tried:
            self._state_tried = True  # a fresh process (a resumed session, a restart after a crash)
            self.notes.append(self._restore_state(messages, tools_digest))
        t = self.transcript
        new = t.new_messages(messages, tools_digest)
        if new is not None and self.settings.prompt_mode == "exact" and any(m.get("role") == "user" for m in new):
            new = None  # a follow-up in exact mode: re-render with the template, reuse via checkpoints
        suffix = self.template.suffix(messages[0], new, tools) if new is not None else None
        if suffix is not None:
            closed = t.tokens[-1:] == [self.end_of_turn_id]
            close = suffix.close if not closed else ""
            literal = None if suffix.literal is None else tuple((a + len(close), b + len(close)) for a, b in suffix.literal)
            added = self._tokenize(close + suffix.messages, literal)
            boundary = len(t.tokens) + len(added) if new and new[-1].get("role") == "user" else None
            added += self._tokenize(suffix.generation_prompt)
            self._check_fits(len(t.tokens) + len(added))
            t.commit(messages, t.tokens + added, boundary=boundary, tools_digest=tools_digest)
        else:
            rendered = self.template.render_marked(messages, tools, add_generation_prompt=True)
            bos = self.add_bos and not rendered.text.startswith(self.template.bos_token or "\0")
            tokens = ([self.llm.token_bos()] if bos else []) + self._tokenize(rendered.text, rendered.literal)
            self._check_fits(len(tokens))
            boundary = None
            if messages[-1].get("role") == "user":
                head = self.template.render_marked(messages, tools, add_generation_prompt=False)
                boundary = int(bos) + len(self._tokenize(head.text, head.literal))
            self._rewind(common_prefix(t.tokens[: t.evaluated], tokens))
            t.reset_history()
            t.commit(messages, tokens, boundary=boundary, tools_digest=tools_digest)
        if t.evaluated >= len(t.tokens):
            self._rewind(len(t.tokens) - 1)  # a fully cached prompt: re-evaluate one token for fresh logits
        return t.evaluated

    def _control_token_texts(self) -> tuple[str, ...]:
        """Texts of the vocabulary's control tokens (``<|im_end|>``...), longest first."""
        n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        texts = {
            self._token_text(t) for t in range(n_vocab)
            if llama_cpp.llama_vocab_get_attr(self.vocab, t) & llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        }
        return tuple(sorted((t for t in texts if t), key=len, reverse=True))

    def _tokenize(self, text: str, literal: tuple[tuple[int, int], ...] | None = ()) -> list[int]:
        """Tokenize template output; control-token text inside ``literal`` spans stays text
        (``tokens.tokenize_keeping_text``)."""
        return tokenize_keeping_text(text, literal, self.control_texts, self._llama_tokenize)

    def _llama_tokenize(self, text: str, special: bool) -> list[int]:
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def _check_fits(self, n_tokens: int) -> None:
        n_ctx = self.context_size or 0
        if n_tokens >= n_ctx:
            raise ContextOverflowError(f"the prompt needs {n_tokens} tokens and the context holds {n_ctx} (llama.n_ctx)")

    # evaluation, cache and checkpoints ------------------------------------------------
    def _evaluate_pending(self, cancel: threading.Event) -> bool:
        """Evaluate every transcript token not yet in the cache; False when cancelled."""
        return self._evaluate_to(len(self.transcript.tokens), cancel)

    def _evaluate_to(self, end: int, cancel: threading.Event) -> bool:
        t = self.transcript
        while t.evaluated < end:
            if cancel.is_set():
                return False
            stop = min(end, t.evaluated + self.llm.n_batch)
            upcoming = [b for b in t.boundaries if t.evaluated < b <= stop]
            if upcoming:
                stop = upcoming[0]
            try:
                self.llm.eval(t.tokens[t.evaluated:stop])
            except RuntimeError as err:
                raise ModelError(f"llama.cpp failed to evaluate the prompt: {err}") from None
            t.evaluated = self.llm.n_tokens
            if upcoming and self.recurrent and self.settings.checkpoints > 0:
                self._save_checkpoint(stop)
        return True

    # the state saved after a turn ----------------------------------------------------
    def _save_state(self) -> None:
        """The sequence's state (KV cache and recurrent state) and the tokens it holds, in the
        session's folder (``models/saved_state.py``)."""
        assert self.state_folder is not None
        t = self.transcript
        n = t.evaluated
        if n <= 0:
            return
        tokens = (llama_cpp.llama_token * n)(*t.tokens[:n])

        def write(path: Path) -> bool:
            return bool(llama_cpp.llama_state_seq_save_file(self.llm.ctx, str(path).encode(), 0, tokens, n))

        self.state_folder.save(t, write)

    def _restore_state(self, messages: list[dict[str, Any]], tools_digest: str) -> str:
        """Load the newest saved state whose conversation ``messages`` continue (same model,
        settings and llama.cpp); what was done, in one line."""
        assert self.state_folder is not None
        usable, other = self.state_folder.candidates()
        memory = llama_cpp.llama_get_memory(self.llm.ctx)
        for saved in usable:
            t = saved.transcript
            if t.new_messages(messages, tools_digest) is None:
                continue
            n = t.evaluated
            out = (llama_cpp.llama_token * n)()
            count = ctypes.c_size_t(0)
            llama_cpp.llama_memory_clear(memory, True)
            read = llama_cpp.llama_state_seq_load_file(self.llm.ctx, str(saved.state).encode(), 0, out, n, ctypes.byref(count))
            if not read or count.value != n or list(out[:n]) != t.tokens[:n]:
                llama_cpp.llama_memory_clear(memory, True)
                continue
            self.llm.n_tokens = n
            self.llm.input_ids[:n] = t.tokens[:n]
            self.transcript, self.checkpoints, self.restored_tokens = t, [], n
            return f"resumed from the model's saved state: {n} tokens of the conversation not evaluated again"
        if usable or other:
            return "the model's saved state does not fit this conversation (another model, settings or history): evaluating it whole"
        return ""

    def take_notes(self) -> list[str]:
        """What the person should be told once (a saved state used or not), then forgotten."""
        notes, self.notes = [n for n in self.notes if n], []
        return notes

    def _save_checkpoint(self, position: int) -> None:
        ctx = self.llm.ctx
        size = llama_cpp.llama_state_seq_get_size_ext(ctx, 0, PARTIAL_STATE)
        data = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data_ext(ctx, data, size, 0, PARTIAL_STATE) != size:
            return
        self.checkpoints = [c for c in self.checkpoints if c.position != position] + [Checkpoint(position, data)]
        self.checkpoints = self.checkpoints[-self.settings.checkpoints:]

    def _rewind(self, position: int) -> None:
        """Cut the cache back to ``position`` tokens (or the nearest checkpoint before it)."""
        t = self.transcript
        position = max(0, position)
        if position >= t.evaluated:
            return
        memory = llama_cpp.llama_get_memory(self.llm.ctx)
        if not self.recurrent:
            llama_cpp.llama_memory_seq_rm(memory, 0, position, -1)
        else:
            usable = [c for c in self.checkpoints if c.position <= position]
            restored = False
            if usable:
                c = usable[-1]
                if llama_cpp.llama_state_seq_set_data_ext(self.llm.ctx, c.data, len(c.data), 0, PARTIAL_STATE) == len(c.data):
                    restored = bool(llama_cpp.llama_memory_seq_rm(memory, 0, c.position, -1))
                    position = c.position
            if not restored:
                llama_cpp.llama_memory_clear(memory, True)
                position = 0
            self.checkpoints = [c for c in self.checkpoints if c.position <= position]
        self.llm.n_tokens = position
        t.evaluated = position

    # sampling and text ----------------------------------------------------------------
    def _make_sampler(self, seed: int | None = None) -> Any:
        s = self.sampling if seed is None else dataclasses.replace(self.sampling, seed=seed)
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = lambda sampler: llama_cpp.llama_sampler_chain_add(chain, sampler)  # noqa: E731
        if s.repeat_penalty != 1.0:
            add(llama_cpp.llama_sampler_init_penalties(64, s.repeat_penalty, 0.0, 0.0))
        if s.temperature <= 0:
            add(llama_cpp.llama_sampler_init_greedy())
            return chain
        if s.top_k > 0:
            add(llama_cpp.llama_sampler_init_top_k(s.top_k))
        add(llama_cpp.llama_sampler_init_top_p(s.top_p, 1))
        if s.min_p > 0:
            add(llama_cpp.llama_sampler_init_min_p(s.min_p, 1))
        add(llama_cpp.llama_sampler_init_temp(s.temperature))
        add(llama_cpp.llama_sampler_init_dist(llama_cpp.LLAMA_DEFAULT_SEED if s.seed is None else s.seed))
        return chain

    def _piece(self, token: int) -> bytes:
        buf = self._piece_buffer
        n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
        if n < 0:
            self._piece_buffer = buf = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
        return buf.raw[:n]

    def _token_text(self, token: int) -> str:
        return self._piece(token).decode("utf-8", errors="replace") if token >= 0 else ""

    def _usage(self, prompt: int, cached: int, generated: int, started: float, first: float | None, end: float | None) -> Usage:
        gen_s = (end - first) if first is not None and end is not None else 0.0
        return Usage(
            prompt_tokens=prompt,
            evaluated_tokens=prompt - cached,
            cached_tokens=cached,
            generated_tokens=generated,
            ttft_s=(first - started) if first is not None else 0.0,
            gen_tok_s=(generated - 1) / gen_s if generated > 1 and gen_s > 0 else 0.0,
        )
