"""One attempt's outcome, the results table (identical patches grouped) and the best pick."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from frogtui.attempts.check import CheckResult
from frogtui.vcs.worktrees import DIFF_CAP


@dataclass
class AttemptResult:
    """What attempt ``number`` did (filled in as it runs; ``attempts.json`` holds these)."""

    number: int
    seed: int | None
    session: str
    """The attempt's own session id (its folder holds its Leaf trajectory)."""
    worktree: str
    exit_reason: str = "running"
    steps: int = 0
    tokens: int = 0
    """Tokens the model evaluated and generated for this attempt."""
    seconds: float = 0.0
    check: CheckResult | None = None
    commit: str = ""
    """Its final state, a commit on the base ('' until it ended)."""
    tree: str = ""
    """That commit's tree: two attempts with the same tree made the same patch."""
    diff_file: str = ""
    """Its diff from the base, in the parent session folder ('' when none was kept: larger than
    ``DIFF_CAP``, or it never ended); the commit holds the change either way."""
    diff_bytes: int = 0
    """The diff's size (``DIFF_CAP + 1``: larger than the cap)."""
    files: int = 0
    added: int = 0
    removed: int = 0
    branch: str = ""
    same_as: int | None = None
    """The first attempt with the same patch, when there is one."""
    error: str = ""
    final_message: str = ""

    @property
    def passed(self) -> bool:
        return self.check is not None and self.check.passed

    @property
    def lines(self) -> int:
        return self.added + self.removed

    @property
    def diff_over_cap(self) -> bool:
        return bool(self.commit) and not self.diff_file and self.diff_bytes > DIFF_CAP

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["passed"] = self.passed
        return data


def group_same(results: list[AttemptResult]) -> None:
    """Set ``same_as`` on each attempt whose patch an earlier attempt made too."""
    first: dict[str, int] = {}
    for result in results:
        if not result.commit:
            continue
        key = result.tree or result.commit  # on one base, the same tree is the same patch
        result.same_as = first.get(key)
        first.setdefault(key, result.number)


def best(results: list[AttemptResult]) -> AttemptResult | None:
    """The passing attempt with the fewest changed lines, then the fewest steps (then the first);
    None when none passed. An attempt that changed nothing is never picked."""
    passing = [r for r in results if r.passed and r.commit and r.files]
    return min(passing, key=lambda r: (r.lines, r.steps, r.number), default=None)


def table(results: list[AttemptResult], check: str) -> list[str]:
    """The results table, one line per attempt (identical patches grouped under the first), each
    failed check followed by its output tail, indented."""
    lines = [f"attempts: {len(results)}; check: {check or 'none'}; each diff kept up to {_size(DIFF_CAP)} in the session folder",
             f"{'#':>2}  {'check':<7} {'files':>5} {'+lines':>7} {'-lines':>7} {'steps':>5} {'tokens':>8} {'time':>7}  end"]
    for r in results:
        verdict = "-" if r.check is None else ("passed" if r.passed else "failed")
        same = f"  (same patch as #{r.same_as})" if r.same_as is not None else ""
        if r.diff_over_cap:
            same += f"  (diff over the {_size(DIFF_CAP)} cap: not kept; commit {r.commit[:12]} holds it)"
        lines.append(f"{r.number:>2}  {verdict:<7} {r.files:>5} {'+' + str(r.added):>7} {'-' + str(r.removed):>7} "
                     f"{r.steps:>5} {r.tokens:>8} {r.seconds:>6.1f}s  {r.exit_reason}{same}{(' ' + r.error) if r.error else ''}")
        if r.check is not None and not r.passed and r.check.tail and r.same_as is None:
            lines.extend(f"      | {line[:150]}" for line in r.check.tail.splitlines())
    return lines


def _size(count: int) -> str:
    return f"{count / 2**20:g} MiB"
