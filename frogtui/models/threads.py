"""How many CPU threads llama.cpp uses: one count for generating tokens (``n_threads``), one for
evaluating prompts in batches (``n_threads_batch``).

Defaults, from ``bench/threads.py`` (docs/PERFORMANCE.md): generation on every physical core the
process may use (token-by-token decoding is memory-bound; hyperthread siblings add contention, and
the UI is idle while tokens stream), prompt batches on every CPU it may use (matrix work that
scales with threads); on a quiet 2-core machine that generates 1.5-1.6x faster than
llama-cpp-python's own default (half of ``os.cpu_count()``). But llama.cpp's threads wait for
each other at every step, so a thread count above the CPUs left free is many times slower (16x
with 2 threads on 2 cores that other processes kept busy): both counts are capped by the CPUs not
already busy when the model loads (the CPUs minus the rounded 1-minute load average, at least 1).
"""
from __future__ import annotations

import os
from pathlib import Path


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; containers and ``taskset`` limit it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def physical_cores() -> int:
    """The physical cores among the CPUs this process may run on (hyperthread siblings counted once);
    the number of CPUs when the topology cannot be read (not Linux)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return available_cpus()
    cores = set()
    for cpu in cpus:
        topology = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add((topology / "physical_package_id").read_text().strip() + ":" + (topology / "core_id").read_text().strip())
        except OSError:
            return available_cpus()
    return max(1, len(cores))


def thread_settings(n_threads: int | None, n_threads_batch: int | None) -> dict[str, int]:
    """``Llama(...)``'s ``n_threads`` and ``n_threads_batch``: the settings given, else the defaults."""
    generating, batch = default_threads(n_threads, n_threads_batch)
    return {"n_threads": generating, "n_threads_batch": batch}


def idle_cpus(cpus: int, load: float | None = None) -> int:
    """Of ``cpus``, how many are not already busy: ``cpus`` minus the rounded 1-minute load average
    (``load``, default ``os.getloadavg()``), at least 1."""
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # not available on this system
            return cpus
    return max(1, min(cpus, cpus - int(load + 0.5)))


def default_threads(n_threads: int | None = None, n_threads_batch: int | None = None, *, load: float | None = None) -> tuple[int, int]:
    """(generation threads, batch threads): the settings given, else the defaults above."""
    free = idle_cpus(available_cpus(), load)
    return (n_threads or min(physical_cores(), free), n_threads_batch or free)
