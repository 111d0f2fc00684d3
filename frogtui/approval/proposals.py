"""A proposal's effects judged by the path rules (``judge``), and the gate's answer (``verdict``).

Each effect is judged as a Write of each path it writes (a deletion is a write; a rename writes
both paths; a deleted folder every file under it): the floor, the deny, ask and allow rules, the
Write default. Then, per effect:

* a FIFO or socket, and Python bytecode (a cache that runs instead of its source), are left out:
  never carried over, never in the way;
* a path git ignores (a cache, a build output, ``.venv``, ``node_modules``) that no rule decides
  lands without asking, unless its file runs later (``Effect.runs_later``) or it deletes or
  rewrites an ignored file that is not a cache (``.env``, a local database: no checkpoint holds
  an ignored file, so undo could not bring it back);
* a control file (what git or a hook runs at the next commit) is asked about even where a rule
  allows writing it; so is a link that points outside the repository;
* the approval mode then applies (``apply_mode``: ``all`` lands what a person would be asked
  about, never the floor or a deny rule).

All allowed: the effects land without a question. Any denied: none lands. Otherwise a person is
asked; without one (``frogtui run --approve policy``) none lands, and the model is told each
effect and the rule that stopped it.
"""
from __future__ import annotations

import os

from frogtui.approval.answer import Judged, Verdict
from frogtui.approval.decision import Decision, strictest
from frogtui.approval.engine import PolicyEngine, WriteDecisions
from frogtui.approval.modes import ApprovalMode, apply_mode
from frogtui.approval.rules import path_matches
from frogtui.protocol import Approval
from frogtui.tools.effects import Effect, in_cache, left_out
from frogtui.tools.proposals import Proposal
from frogtui.tools.specs import WRITE

CACHE_RULE = "ignored by git (a cache or build output)"
CONTROL_RULE = "control file"
LINK_OUT_RULE = "link out of the repository"
LEFT_OUT_RULE = "not carried over"
TOO_LARGE_RULE = "too large to review"
MAX_LINES = 40
"""Effects named one per line in what the model is told (then how many more)."""


def judge(engine: PolicyEngine, proposal: Proposal, mode: ApprovalMode, *, label: str = "") -> list[Judged]:
    """Every effect of ``proposal`` with what the rules, under ``mode`` (named ``label``, as
    ``apply_mode`` names it), say of it."""
    if not proposal.effects.complete:
        return [Judged(e, "deny", TOO_LARGE_RULE, too_large(proposal)) for e in proposal.effects]
    judged: list[Judged] = []
    folders: list[Judged] = []
    """New folders judged ``allow``: a plain file or folder made inside one takes its verdict
    (``npm install``'s 100,000 files are one judgement), unless it runs later or a stricter rule
    names it."""
    strict = [r for r in engine.rules.rules if r.tool == WRITE.name and r.decision != "allow"]
    home, root = str(engine.places.home), str(proposal.root)
    writes = engine.write_decisions()
    for effect in proposal.effects:
        inside = next((f for f in reversed(folders) if effect.path.startswith(f.effect.path + "/")), None)
        plain = effect.kind == "added" and effect.after is not None and effect.after.kind in ("file", "dir")
        if (inside is not None and plain and not effect.runs_later and not left_out(effect)
                and not any(path_matches(r.match, effect.path, os.path.join(root, effect.path), home) for r in strict)):
            reason = f"in {inside.effect.path}/, a new folder that is allowed ({inside.rule})"
            judged.append(Judged(effect, "allow", inside.rule, reason, inside.ignored, by=inside.by))
            continue
        one = _judge_one(engine, writes, proposal, effect, mode, label)
        if effect.kind == "added" and effect.is_dir and one.verdict == "allow":
            folders.append(one)
        judged.append(one)
    return judged


