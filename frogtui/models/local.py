"""Local GGUF models, run in a process of their own that frogtui starts and owns.

``LocalModel`` is the ``Model`` the session sees; llama.cpp itself runs in ``models/runner.py``
(the engine: ``models/llama_cpp.py``), spoken to over a pipe (``models/wire.py``). A native crash
there (any signal, or an exit without an answer) is a ``ModelError`` with one line here: the run
ends with ``llm_query_error``, frogtui stays up, and the next turn starts the process again. The
process ends with frogtui: it exits when its standard input closes, so it never outlives us.

Extra weight buffers (``models/buffers.py``): with ``[llama] extra_buffers = "auto"`` the first
load on a machine (per build, CPU and quantisation) decodes a few tokens before any real turn; if
that crashes, as llama.cpp's AMX kernels do on some Xeons, the model loads with them off, says so
once, and the answer is remembered.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from frogtui import programs
from frogtui.config import Config, sessions_dir
from frogtui.errors import ModelError, ModelLoadError
from frogtui.models import buffers, confinement, wire
from frogtui.models.gguf_spec import read_gguf_header, resolve_spec
from frogtui.protocol import ModelItem, TurnEnd, Usage

CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT})
"""Signals that mean native code failed (a kill or an out-of-memory kill is not the buffers' fault)."""
POLL_S = 0.02
"""How often a turn waiting for text looks at its cancel event."""
CLOSE_WAIT_S = 3.0


class ProcessDied(ModelError):
    """The model's process ended without answering; ``returncode`` is Popen's (negative: a signal)."""

    def __init__(self, message: str, returncode: int | None) -> None:
        super().__init__(message)
        self.returncode = returncode

    @property
    def crashed(self) -> bool:
        return self.returncode is not None and self.returncode < 0 and -self.returncode in CRASH_SIGNALS


def describe_exit(returncode: int | None) -> str:
    """``killed by SIGSEGV``, ``exited with status 1``..."""
    if returncode is None:
        return "stopped answering"
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


class RunnerProcess:
    """One model process: start, send requests, read answers, notice its death.

    It is frogtui's own Python, isolated, in a sandbox of its own where bwrap works
    (``models/confinement.py``): ``pid`` is then the interpreter's, inside it, and a signal that
    ended it is read back from bwrap's exit status."""

    def __init__(self, model: Path | None = None, writable: Sequence[Path] = ()) -> None:
        self._log = tempfile.TemporaryFile(prefix="frogtui-llama-")  # unlinked: nothing left behind
        self.confinement = confinement.runner_argv(model, writable=writable)
        info_read, info_write = os.pipe() if self.confinement.sandboxed else (-1, -1)
        argv = self.confinement.argv
        if self.confinement.sandboxed:
            argv = [argv[0], "--info-fd", str(info_write), *argv[1:]]
        try:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, cwd=programs.PYTHON_CWD,
                env=programs.python_environ(os.environ), pass_fds=(info_write,) if info_write >= 0 else (),
                start_new_session=True,  # the terminal's Ctrl+C and hang-up are frogtui's to handle
            )
        finally:
            if info_write >= 0:
                os.close(info_write)
        self._child: int | None = None
        if info_read >= 0:
            self._child = _child_pid(info_read)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buffer = bytearray()
        self.doing = "starting"

    @property
    def pid(self) -> int:
        """The process that runs llama.cpp (inside the sandbox: bwrap's child)."""
        return self._child or self.proc.pid

    def returncode(self, code: int | None) -> int | None:
        """Popen's status of the model's process (bwrap reports a child a signal ended as 128 + N)."""
        if self.confinement.sandboxed and code is not None and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    def send(self, message: dict[str, Any]) -> None:
        data = wire.encode(message)
        try:
            while data:
                data = data[os.write(self._in, data):]
        except OSError:  # BrokenPipeError: it is gone
            raise self.died() from None

    def receive(self, poll: Callable[[], None] | None = None) -> dict[str, Any]:
        """The next message; ``poll`` is called about every ``POLL_S`` while none comes.

        Raises:
            ProcessDied: the process ended (its pipe closed) before a whole message came.
        """
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return wire.decode(line)
            if poll is not None:
                poll()
            try:
                ready, _, _ = select.select([self._out], [], [], POLL_S if poll is not None else None)
                chunk = os.read(self._out, 1 << 16) if ready else None
            except (OSError, ValueError):  # closed under us (frogtui is closing the model)
                chunk = b""
            if chunk is not None and not chunk:
                raise self.died()
            if chunk:
                self._buffer += chunk

    def died(self) -> ProcessDied:
        """The error for a process that is gone (waits for its status; kills one that hangs)."""
        try:
            returncode = self.proc.wait(timeout=CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            returncode = self.proc.wait()
        returncode = self.returncode(returncode)
        said = self.last_words()
        line = f"the model's process (llama.cpp) {describe_exit(returncode)} while {self.doing}"
        if said:
            line += f" (it said: {said})"
        self.close()
        return ProcessDied(line, returncode)

    def last_words(self) -> str:
        """The last line the process wrote on standard error, cut to 200 characters."""
        try:
            size = os.fstat(self._log.fileno()).st_size
            tail = os.pread(self._log.fileno(), 4096, max(0, size - 4096))
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in tail.decode("utf-8", errors="replace").splitlines() if line.strip()]
        return lines[-1][:200] if lines else ""

    def close(self) -> None:
        """Ask it to exit, kill it if it does not, and free the pipes."""
        if self.proc.poll() is None:
            try:
                os.write(self._in, wire.encode({"op": "close"}))
            except OSError:
                pass
            try:
                self.proc.wait(timeout=CLOSE_WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._log):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass


