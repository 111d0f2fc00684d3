"""Approval gates: the pure policy (``decide``), the facts it decides on, the floor, the rules
files, the Bash sandbox, and the engine and the gate (``Approver``) the front ends use. See docs/APPROVALS.md."""
from __future__ import annotations

from frogtui.approval.answer import Ask, PersonAnswer, Question
from frogtui.approval.approver import Approver, audit_line
from frogtui.approval.decision import Decision
from frogtui.approval.engine import PolicyEngine
from frogtui.approval.facts import Action, PathFact, Places, gather
from frogtui.approval.loading import load_rules, trust_project, untrust_project
from frogtui.approval.modes import APPROVAL_MODES, ApprovalMode, apply_mode, repeat_denial
from frogtui.approval.policy import decide
from frogtui.approval.rules import Rule, RuleSet, SandboxSettings, parse_rules
from frogtui.approval.sandbox import Sandbox, make_sandbox

__all__ = [
    "APPROVAL_MODES",
    "ApprovalMode",
    "Action",
    "Approver",
    "Ask",
    "Decision",
    "PathFact",
    "Places",
    "PersonAnswer",
    "PolicyEngine",
    "Question",
    "Rule",
    "RuleSet",
    "Sandbox",
    "SandboxSettings",
    "apply_mode",
    "repeat_denial",
    "audit_line",
    "decide",
    "gather",
    "load_rules",
    "make_sandbox",
    "parse_rules",
    "trust_project",
    "untrust_project",
]
