"""What the app changes in the Python process while it runs, and puts back when it ends."""
from __future__ import annotations

import gc
import sys

SWITCH_INTERVAL_S = 0.0005
"""How long a thread may hold the GIL while another waits (Python's default is 0.005 s)."""


class ProcessSettings:
    """Held by the app from its construction (``__init__``) to its unmount (``restore``).

    - The collector: what the imports made (textual, frogtui) lives as long as the app, so it is
      frozen and no collection walks it (a full collection before the first paint took ~25 ms).
      Thawed when the app ends: a test process builds many apps.
    - The GIL switch interval (``start``, on mount): the agent's thread gives up the GIL at every
      file write and git call; with Python's default 5 ms switch interval it then waits for the UI
      thread's whole slice each time (a step of 0.5 ms took 5-15 ms while the screen redrew).
    """

    def __init__(self) -> None:
        gc.freeze()
        self._switch_interval: float | None = None

    def start(self) -> None:
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)

    def restore(self) -> None:
        gc.unfreeze()
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
