"""Every automatic "yes" has an OS backstop: the read-only default (a command allowed because the
analysis proved it only reads) holds only where a read-only sandbox can run such a command
(``BwrapWrapper.read_only_wrapper``: the whole file system read-only, the repository included, a
private empty temp folder, no network). Without one, everything the default would allow is asked
about, and the person is told why."""

from __future__ import annotations

from dataclasses import replace

from frogtui.approval.rules import RuleSet
from frogtui.approval.sandbox import Sandbox

NO_BACKSTOP = (
    "the read-only default is off: Bash has no sandbox ({why}), so nothing would stop a command the analysis "
    "wrongly calls read-only from writing; every command no rule allows is asked about"
)


def backstopped(rules: RuleSet, sandbox: Sandbox) -> tuple[RuleSet, str | None]:
    """``rules`` as they hold with ``sandbox``: the read-only default switched off (and a line
    saying why) when there is no read-only sandbox to back it."""
    if not rules.read_only or sandbox.wrap is not None:
        return rules, None
    why = (sandbox.warning or "none").removeprefix("Bash runs without a sandbox: ")
    return replace(rules, read_only=False), NO_BACKSTOP.format(why=why)
