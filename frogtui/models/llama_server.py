"""``python -m frogtui.models.llama_server [--extra-buffers auto|on|off] ARGS``: llama-cpp-python's
OpenAI-compatible server (``python -m llama_cpp.server ARGS``, the same arguments) with llama.cpp's
extra weight buffers as frogtui chooses them for this CPU, build and quantisation.

``llama_cpp.server`` has no switch for them (llama-server's is ``--no-repack``): on a CPU where they
crash (AMX, llama.cpp issue 20824) it loads, then dies on its first request. ``auto`` (the default)
is frogtui's choice for ``--model``: ``[llama] extra_buffers`` in frogtui's config, else the answer
remembered in ``$XDG_CACHE_HOME/frogtui/llama-buffers.json``, else a probe in a model process of
its own, as frogtui's first load makes (``models/local.py``). The choice is one line on standard
error before the server starts. The tests' servers and ``bench/attempts.py`` start it this way.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

PREFIX = "frogtui.models.llama_server: "


def choose(setting: str, model: str | None) -> tuple[bool, str]:
    """(extra buffers on, why) for ``--extra-buffers SETTING`` and the served ``--model``."""
    if setting != "auto":
        return setting == "on", "--extra-buffers " + setting
    if not model:
        raise SystemExit(PREFIX + "--extra-buffers auto needs --model PATH.gguf (or give --extra-buffers on|off)")
    from frogtui.config import load_config
    from frogtui.errors import FrogtuiError
    from frogtui.models.local import extra_buffers_choice

    try:
        return extra_buffers_choice(Path(model), load_config()), "frogtui's choice for this CPU, build and quantisation"
    except FrogtuiError as err:
        raise SystemExit(PREFIX + str(err)) from None


def main(argv: list[str] | None = None) -> None:
    ours = argparse.ArgumentParser(add_help=False)
    ours.add_argument("--extra-buffers", choices=("auto", "on", "off"), default="auto")
    args, rest = ours.parse_known_args(sys.argv[1:] if argv is None else argv)
    served = argparse.ArgumentParser(add_help=False)
    served.add_argument("--model")
    on, why = choose(args.extra_buffers, served.parse_known_args(rest)[0].model)
    print(f"{PREFIX}llama.cpp's extra weight buffers {'on' if on else 'off'} ({why})", file=sys.stderr, flush=True)
    from llama_cpp.server.__main__ import main as serve

    from frogtui.models.llama_cpp import extra_weight_buffers

    sys.argv = [sys.argv[0], *rest]
    with extra_weight_buffers(on):
        serve()


if __name__ == "__main__":
    main()