def _judge_one(engine: PolicyEngine, writes: WriteDecisions, proposal: Proposal, effect: Effect, mode: ApprovalMode,
               label: str) -> Judged:
    ignored = _ignored(effect, proposal.ignored)
    why = left_out(effect)
    if why:
        return Judged(effect, "skip", LEFT_OUT_RULE, why, ignored)
    decisions = [writes.decide(path.rstrip("/")) for path in _judged_paths(engine, effect, str(proposal.root))]
    decision = strictest(decisions)
    assert decision is not None
    decision = _adjusted(decision, effect, ignored, str(proposal.root))
    answer = apply_mode(mode, decision, WRITE.name, label=label)
    if answer is None:
        return Judged(effect, "ask", decision.rule, decision.reason, ignored)
    return Judged(effect, "allow" if answer.allowed else "deny", answer.rule or decision.rule, answer.reason, ignored, by=answer.by)


def _judged_paths(engine: PolicyEngine, effect: Effect, root: str) -> list[str]:
    """The paths of ``effect`` to decide as Writes: its own (a rename's both), and of the files
    under a deleted or renamed folder those a deny or ask Write rule names (the folder's own
    decision covers the others: a rule that allows the folder allows what is in it)."""
    tops = [effect.source, effect.path] if effect.source else [effect.path]
    if not effect.files:
        return tops
    strict = [r for r in engine.rules.rules if r.tool == WRITE.name and r.decision != "allow"]
    home = str(engine.places.home)
    named = [
        f"{top}/{name.rstrip('/')}" for top in tops for name in effect.files
        if any(path_matches(r.match, f"{top}/{name.rstrip('/')}", os.path.join(root, top, name), home) for r in strict)
    ]
    return [*tops, *named]


def _adjusted(decision: Decision, effect: Effect, ignored: bool, root: str) -> Decision:
    """The Write decision with the proposal's own defaults (module docstring)."""
    if decision.kind == "deny":
        return decision
    default = decision.kind == "ask" and decision.rule == f"{WRITE.name}: ask (default)"
    if default and ignored and not effect.runs_later and _loses_nothing(effect):
        return Decision("allow", CACHE_RULE, f"{effect.path} is ignored by git and runs nothing later")
    if decision.kind == "allow" and effect.runs_later.startswith("a control file"):
        return Decision("ask", CONTROL_RULE, f"{effect.path} is {effect.runs_later}")
    if decision.kind == "allow" and _points_out(effect, root):
        assert effect.after is not None
        return Decision("ask", LINK_OUT_RULE, f"{effect.path} is a link to {effect.after.target}, outside the repository")
    return decision


def _loses_nothing(effect: Effect) -> bool:
    """Whether landing ``effect`` on an ignored path loses nothing that undo could not bring back
    (no checkpoint holds an ignored file): it only adds, or every path it writes lies in a cache
    or a build output (``tools.effects.in_cache``). Deleting or rewriting ``.env`` or a local
    database is asked about."""
    if effect.kind == "added" and effect.before is None:
        return True
    return all(in_cache(path) for path in (effect.source, effect.path) if path)


def _ignored(effect: Effect, ignored: frozenset[str]) -> bool:
    return effect.path in ignored and (not effect.source or effect.source in ignored)


def _points_out(effect: Effect, root: str) -> bool:
    after = effect.after
    if after is None or after.kind != "link":
        return False
    target = os.path.normpath(os.path.join(root, os.path.dirname(effect.path), after.target))
    return not (target == root or target.startswith(root.rstrip("/") + "/"))


def too_large(proposal: Proposal) -> str:
    """Why none of a proposal whose effects were not all read lands (``Effects.complete``)."""
    if proposal.effects.why:  # folders nested too deep, a path too long, a folder that cannot be read
        return f"{proposal.effects.why}: more than frogtui reads to review, so what it did cannot be judged"
    return (f"the command left more than {proposal.effects.limit:,} files and folders changed, more than frogtui reads to "
            "review, so what it did cannot be judged; split it into smaller commands")


def too_large_answer(proposal: Proposal) -> Approval:
    """None of a proposal lands whose effects were not all read, with or without effects read."""
    why = f"{proposal.ran_as}, and none of its changes was applied: {too_large(proposal)}"
    return Approval("deny", why, by="rule", rule=TOO_LARGE_RULE)


