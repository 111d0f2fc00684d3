"""``frogtui run``'s progress line: while the model works on a turn, at most once a second, the
step, the tokens generated so far in the turn, their rate and the last words written, so that a
long turn on a CPU (8,192 tokens at a few tokens a second) is not minutes of silence, and a turn
going round in circles is seen. On a terminal it is one line rewritten in place (``TraceSink``);
elsewhere (a pipe, a file, CI) one line a second.

The tokens are counted where they come from: ``CountingModel`` wraps the run's model and counts
each text piece its ``stream_turn`` yields (one token for llama.cpp and for a server's stream, one
piece for a replay). The step starts and ends with the loop's own events (``StepStarted``,
``AssistantTurnEnded``, ``RunEnded``), fed by the trace sink. A thread looks once per ``interval``;
a turn shorter than that prints nothing.
"""
from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from frogtui.protocol import Model, ModelItem
from frogtui.terminal_text import without_controls

INTERVAL_S = 1.0
"""At most one progress line in this many seconds."""
LAST_WORDS = 60
"""Characters of the turn's latest text the line shows (cut at a word)."""
_SPACE = re.compile(r"\s+")


class ProgressLine:
    """What the model has done in the turn it is working on, as one line when one is due.

    Args:
        write: prints one line (the trace sink's, so lines never interleave).
        interval: seconds between two lines at least, and before the first of a turn.
        clock: monotonic seconds.
    """

    def __init__(self, write: Callable[[str], None], *, interval: float = INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.write = write
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._step = 0
        self._started: float | None = None
        """When the current turn started; None while the model is not working."""
        self._first: float | None = None
        """When its first token came."""
        self._tokens = 0
        self._tail = ""
        """The turn's latest text, whitespace runs as one space, without controls."""
        self._last_line = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # fed by the loop's events and the model -----------------------------------------------
    def turn_started(self, step: int) -> None:
        with self._lock:
            self._step, self._started, self._first, self._tokens, self._tail = step, self.clock(), None, 0, ""
            self._last_line = self._started

    def turn_ended(self) -> None:
        with self._lock:
            self._started = None

    def token(self, text: str = "") -> None:
        with self._lock:
            self._tokens += 1
            if self._first is None:
                self._first = self.clock()
            if text:
                self._tail = _SPACE.sub(" ", self._tail + without_controls(text, keep_lines=True))[-4 * LAST_WORDS:]

    def last_words(self) -> str:
        """The end of the turn's text so far, at most ``LAST_WORDS`` characters from a word's start."""
        tail = self._tail.strip()
        if len(tail) > LAST_WORDS:
            cut = tail[-LAST_WORDS:]
            tail = "…" + (cut.split(" ", 1)[1] if " " in cut[:-1] else cut)
        return tail

    # the line ------------------------------------------------------------------------------
    def due(self) -> str | None:
        """The line to print now, None when the model is not working or one was printed less than
        ``interval`` ago (the turn's start counts as one)."""
        with self._lock:
            now = self.clock()
            if self._started is None or now - self._last_line < self.interval:
                return None
            self._last_line = now
            elapsed = now - self._started
            if not self._tokens or self._first is None:
                return f"frogtui: step {self._step}: reading the prompt ({elapsed:.0f}s)"
            generating = now - self._first
            rate = f", {(self._tokens - 1) / generating:.1f} tok/s" if self._tokens > 1 and generating > 0 else ""
            words = self.last_words()
            return f"frogtui: step {self._step}: {self._tokens:,} tokens so far{rate} ({elapsed:.0f}s)" + (f": {words}" if words else "")

    def tick(self) -> None:
        """Print the line when one is due."""
        line = self.due()
        if line is not None:
            self.write(line)

    def start(self) -> None:
        """Look once per interval on a thread of its own, until ``stop``."""
        def loop() -> None:
            while not self._stop.wait(min(self.interval, 0.25)):
                self.tick()

        self._thread = threading.Thread(target=loop, name="frogtui-progress", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


class CountingModel:
    """The run's model, counting the text pieces each turn yields into ``progress``; everything
    else is the model's own."""

    def __init__(self, model: Model, progress: ProgressLine) -> None:
        self.model = model
        self.progress = progress

    def stream_turn(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **kwargs: Any) -> Iterator[ModelItem]:
        for item in self.model.stream_turn(messages, tools, **kwargs):
            if isinstance(item, str):
                self.progress.token(item)
            yield item

    def close(self) -> None:
        self.model.close()

    def __getattr__(self, name: str) -> Any:  # name, context_size, opens_reasoning…
        return getattr(self.model, name)
