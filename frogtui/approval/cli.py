"""``frogtui policy``: test rules without running anything.

    frogtui policy check [--repo DIR] [--rules FILE] (--read PATH | --write PATH | --edit PATH | --glob PATTERN | "COMMAND")
    frogtui policy trust [--repo DIR]      # let this repository's .frogtui.toml loosen rules
    frogtui policy untrust [--repo DIR]

``check`` prints the decision as its first word (``allow``, ``ask`` or ``deny``), then the rule and
the reason. Exit 0 for any decision, 2 for usage or rules errors.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from frogtui.approval.backstop import backstopped
from frogtui.approval.engine import PolicyEngine
from frogtui.approval.loading import (
    PROJECT_FILE,
    load_rules,
    trust_project,
    untrust_project,
)
from frogtui.approval.sandbox import make_sandbox
from frogtui.arguments import Parser
from frogtui.config import repo_folder
from frogtui.errors import ConfigError
from frogtui.protocol import ToolCall
from frogtui.tools.specs import TOOL_SPECS, runs_commands
from frogtui.tools.workspace import Workspace


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="frogtui policy", description="Test the approval rules without running anything.")
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="print the decision for a command or a path: allow, ask or deny")
    check.add_argument("--repo", default=".", help="repository root (default: current folder)")
    check.add_argument("--rules", type=Path, help="use this file as the user's rules")
    what = check.add_mutually_exclusive_group(required=True)
    for spec in TOOL_SPECS:  # --read PATH, --write PATH, --edit PATH, --glob PATTERN, then the command
        article = "an" if spec.name[0] in "AEIOU" else "a"
        if runs_commands(spec):
            what.add_argument(spec.subject_argument, nargs="?", help=f"{article} {spec.name} {spec.subject_argument}")
        else:
            metavar = "PATH" if spec.path_argument else spec.subject_argument.upper()
            how = "for" if spec.kind == "search" else "of"
            what.add_argument(f"--{spec.name.lower()}", metavar=metavar, help=f"{article} {spec.name} {how} {metavar}")
    for name, text in (("trust", f"trust this repository's {PROJECT_FILE} (it may then loosen rules)"), ("untrust", "forget that trust")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--repo", default=".", help="repository root (default: current folder)")
    return parser


def call_for(args: argparse.Namespace) -> ToolCall | None:
    """The call the options name: the tool's argument that says what a call does set to the value
    given, its other required arguments empty (None when they name none)."""
    for spec in TOOL_SPECS:
        value = getattr(args, spec.subject_argument if runs_commands(spec) else spec.name.lower(), None)
        if value is not None:
            arguments = {key: "" for key in spec.required}
            arguments[spec.subject_argument] = value
            return ToolCall("check", spec.name, arguments)
    return None


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        repo = repo_folder(args.repo)
        if args.action == "trust":
            digest = trust_project(repo)
            print(f"trusted {repo / PROJECT_FILE} (sha256 {digest[:12]}); a change to the file ends the trust")
            return 0
        if args.action == "untrust":
            print("forgotten" if untrust_project(repo) else "was not trusted")
            return 0
        call = call_for(args)
        if call is None:
            parser.error("give a COMMAND or one of --read, --write, --edit, --glob")
        rules = load_rules(repo, args.rules)
    except ConfigError as err:
        print(f"frogtui: {err}", file=sys.stderr)
        return 2
    workspace = Workspace(repo, tmp_dir=repo)  # no session temp folder for a check
    rules, no_backstop = backstopped(rules, make_sandbox(workspace, rules.sandbox))  # as a run would decide
    engine = PolicyEngine(workspace, rules)
    decision = engine.evaluate(call)
    floor = " (floor: no rule or mode lifts it)" if decision.floor else ""
    why = f" (why: {decision.justification})" if decision.justification else ""
    print(f"{decision.kind}\t{decision.rule}\t{decision.reason}{floor}{why}")
    for note in (*rules.notes, *([no_backstop] if no_backstop else [])):
        print(f"note: {note}", file=sys.stderr)
    return 0
