"""What a set of results says: resolved of checked with a 95% Wilson interval, pass@1 and pass@k
over the attempts (the unbiased estimator of Chen et al. 2021, averaged over tasks), tokens and
time, and the failure class of each unresolved task."""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

FAILURES = ("no_patch", "patch_does_not_apply", "tests_fail", "timed_out", "model_error", "gate_denied", "max_steps",
            "context_full", "task_error")
"""Why an attempt did not resolve its task, as ``failure`` in ``results.jsonl`` (docs/EVAL.md)."""
Z95 = 1.959963984540054


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) for no trials."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact at the ends (no 0.9999999999999999)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` attempts drawn from ``n`` (``c`` of them right) is right."""
    if k > n:
        raise ValueError("k cannot exceed n")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def summarize(results: list[dict[str, Any]], attempts: int = 1) -> dict[str, Any]:
    """The summary of ``results`` (lines of ``results.jsonl``, any attempts)."""
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        by_task[str(result.get("instance_id"))].append(result)
    checked = {task: rows for task, rows in by_task.items() if all(r.get("resolved") is not None for r in rows)}
    first = {task: min(rows, key=lambda r: int(r.get("attempt") or 1)) for task, rows in checked.items()}
    resolved = sum(1 for row in first.values() if row.get("resolved"))
    low, high = wilson(resolved, len(first))
    summary: dict[str, Any] = {
        "tasks": len(by_task),
        "attempts": attempts,
        "checked": len(first),
        "patch_only": len(by_task) - len(checked),
        "resolved": resolved,
        "resolved_rate": resolved / len(first) if first else None,
        "interval_95": [low, high],
        "tokens_evaluated": sum(int(r.get("tokens_evaluated") or 0) for r in results),
        "tokens_generated": sum(int(r.get("tokens_generated") or 0) for r in results),
        "seconds": round(sum(float(r.get("seconds") or 0) for r in results), 3),
        "failures": dict(Counter(str(r.get("failure")) for r in first.values() if not r.get("resolved") and r.get("failure"))),
        "unresolved": {task: r.get("failure") for task, r in sorted(first.items()) if not r.get("resolved")},
    }
    ks = sorted({1, attempts}) if attempts > 1 else [1]
    summary["pass_at"] = {}
    for k in ks:
        scores = [pass_at_k(len(rows), sum(1 for r in rows if r.get("resolved")), k) for rows in checked.values() if len(rows) >= k]
        summary["pass_at"][str(k)] = sum(scores) / len(scores) if scores else None
    return summary


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary for a person (stderr)."""
    lines = []
    if summary["checked"]:
        low, high = summary["interval_95"]
        lines.append(f"resolved {summary['resolved']} of {summary['checked']} checked "
                     f"({100 * summary['resolved_rate']:.1f}%, 95% interval {100 * low:.1f}-{100 * high:.1f}%)")
    else:
        lines.append("no task could be checked locally (no FAIL_TO_PASS or no test command): run the official harness on preds.jsonl")
    if summary["patch_only"]:
        lines.append(f"{summary['patch_only']} task(s) patch only: their predictions are for the official harness")
    if summary["attempts"] > 1:
        rates = ", ".join(f"pass@{k} {100 * v:.1f}%" for k, v in summary["pass_at"].items() if v is not None)
        lines.append(f"{summary['attempts']} attempts per task: {rates}")
    lines.append(f"tokens: {summary['tokens_evaluated']:,} evaluated, {summary['tokens_generated']:,} generated; "
                 f"{summary['seconds']:.1f}s of task time")
    if summary["failures"]:
        lines.append("unresolved: " + ", ".join(f"{count} {name}" for name, count in sorted(summary["failures"].items())))
    return lines
