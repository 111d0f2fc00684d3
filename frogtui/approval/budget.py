"""The policy's work is bounded: looking at the disk for one call (glob matches, the links under a
folder) stops at a time and work budget, and what it did not finish is unknown, so the policy asks
(``Action.stopped`` says why). ``cat */*/*/*/*/*/*/*/*/*/*/nomatch`` in a repository with eight
symlinks to ``.`` would otherwise walk 8^11 folders before anyone is asked."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

ANALYSIS_SECONDS = 1.0
"""How long gathering the facts of one call may take."""
ANALYSIS_WORK = 200_000
"""How many folder entries gathering the facts of one call may look at."""


@dataclass
class Budget:
    """Time and work left for one call's analysis. ``spend`` is False once either is used up
    (and stays False); ``stopped`` then says which, for the person."""

    seconds: float = ANALYSIS_SECONDS
    work: int = ANALYSIS_WORK
    clock: Callable[[], float] = time.monotonic
    stopped: str | None = None
    _deadline: float = field(default=0.0, repr=False)
    _spent: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        self._deadline = self.clock() + self.seconds

    def spend(self, units: int = 1) -> bool:
        """Count ``units`` of work; False when the budget is used up (stop, call it unknown)."""
        if self.stopped is not None:
            return False
        self._spent += units
        if self._spent > self.work:
            self.stopped = f"the analysis looked at more than {self.work:,} names on disk and stopped"
        elif self._spent % 256 == 0 and self.clock() > self._deadline:
            self.stopped = f"the analysis ran past its {self.seconds:g} s budget and stopped"
        return self.stopped is None

    def stop(self, why: str) -> None:
        """Stop here for another reason (too many matches), keeping the first reason."""
        self.stopped = self.stopped or why
