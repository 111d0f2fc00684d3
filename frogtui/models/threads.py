"""How many CPU threads llama.cpp uses: one count for generating tokens (``n_threads``), one for
evaluating prompts in batches (``n_threads_batch``).

Defaults, from ``bench/threads.py`` (docs/PERFORMANCE.md): generation on every physical core the
process may use (token-by-token decoding is memory-bound; hyperthread siblings add contention, and
the UI is idle while tokens stream), prompt batches on every CPU it may use (matrix work that
scales with threads); on a quiet 2-core machine that generates 1.5-1.6x faster than
llama-cpp-python's own default (half of ``os.cpu_count()``). But llama.cpp's threads wait for
each other at every step, so a thread count above the CPUs left free is many times slower (16x
with 2 threads on 2 cores that other processes kept busy): both counts are capped by the CPUs that
other processes are not using when the model loads, sampled for a tenth of a second from
``/proc/stat`` (the lines of the CPUs it may use) minus this process's own time (the 1-minute load
average, used before, counted frogtui's own start-up and a benchmark's previous runs, and picked 1
thread on a quiet machine).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

SAMPLE_S = 0.1
"""How long the CPUs' use by other processes is sampled."""


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


def idle_cpus(cpus: int, busy: float | None = None) -> int:
    """Of ``cpus``, how many are not already busy: ``cpus`` minus the rounded CPUs other processes
    use (``busy``, default ``busy_elsewhere()``), at least 1."""
    if busy is None:
        busy = busy_elsewhere()
    return max(1, min(cpus, cpus - int(busy + 0.5)))


def default_threads(n_threads: int | None = None, n_threads_batch: int | None = None, *, busy: float | None = None) -> tuple[int, int]:
    """(generation threads, batch threads): the settings given, else the defaults above."""
    if n_threads and n_threads_batch:
        return n_threads, n_threads_batch
    free = idle_cpus(available_cpus(), busy)
    return (n_threads or min(physical_cores(), free), n_threads_batch or free)


def busy_elsewhere(seconds: float = SAMPLE_S) -> float:
    """How many of this process's CPUs other processes keep busy, sampled over ``seconds`` (0.0
    where ``/proc`` cannot be read)."""
    before = _jiffies()
    if before is None:
        return 0.0
    time.sleep(seconds)
    after = _jiffies()
    return 0.0 if after is None else others_busy(before, after, available_cpus())


Jiffies = tuple[int, int, int]
"""(busy time of all CPUs, all time of all CPUs, this process's time), in clock ticks."""


def others_busy(before: Jiffies, after: Jiffies, cpus: int) -> float:
    """The CPUs, out of ``cpus``, that processes other than this one used between two samples (the
    share of these CPUs' time they used, times ``cpus``)."""
    busy, total, own = (after[i] - before[i] for i in range(3))
    if total <= 0:
        return 0.0
    return max(0.0, (busy - own) / total) * cpus


def _jiffies() -> Jiffies | None:
    try:
        lines = Path("/proc/stat").read_text().splitlines()
        own = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        cpus: set[int] | None = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = None
    busy, total = cpu_time(lines, cpus)
    # fields 14 and 15 of /proc/self/stat (utime, stime of every thread), counted after the ")" of its name
    return busy, total, int(own[11]) + int(own[12])


def cpu_time(stat: list[str], cpus: set[int] | None) -> tuple[int, int]:
    """(busy, all) clock ticks of ``cpus`` (the process's affinity mask) in ``/proc/stat``'s
    lines: under ``taskset`` or a container's cpuset other processes' work on the machine's other
    CPUs leaves these free. The machine's ``cpu`` line when ``cpus`` is None or names no line
    (lxcfs numbers a container's CPUs from 0)."""
    busy = total = 0
    names = {f"cpu{cpu}" for cpu in cpus} if cpus is not None else set()
    for wanted in (names, {"cpu"}):
        for line in stat:
            words = line.split()
            if words and words[0] in wanted:
                # cpuN  user nice system idle iowait irq softirq steal ...
                values = [int(v) for v in words[1:9]]
                busy += values[0] + values[1] + values[2] + values[5] + values[6]
                total += sum(values)
        if total:
            break
    return busy, total