def _child_pid(info: int) -> int | None:
    """The pid of bwrap's child, from what bwrap writes on ``--info-fd`` (None when it wrote
    nothing: it failed, and the process's death says why)."""
    data = b""
    try:
        while chunk := os.read(info, 4096):
            data += chunk
    finally:
        os.close(info)
    try:
        return int(json.loads(data)["child-pid"]) if data else None
    except (ValueError, KeyError, TypeError):
        return None


@dataclasses.dataclass(frozen=True)
class Loaded:
    """What the model's process says about the model it loaded."""

    name: str
    context_size: int | None
    opens_reasoning: bool
    load_summary: str
    recurrent: bool
    extra_buffers: bool
    probe_tok_s: float | None
    gpu_offload: bool


class LocalModel:
    """A GGUF model behind ``frogtui.protocol.Model``, generating in its own process.

    Build it with ``from_spec``. ``pid`` is the process that maps the model (None between a crash
    and the next turn).
    """

    def __init__(self, path: Path, config: Config, *, report: Callable[[str], None]) -> None:
        self.path = path
        self.config = config
        self._report = report
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._process: RunnerProcess | None = None
        self._extra_buffers = True
        self._state_folder: Path | None = None
        self.info: Loaded | None = None

    # the Model protocol's fields ---------------------------------------------------------
    @property
    def name(self) -> str:
        return self.info.name if self.info else self.path.name

    @property
    def context_size(self) -> int | None:
        return self.info.context_size if self.info else None

    @property
    def opens_reasoning(self) -> bool:
        return self.info.opens_reasoning if self.info else False

    @property
    def load_summary(self) -> str:
        return self.info.load_summary if self.info else ""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    # loading -------------------------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec: str, config: Config, *, report: Callable[[str], None] | None = None) -> LocalModel:
        """Resolve the spec (download ``hf:`` specs), start the model's process and load it there.

        Args:
            spec: a path to a ``.gguf`` or ``hf:REPO[:QUANT]``.
            config: the ``llama`` and ``sampling`` settings are used.
            report: receives progress lines and the one-line load summary (default: stderr).

        Raises:
            ModelLoadError: the file cannot be found, fetched, read or loaded, or the process died
                while loading it (one clear line).
        """
        say = report or (lambda line: print(f"frogtui: {line}", file=sys.stderr))
        path = resolve_spec(spec, report=report)
        header = read_gguf_header(path, {"general.architecture", "general.file_type"})
        if header.get("general.architecture") == "clip":
            raise ModelLoadError(f"{path} is a vision projector (mmproj); FrogNano is text-only: give the language model's .gguf")
        model = cls(path, config, report=say)
        try:
            model._load_first(buffers.machine_key(header.get("general.file_type")))
        except ProcessDied as err:
            raise ModelLoadError(str(err)) from None
        if model._process is not None and not model._process.confinement.sandboxed:
            say(f"the model's process is {model._process.confinement.warning}")
        return model

    def _load_first(self, key: str) -> None:
        """Load with the extra weight buffers the setting, the remembered answer or a probe choose."""
        setting = self.config.llama.extra_buffers
        if setting != "auto":
            self._start(extra_buffers=bool(setting), probe=False)
            return
        remembered = buffers.remembered(key)
        if remembered is not None:
            self._start(extra_buffers=remembered, probe=False)
            if not remembered:
                self._report("llama.cpp's extra weight buffers are off on this CPU (they crashed it before; "
                             "[llama] extra_buffers overrides)")
            return
        try:
            self._start(extra_buffers=True, probe=True)
        except ProcessDied as err:
            if not err.crashed:
                raise
            signal_name = describe_exit(err.returncode).removeprefix("was killed by ")
            self._report(
                f"llama.cpp crashed while trying its extra weight buffers on this CPU ({signal_name}: "
                "a llama.cpp bug on some CPUs, e.g. AMX); loading with them off, and remembering it ([llama] extra_buffers overrides)"
            )
            self._start(extra_buffers=False, probe=False)  # crashes too: not the buffers' fault, nothing remembered
            buffers.remember(key, False, reason=str(err))
            return
        buffers.remember(key, True)

    def _start(self, *, extra_buffers: bool, probe: bool) -> None:
        """Start a process and load the model in it; the old one, if any, is closed first."""
        self._stop()
        writable = [sessions_dir(), *([self._state_folder] if self._state_folder is not None else [])]
        process = RunnerProcess(self.path, writable)
        process.doing = "loading the model" + (" and trying a few tokens" if probe else "")
        llama = dataclasses.asdict(self.config.llama)
        request = {"op": "load", "path": str(self.path), "extra_buffers": extra_buffers, "probe": probe,
                   "config": {"llama": llama, "sampling": dataclasses.asdict(self.config.sampling)}}
        try:
            process.send(request)
            while True:
                message = process.receive()
                if "report" in message:
                    self._report(str(message["report"]))
                elif "loaded" in message:
                    self.info = Loaded(**message["loaded"])
                    break
                elif "error" in message:
                    process.close()
                    wire.raise_error(message["error"])
        except ProcessDied as err:
            raise ProcessDied(f"cannot load {self.path.name}: {err}", err.returncode) from None
        self._process = process
        self._extra_buffers = extra_buffers
        if self._state_folder is not None:  # a restarted process goes on saving, and resumes from the last save
            process.send({"op": "keep_state", "folder": str(self._state_folder), "id": next(self._ids)})
            process.receive()

    def keep_state(self, folder: Path | None) -> None:
        """Save the model's state after each turn in ``folder`` (a session's), and resume from the
        newest one there that this conversation continues (``models/saved_state.py``); kept
        across a restart of the model's process. None stops it."""
        self._state_folder = folder
        if self._process is not None and folder is not None and not self._process.confinement.writes(folder):
            self._start(extra_buffers=self._extra_buffers, probe=False)  # its sandbox binds the folder (sent keep_state)
        elif self._process is not None:
            self._call({"op": "keep_state", "folder": str(folder) if folder else None})

    def _stop(self) -> None:
        if self._process is not None:
            self._process.close()
            self._process = None

    def close(self) -> None:
        """End the model's process (it frees the model's memory)."""
        self._stop()

    # the protocol ------------------------------------------------------------------------------
    def with_seed(self, seed: int) -> SeededModel:
        """This model for another conversation, sampling with ``seed``: the same process, whose
        transcript keeps the shared prefix (system prompt, tools, task), so a second conversation
        that starts the same way evaluates only what differs. Turns run one at a time."""
        return SeededModel(self, seed)

    def stream_turn(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, max_tokens: int, cancel: threading.Event,
        seed: int | None = None,
    ) -> Iterator[ModelItem]:
        """One turn, generated in the model's process: text pieces as they decode, then ``TurnEnd``
        (sampled with ``seed`` instead of ``[sampling] seed`` when given).

        Raises:
            ContextOverflowError: the prompt does not fit in ``n_ctx``.
            ModelError: llama.cpp failed, or its process died (one line; the next turn starts it again).
        """
        with self._lock:
            process = self._running()
            turn = next(self._ids)
            process.doing = "generating"
            cancelled = False

            def poll() -> None:
                nonlocal cancelled
                if not cancelled and cancel.is_set():
                    cancelled = True
                    process.send({"op": "cancel", "id": turn})

            answered = False
            try:
                process.send({"op": "turn", "id": turn, "messages": messages, "tools": tools, "max_tokens": max_tokens, "seed": seed})
                while True:
                    message = process.receive(poll)
                    if "text" in message:
                        yield str(message["text"])
                    elif "report" in message:  # said once: a saved state resumed from, or why not
                        self._report(str(message["report"]))
                    elif "end" in message:
                        answered = True
                        end = message["end"]
                        yield TurnEnd(end["finish_reason"], wire.usage_from(end["usage"]))
                        return
                    elif "error" in message:
                        answered = True
                        wire.raise_error(message["error"])
            except ProcessDied as err:
                answered = True
                self._process = None
                raise ModelError(self._crash_line(err)) from None
            finally:
                if not answered:  # the caller stopped reading: end the turn so its text is not the next one's
                    self._abandon(process, turn)

    def _abandon(self, process: RunnerProcess, turn: int) -> None:
        try:
            process.send({"op": "cancel", "id": turn})
            while not ({"end", "error"} & process.receive().keys()):
                pass
        except ProcessDied:
            self._process = None

    def _crash_line(self, err: ProcessDied) -> str:
        line = f"{err}; frogtui itself is unaffected, and the model starts again when it is next asked"
        if err.crashed and self._extra_buffers:
            line += " (if it crashes again, try [llama] extra_buffers = false)"
        return line

    def _running(self) -> RunnerProcess:
        if self._process is None or self._process.proc.poll() is not None:
            self._start(extra_buffers=self._extra_buffers, probe=False)
        assert self._process is not None
        return self._process

    # for benchmarks and tests ---------------------------------------------------------------------
    def feed_assistant_turn(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], text: str) -> Usage:
        """Record ``text`` as the assistant turn for ``messages`` as if generated (``LlamaCppModel``'s)."""
        return wire.usage_from(self._call({"op": "feed", "messages": messages, "tools": tools, "text": text}))

    def inspect(self, what: str = "transcript", **args: Any) -> dict[str, Any]:
        """Facts read in the model's process (``LlamaCppModel.inspect``: ``transcript``, ``decode``,
        ``tokenization``, ``prepare``)."""
        return dict(self._call({"op": "inspect", "what": what, "args": args}))

    def rendered_transcript(self) -> str:
        return str(self.inspect()["text"])

    def _call(self, request: dict[str, Any]) -> Any:
        with self._lock:
            process = self._running()
            process.doing = request["op"]
            try:
                process.send({**request, "id": next(self._ids)})
                message = process.receive()
            except ProcessDied as err:
                self._process = None
                raise ModelError(self._crash_line(err)) from None
            if "error" in message:
                wire.raise_error(message["error"])
            return message["result"]



