"""Command-line entry point: ``frogtui`` (the app), ``frogtui run`` (headless), ``frogtui acp`` (editors), ``frogtui doctor``,
``frogtui policy check``, ``frogtui demo``. Each subcommand's parser lives with the code it runs."""
from __future__ import annotations

import importlib
import sys

SUBCOMMANDS = {
    "run": "frogtui.headless:main",
    "doctor": "frogtui.doctor:main",
    "policy": "frogtui.approval.cli:main",
    "demo": "frogtui.demo:main",
    "acp": "frogtui.acp.cli:main",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
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
