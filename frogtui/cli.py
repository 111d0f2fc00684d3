"""Command-line entry point: ``frogtui`` (the app), ``frogtui run`` (headless), ``frogtui acp`` (editors), ``frogtui doctor``,
``frogtui policy check``, ``frogtui demo``, ``frogtui eval`` (task sets). Each subcommand's parser lives with the code it runs."""
from __future__ import annotations

import difflib
import importlib
import sys

SUBCOMMANDS = {
    "run": "frogtui.headless:main",
    "doctor": "frogtui.doctor:main",
    "policy": "frogtui.approval.cli:main",
    "demo": "frogtui.demo:main",
    "acp": "frogtui.acp.cli:main",
    # eval (docs/EVAL.md)
    "eval": "frogtui.eval.cli:main",
    # saved sessions (docs/HEADLESS.md)
    "sessions": "frogtui.session.listing:main",
}
"""Each subcommand's ``module:main`` (its parser, a ``frogtui.arguments.Parser``, lives there); how
``frogtui --help`` names them: ``arguments.SUBCOMMAND_HELP``."""


def unknown_command(word: str) -> str:
    """The line for ``frogtui WORD`` when WORD is no subcommand: the closest one, or how to run a task."""
    match = difflib.get_close_matches(word, list(SUBCOMMANDS), n=1, cutoff=0.6)
    commands = ", ".join(SUBCOMMANDS)
    if match:
        return f"frogtui: unknown command {word!r}; did you mean 'frogtui {match[0]}'? (commands: {commands}; frogtui --help)"
    return f"frogtui: unknown command {word!r} (commands: {commands}); to run a task headless: frogtui run \"TASK\""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and not argv[0].startswith("-") and argv[0] not in SUBCOMMANDS:
        print(unknown_command(argv[0]), file=sys.stderr)
        return 2
    if argv and argv[0] in SUBCOMMANDS:
        target = SUBCOMMANDS[argv[0]]
        rest = argv[1:]
    else:
        target = "frogtui.ui.launch:main"
        rest = argv
    module_name, func = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise
        print(f"frogtui: this build has no {argv[0] if argv else 'app'} command yet", file=sys.stderr)
        return 2
    return int(getattr(module, func)(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