class SeededModel:
    """A ``LocalModel`` seen as another conversation that samples with its own seed (``with_seed``);
    closing it leaves the model loaded."""

    def __init__(self, model: LocalModel, seed: int) -> None:
        self.model, self.seed = model, seed

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def context_size(self) -> int | None:
        return self.model.context_size

    @property
    def opens_reasoning(self) -> bool:
        return self.model.opens_reasoning

    def stream_turn(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], *, max_tokens: int, cancel: threading.Event
    ) -> Iterator[ModelItem]:
        return self.model.stream_turn(messages, tools, max_tokens=max_tokens, cancel=cancel, seed=self.seed)

    def close(self) -> None:
        pass


def extra_buffers_choice(path: Path, config: Config, *, report: Callable[[str], None] | None = None) -> bool:
    """Whether frogtui loads the GGUF at ``path`` with llama.cpp's extra weight buffers here, for what
    starts llama.cpp outside the model's process (``models/llama_server.py``, the benches, the tests'
    servers): ``[llama] extra_buffers`` when it is set, else the answer remembered for this build,
    CPU and quantisation, else the first load's probe, in a model process of its own (remembered).

    Raises:
        ModelLoadError: the file cannot be read, or the process died loading it without the buffers too.
    """
    setting = config.llama.extra_buffers
    if setting != "auto":
        return bool(setting)
    key = buffers.machine_key(read_gguf_header(path, {"general.file_type"}).get("general.file_type"))
    remembered = buffers.remembered(key)
    if remembered is not None:
        return remembered
    small = config.replace(llama=dataclasses.replace(config.llama, n_ctx=min(config.llama.n_ctx, 2048)))  # the probe's few tokens
    model = LocalModel(path, small, report=report or (lambda line: None))
    try:
        model._load_first(key)
    except ProcessDied as err:
        raise ModelLoadError(str(err)) from None
    finally:
        model.close()
    return model._extra_buffers


