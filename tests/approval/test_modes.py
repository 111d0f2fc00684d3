"""``apply_mode``: one meaning of ``policy``, ``all`` and ``none`` for every front end."""
from __future__ import annotations

import pytest

from frogtui.approval import APPROVAL_MODES, Decision, apply_mode, repeat_denial

ALLOW = Decision("allow", "Read: allow (default)", "Read only reads")
ASK = Decision("ask", "Bash: ask (default)", "Bash runs commands")
DENY = Decision("deny", "Bash: git push *", "pushing is yours")
FLOOR = Decision("deny", "floor: .git internals", "touches .git", floor=True)


@pytest.mark.parametrize("mode", APPROVAL_MODES)
def test_the_floor_and_deny_rules_hold_in_every_mode(mode: str) -> None:
    floor = apply_mode(mode, FLOOR, "Bash")  # type: ignore[arg-type]
    assert floor is not None and (floor.decision, floor.by, floor.rule) == ("deny", "floor", FLOOR.rule)
    denied = apply_mode(mode, DENY, "Bash")  # type: ignore[arg-type]
    assert denied is not None and (denied.decision, denied.by, denied.rule, denied.reason) == ("deny", "rule", DENY.rule, DENY.reason)


def test_policy_allows_what_the_rules_allow_and_asks_a_person_the_rest() -> None:
    allowed = apply_mode("policy", ALLOW, "Read")
    assert allowed is not None and (allowed.decision, allowed.by, allowed.rule) == ("allow", "rule", ALLOW.rule)
    assert apply_mode("policy", ASK, "Bash") is None


def test_all_allows_what_the_policy_would_ask_about_naming_the_mode() -> None:
    allowed = apply_mode("all", ASK, "Bash", label="--approve all")
    assert allowed is not None and (allowed.decision, allowed.by, allowed.rule) == ("allow", "mode", "--approve all")
    assert allowed.reason == "--approve all (the policy would ask: Bash runs commands)"
    by_rule = apply_mode("all", ALLOW, "Read")
    assert by_rule is not None and (by_rule.by, by_rule.rule) == ("rule", ALLOW.rule)


@pytest.mark.parametrize("tool", ["Write", "Edit", "Bash"])
@pytest.mark.parametrize("decision", [ALLOW, ASK])
def test_none_denies_every_write_edit_and_bash_even_when_a_rule_allows_it(tool: str, decision: Decision) -> None:
    denied = apply_mode("none", decision, tool)
    assert denied is not None and (denied.decision, denied.by, denied.rule) == ("deny", "mode", "mode: none")
    assert denied.reason == f"{tool} is not allowed under mode: none"


@pytest.mark.parametrize("tool", ["Read", "Glob"])
def test_none_reads_as_the_policy_says_and_denies_what_it_would_ask_about(tool: str) -> None:
    allowed = apply_mode("none", ALLOW, tool)
    assert allowed is not None and (allowed.decision, allowed.by) == ("allow", "rule")
    asked = Decision("ask", f"{tool}: ask", "outside the repository")
    denied = apply_mode("none", asked, tool)
    assert denied is not None and (denied.decision, denied.by, denied.rule) == ("deny", "mode", asked.rule)
    assert denied.reason.startswith("outside the repository; mode: none denies")


REPEAT = "this exact call ran twice already in a row, with the same result"


def test_a_repeat_is_asked_about_under_policy_even_when_a_rule_allows_it() -> None:
    assert apply_mode("policy", ALLOW, "Read", repeat=REPEAT) is None
    assert apply_mode("policy", ASK, "Bash", repeat=REPEAT) is None
    # all lets it run (the trace still marks it); the floor, deny rules and none hold as ever
    ran = apply_mode("all", ALLOW, "Read", repeat=REPEAT)
    assert ran is not None and ran.allowed
    for mode in APPROVAL_MODES:
        floor = apply_mode(mode, FLOOR, "Bash", repeat=REPEAT)  # type: ignore[arg-type]
        assert floor is not None and floor.by == "floor"
    none = apply_mode("none", ALLOW, "Bash", repeat=REPEAT)
    assert none is not None and not none.allowed


def test_without_a_person_a_repeat_is_denied_saying_it_repeated() -> None:
    denied = repeat_denial(REPEAT, ALLOW)
    assert (denied.decision, denied.by, denied.rule) == ("deny", "mode", ALLOW.rule)
    assert denied.reason.startswith(f"{REPEAT} (rule {ALLOW.rule} would allow it otherwise); a repeated call needs a person")
    assert repeat_denial(REPEAT, ASK).reason.startswith(f"{REPEAT}; a repeated call")


def test_a_command_proven_read_only_keeps_that_proof_when_allowed() -> None:
    proven = Decision("allow", "Bash: read-only", "only reads", read_only=True)
    assert apply_mode("policy", proven, "Bash").read_only
    assert apply_mode("all", Decision("ask", "Bash: ask", "?", read_only=True), "Bash").read_only
    assert not apply_mode("policy", Decision("allow", "Bash: make *", "a rule"), "Bash").read_only
