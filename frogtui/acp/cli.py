"""``frogtui acp [--repo DIR] [--model SPEC]``: an ACP v1 agent on stdin/stdout.

The protocol's descriptors are set aside before anything heavy is imported (see ``stdio``);
logs go to stderr and to each session's log."""
from __future__ import annotations

import argparse
import sys

STDIO_LIMIT = 50 * 1024 * 1024
"""The longest message frogtui reads (the SDK's default)."""


def build_parser() -> argparse.ArgumentParser:
    from frogtui.arguments import Parser
    from frogtui.config import SETTINGS_HELP

    parser = Parser(
        prog="frogtui acp",
        description="Run frogtui as an Agent Client Protocol agent on stdin/stdout, for Zed, JetBrains, Neovim and Toad (docs/ACP.md).",
        epilog=SETTINGS_HELP,
    )
    parser.add_argument("--repo", help="repository root for every session (default: the cwd the editor sends)")
    parser.add_argument(
        "--model", help="model spec: replay:FILE, PATH.gguf, hf:REPO[:QUANT], http(s)://HOST:PORT/v1[#MODEL] (config key: model)"
    )
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from frogtui.acp.stdio import guard_stdio

    pipes = guard_stdio()
    import asyncio
    import logging

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="frogtui acp: %(levelname)s %(name)s: %(message)s")
    from frogtui.acp.server import serve

    try:
        asyncio.run(serve(pipes, repo=args.repo, model_spec=args.model, limit=STDIO_LIMIT))
    except KeyboardInterrupt:
        return 130
    return 0