def overall(judged: list[Judged]) -> Verdict:
    """The proposal's verdict: ``deny`` when one effect is denied, ``ask`` when one needs a
    person, else ``allow`` (left-out effects count for nothing)."""
    verdicts = {j.verdict for j in judged}
    return "deny" if "deny" in verdicts else "ask" if "ask" in verdicts else "allow"


def listing(judged: list[Judged], *, limit: int = MAX_LINES) -> str:
    """The effects, one per line with their verdict and rule: what stopped the proposal first."""
    order = {"deny": 0, "ask": 1, "allow": 2, "skip": 3}
    ranked = sorted(judged, key=lambda j: order[j.verdict])
    lines = [f"- {j.line()}" for j in ranked[:limit]]
    if len(ranked) > limit:
        lines.append(f"- … and {len(ranked) - limit} more effect(s)")
    return "\n".join(lines)


def stopped_by(judged: list[Judged]) -> str:
    """The rule(s) that stopped the proposal, for the approval's ``rule``."""
    worst = "deny" if any(j.verdict == "deny" for j in judged) else "ask"
    rules = list(dict.fromkeys(j.rule for j in judged if j.verdict == worst))
    return "; ".join(rules[:4]) + ("; …" if len(rules) > 4 else "")


def allowed_answer(judged: list[Judged]) -> Approval:
    """Every effect allowed: they land, named by the rules that allowed them."""
    landing = [j for j in judged if j.verdict == "allow"]
    rules = list(dict.fromkeys(j.rule for j in landing))
    rule = "; ".join(rules[:4]) + ("; …" if len(rules) > 4 else "")
    reason = f"ran as a proposal; its {len(landing)} effect(s) are allowed" if landing else "ran as a proposal; it changed nothing"
    by = "mode" if any(j.by == "mode" for j in landing) else "rule"
    return Approval("allow", reason, by=by, rule=rule, accepted=tuple(j.effect.path for j in landing))


def denied_answer(judged: list[Judged], *, by: str, why: str) -> Approval:
    """None lands: ``why``, then every effect with the rule that decided it (``by``: who
    decided; a denying effect's own decider, the floor or a rule, when there is one)."""
    deciders = [j.by for j in judged if j.verdict == "deny"]
    by = "floor" if "floor" in deciders else deciders[0] if deciders else by
    return Approval("deny", f"{why}:\n{listing(judged)}", by=by, rule=stopped_by(judged))


def question_decision(judged: list[Judged]) -> Decision:
    """What the person is asked, as a policy decision: the effects that need them."""
    return Decision("ask", stopped_by(judged), f"the command ran as a proposal; its effects:\n{listing(judged)}")


SHOWN_ONE_BY_ONE = 200
"""Effects a person is shown one by one (with their diffs) at most; the rest are counted."""


def for_a_person(judged: list[Judged] | tuple[Judged, ...], limit: int = SHOWN_ONE_BY_ONE) -> tuple[list[Judged], list[str], list[str]]:
    """How a person is shown a proposal's effects: those named one by one (every one that runs
    later or is denied among them), the group lines (ignored paths by top folder, with counts; the
    rest past ``limit``, counted), and the paths only a group line holds (they land with the
    accepted ones)."""
    shown: list[Judged] = []
    groups: dict[str, list[str]] = {}
    unlisted: list[str] = []
    for one in judged:
        effect = one.effect
        quiet = one.ignored and not effect.runs_later and one.verdict != "deny"
        if quiet or (len(shown) >= limit and not effect.runs_later and one.verdict != "deny"):
            top = effect.path.split("/", 1)[0] + ("/" if "/" in effect.path or effect.is_dir else "") if quiet else ""
            groups.setdefault(top, []).append(one.verdict)
            unlisted.append(effect.path)
            continue
        shown.append(one)
    lines = []
    for top, verdicts in groups.items():
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        what = f"{top}: {len(verdicts)} ignored path(s) changed" if top else f"… and {len(verdicts)} more effect(s)"
        lines.append(f"{what} ({counts})")
    return shown, lines, unlisted
