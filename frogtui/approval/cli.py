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
from frogtui.tools.workspace import Workspace


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="frogtui policy", description="Test the approval rules without running anything.")
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check", help="print the decision for a command or a path: allow, ask or deny")
    check.add_argument("--repo", default=".", help="repository root (default: current folder)")
    check.add_argument("--rules", type=Path, help="use this file as the user's rules")
    what = check.add_mutually_exclusive_group(required=True)
    what.add_argument("--read", metavar="PATH", help="a Read of PATH")
    what.add_argument("--write", metavar="PATH", help="a Write of PATH")
    what.add_argument("--edit", metavar="PATH", help="an Edit of PATH")
    what.add_argument("--glob", metavar="PATTERN", help="a Glob for PATTERN")
    what.add_argument("command", nargs="?", help="a Bash command")
    for name, text in (("trust", f"trust this repository's {PROJECT_FILE} (it may then loosen rules)"), ("untrust", "forget that trust")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--repo", default=".", help="repository root (default: current folder)")
    return parser


def call_for(args: argparse.Namespace) -> ToolCall:
    if args.read is not None:
        return ToolCall("check", "Read", {"file_path": args.read})
    if args.write is not None:
        return ToolCall("check", "Write", {"file_path": args.write, "content": ""})
    if args.edit is not None:
        return ToolCall("check", "Edit", {"file_path": args.edit, "old_string": "", "new_string": ""})
    if args.glob is not None:
        return ToolCall("check", "Glob", {"pattern": args.glob})
    return ToolCall("check", "Bash", {"command": args.command})


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
        if args.command is None and all(getattr(args, k) is None for k in ("read", "write", "edit", "glob")):
            parser.error("give a COMMAND or one of --read, --write, --edit, --glob")
        rules = load_rules(repo, args.rules)
    except ConfigError as err:
        print(f"frogtui: {err}", file=sys.stderr)
        return 2
    workspace = Workspace(repo, tmp_dir=repo)  # no session temp folder for a check
    rules, no_backstop = backstopped(rules, make_sandbox(workspace, rules.sandbox))  # as a run would decide
    engine = PolicyEngine(workspace, rules)
    decision = engine.evaluate(call_for(args))
    floor = " (floor: no rule or mode lifts it)" if decision.floor else ""
    print(f"{decision.kind}\t{decision.rule}\t{decision.reason}{floor}")
    for note in (*rules.notes, *([no_backstop] if no_backstop else [])):
        print(f"note: {note}", file=sys.stderr)
    return 0
