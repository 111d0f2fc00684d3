"""``frogtui [--repo DIR] [--model SPEC] [--theme NAME] [--resume] [--approve MODE]``: open the app."""
from __future__ import annotations

import argparse
import sys

from frogtui.cli import Parser
from frogtui.config import APPROVAL_MODES, SETTINGS_HELP, load_config, repo_folder
from frogtui.errors import FrogtuiError
from frogtui.session import Session


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="frogtui",
        description="A terminal coding assistant: FrogNano-4B with a gate on every action. "
        "Other commands: frogtui run TASK (headless), frogtui doctor, frogtui policy check, frogtui demo.",
        epilog=SETTINGS_HELP,
    )
    parser.add_argument("--repo", default=".", help="repository root (default: current folder)")
    parser.add_argument(
        "--model", help="model spec: replay:FILE, PATH.gguf, hf:REPO[:QUANT], http(s)://HOST:PORT/v1[#MODEL] (config key: model)"
    )
    parser.add_argument("--theme", help="theme name, e.g. frog-dark or frog-light (config key: theme)")
    parser.add_argument("--resume", action="store_true", help="reopen the latest session of this repository")
    parser.add_argument("--approve", choices=APPROVAL_MODES, help="starting approval mode (default: policy; F2 cycles)")
    return parser


def main(argv: list[str]) -> int:
    """Parse the command line, open the app, and return its exit status (2 for bad input)."""
    args = build_parser().parse_args(argv)
    try:
        config = load_config(repo=repo_folder(args.repo), model_spec=args.model, theme=args.theme, approve=args.approve)
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=sys.stderr)
        return 2
    resume = None
    if args.resume:
        resume = Session.latest(config.repo)
        if resume is None:
            print(f"frogtui: no saved session for {config.repo}; start one without --resume", file=sys.stderr)
            return 2
    from frogtui.ui.app import FrogApp

    result = FrogApp(config, resume=resume).run()
    return int(result or 0)
