"""The model's own process: llama.cpp runs here, never in frogtui's (``python -m frogtui.models.runner``).

frogtui starts this process and speaks ``models/wire.py`` over its standard input and output; a
crash of native code here (a segfault in a CPU kernel, a driver fault, an out-of-memory kill) ends
this process only, and frogtui turns it into one line (``models/local.py``). The engine is
``models/llama_cpp.py``: transcript, prefix reuse and the hybrid-state checkpoints live here, so a
follow-up still evaluates only its own tokens.

Two threads: one reads requests (a ``cancel`` takes effect at once, the end of standard input ends
the process: it never outlives frogtui), the main one runs them in order and writes the answers.
Standard output is kept for the protocol: anything native code prints goes to standard error.

``FROGTUI_RUNNER_FAULT`` simulates hardware faults for tests (``faults.py``): the extra weight
buffers crashing this CPU's first decode (the probe), every load, or a turn after N pieces of text.
"""
from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from typing import Any, BinaryIO

from frogtui.config import Config, LlamaSettings, Sampling
from frogtui.errors import ModelError
from frogtui.models import wire
from frogtui.models.faults import crash, fault


class Runner:
    """Runs the requests one after another; ``cancels`` holds an event per turn not yet done."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.model: Any = None
        self.cancels: dict[int, threading.Event] = {}
        self.requests: queue.Queue[dict[str, Any]] = queue.Queue()

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(wire.encode(message))
        self.out.flush()

    # the reading thread ----------------------------------------------------------------
    def read_requests(self, source: BinaryIO) -> None:
        for line in source:
            message = wire.decode(line)
            op = message.get("op")
            if op == "cancel":
                event = self.cancels.get(int(message.get("id", -1)))
                if event is not None:
                    event.set()
                continue
            if op in ("turn", "feed"):
                self.cancels[int(message["id"])] = threading.Event()
            if op == "close":  # a turn still going ends within a token, then the model is freed
                for event in list(self.cancels.values()):
                    event.set()
            self.requests.put(message)
        os._exit(0)  # frogtui is gone (or closed the pipe): never hold the model's memory after it

    # the main thread ----------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            message = self.requests.get()
            op = message["op"]
            if op == "close":
                if self.model is not None:
                    self.model.close()
                return
            try:
                getattr(self, f"_{op}")(message)
            except ModelError as err:
                self.send({"id": message.get("id"), **wire.error_message(err)})
            finally:
                self.cancels.pop(int(message.get("id", -1)), None)

    def _load(self, message: dict[str, Any]) -> None:
        from frogtui.models.llama_cpp import LlamaCppModel

        config = Config(llama=LlamaSettings(**message["config"]["llama"]), sampling=Sampling(**message["config"]["sampling"]))
        extra = bool(message.get("extra_buffers", True))
        self.model = LlamaCppModel.from_spec(
            message["path"], config, extra_buffers=extra, report=lambda line: self.send({"report": line}),
        )
        if fault("segv-on-load") is not None:
            crash("segv-on-load")
        probe_tok_s = None
        if message.get("probe"):
            probe_tok_s = self.model.probe()  # where buffers that do not work on this CPU crash (faults.py simulates it)
        m = self.model
        self.send({"loaded": {
            "name": m.name, "context_size": m.context_size, "opens_reasoning": m.opens_reasoning,
            "load_summary": m.load_summary, "recurrent": m.recurrent, "extra_buffers": extra,
            "probe_tok_s": probe_tok_s, "gpu_offload": m.gpu_offload,
        }})

    def _facts(self, message: dict[str, Any]) -> None:
        from frogtui.models.llama_cpp import library_facts

        self.send({"result": library_facts()})

    def _turn(self, message: dict[str, Any]) -> None:
        cancel = self.cancels[int(message["id"])]
        crash_after = fault("segv-after-pieces")
        pieces = 0
        turn = self.model.stream_turn(
            message["messages"], message["tools"], max_tokens=int(message["max_tokens"]), cancel=cancel, seed=message.get("seed"),
        )
        for item in turn:
            for note in self.model.take_notes():  # a saved state resumed from, or why not (once)
                self.send({"report": note})
            if isinstance(item, str):
                self.send({"text": item})
                pieces += 1
                if crash_after is not None and pieces >= int(crash_after):
                    crash("segv-after-pieces")
            else:
                self.send({"end": {"finish_reason": item.finish_reason, "usage": wire.usage_dict(item.usage)}})

    def _feed(self, message: dict[str, Any]) -> None:
        usage = self.model.feed_assistant_turn(message["messages"], message["tools"], message["text"])
        self.send({"result": wire.usage_dict(usage)})

    def _keep_state(self, message: dict[str, Any]) -> None:
        self.model.keep_state(message.get("folder"))
        self.send({"result": {"restored_tokens": self.model.restored_tokens}})

    def _inspect(self, message: dict[str, Any]) -> None:
        self.send({"result": self.model.inspect(message["what"], **message.get("args", {}))})


def main() -> None:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what native code prints must never reach the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C in the terminal is frogtui's to handle
    runner = Runner(out)
    threading.Thread(target=runner.read_requests, args=(sys.stdin.buffer,), name="frogtui-runner-requests", daemon=True).start()
    runner.serve()


if __name__ == "__main__":
    main()