def library_facts() -> dict[str, Any]:
    """llama.cpp's version, GPU offload and CPU features, asked of a model process (``doctor``).

    Raises:
        ProcessDied: the library crashed as it loaded.
    """
    process = RunnerProcess()
    process.doing = "loading llama.cpp"
    try:
        process.send({"op": "facts", "id": 0})
        message = process.receive()
    finally:
        process.close()
    return dict(message.get("result", {}))


def probe_buffers(path: Path, config: Config) -> dict[bool, float | str]:
    """Tokens per second with llama.cpp's extra weight buffers on and off (``frogtui doctor``).

    Each setting loads ``path`` in a process of its own and decodes a few tokens; a setting that
    crashes gives the crash instead (``killed by SIGSEGV``). The answer is remembered as a first
    load's probe would be.
    """
    header = read_gguf_header(path, {"general.file_type"})
    results: dict[bool, float | str] = {}
    for extra in (True, False):
        model = LocalModel(path, config, report=lambda line: None)
        try:
            model._start(extra_buffers=extra, probe=True)
            results[extra] = float(model.info.probe_tok_s or 0.0) if model.info else 0.0
        except ProcessDied as err:
            results[extra] = describe_exit(err.returncode) if err.returncode is not None else str(err)
        except ModelError as err:
            results[extra] = str(err)
        finally:
            model.close()
    if isinstance(results[False], float):
        buffers.remember(buffers.machine_key(header.get("general.file_type")), isinstance(results[True], float), reason=str(results[True]))
    return results
