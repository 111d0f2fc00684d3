"""Simulated hardware faults for the tests (``FROGTUI_RUNNER_FAULT``), read only where llama.cpp runs:
frogtui's model process (``runner.py``) and what loads llama.cpp with frogtui's choice of extra
weight buffers outside it (``llama_cpp.extra_weight_buffers``: ``llama_server.py``, the benches).

``FROGTUI_RUNNER_FAULT`` names one or more, comma-separated:

- ``extra-buffers-probe``: this CPU's repacked kernels crash (AMX, llama.cpp issue 20824): once a
  model is loaded with llama.cpp's extra weight buffers on, its first decode is killed by SIGSEGV
  (in frogtui's model process that is the first load's probe);
- ``segv-on-load``: every load crashes;
- ``segv-after-pieces:N``: a turn crashes after N pieces of text.

With ``FROGTUI_RUNNER_FAULT_ONCE=FILE`` the last two happen only while FILE does not exist (the
crash makes it); the CPU's fault happens every time, as the CPU's would.
"""
from __future__ import annotations

import os
import signal

CPU_FAULTS = frozenset({"extra-buffers-probe"})


def fault(name: str) -> str | None:
    """The fault's argument (its name when it has none) when it is simulated now, else None."""
    once = os.environ.get("FROGTUI_RUNNER_FAULT_ONCE")
    if name not in CPU_FAULTS and once and os.path.exists(once):
        return None
    for spec in os.environ.get("FROGTUI_RUNNER_FAULT", "").split(","):
        head, _, arg = spec.strip().partition(":")
        if head == name:
            return arg or head
    return None


def crash(name: str) -> None:
    """Die of SIGSEGV, as native code would (a one-time fault leaves FROGTUI_RUNNER_FAULT_ONCE's file)."""
    once = os.environ.get("FROGTUI_RUNNER_FAULT_ONCE")
    if once and name not in CPU_FAULTS:
        open(once, "w").close()  # noqa: SIM115 (the fault happens once: the next process runs clean)
    os.kill(os.getpid(), signal.SIGSEGV)
