"""The command line's parser: ``Parser`` (one-line usage errors, the closest flag suggested, help
wrapped between words), used by every subcommand's parser (they live with the code they run), and
how ``frogtui --help`` names the subcommands. Standard library only: every layer may use it."""
from __future__ import annotations

import argparse
import difflib
import re
import textwrap
from typing import Any, NoReturn

SUBCOMMAND_HELP = {
    "run": "frogtui run TASK (headless)",
    "acp": "frogtui acp (an agent for editors: Zed, JetBrains, Neovim)",
    "doctor": "frogtui doctor",
    "policy": "frogtui policy check",
    "demo": "frogtui demo",
    # eval (docs/EVAL.md)
    "eval": "frogtui eval TASKS (a task set in SWE-bench's format) · frogtui eval mine [REPO]",
    # saved sessions (docs/HEADLESS.md)
    "sessions": "frogtui sessions [--repo DIR] [--json] (the saved sessions, newest first)",
}
"""How ``frogtui --help`` names each subcommand (every one of ``cli.SUBCOMMANDS``)."""


class WholeWordsFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped between words only: a long word (``max_steps/max_tokens_per_turn/…``)
    may run past the width, never be cut in two; a ``/`` is a place to wrap."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return self._wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in self._wrap(text, width - len(indent)))

    @staticmethod
    def _wrap(text: str, width: int) -> list[str]:
        words = [_SLASH_LIST.sub("/" + _BREAK + " ", word) if _is_key_list(word) else word for word in text.split()]
        lines = textwrap.wrap(" ".join(words), max(width, 20), break_long_words=False, break_on_hyphens=False)
        return [line.replace(_BREAK + " ", "").replace(_BREAK, "") for line in lines]


_BREAK = "\x00"
"""Marks a place to wrap that is no space (after a ``/`` in a list of keys)."""
_SLASH_LIST = re.compile(r"(?<=\w)/(?=\w)")


def _is_key_list(word: str) -> bool:
    """``max_steps/max_tokens_per_turn/…``, not a path (``~/.config/frogtui/config.toml``)."""
    return "/" in word and not any(mark in word.rstrip(".,;)") for mark in ".~$")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line plus a hint (``--help``), exit 2,
    instead of argparse's usage block; a mistyped flag gets the closest real one suggested; its
    help is wrapped between words (``WholeWordsFormatter``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", WholeWordsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            message += _closest_flag(self, message[len("unrecognized arguments: "):].split())
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _closest_flag(parser: argparse.ArgumentParser, words: list[str]) -> str:
    flags = [flag for action in parser._actions for flag in action.option_strings]
    for word in words:
        if word.startswith("--"):
            match = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1)
            if match:
                return f"; did you mean {match[0]}?"
    return ""
