"""bashlex, bounded: a parse that always ends (bashlex loops forever on some hostile input), and
the parser's own errors turned into one ``Unparseable`` reason so that the policy asks."""
from __future__ import annotations

import re
import sys
from typing import Any

import bashlex
import bashlex.errors

from frogtui.approval.shell.wrappers import TIME_WORD

MAX_COMMAND_CHARS = 20_000
PARSE_BUDGET_BASE = 500_000
PARSE_BUDGET_PER_CHAR = 1_000
"""Traced events the parser may use: ~300 per character are typical; a runaway parse stops here."""
_TIME_KEYWORD = re.compile(r"(^|[;&|(){}!\n]|\bdo|\bthen|\belse)(\s*)time(?=\s)")


class Unparseable(Exception):
    """Why a command cannot be analysed (the policy asks)."""


class _OverBudget(BaseException):
    """Raised from the trace function to stop a parse that runs away (a BaseException, so that no
    ``except Exception`` inside the parser swallows it)."""


def _bounded_parse(source: str) -> list[Any]:
    """``bashlex.parse`` with a budget of executed lines: bashlex loops forever on some hostile
    input (e.g. an unterminated ``${`` inside quotes), and the approver must always answer."""
    budget = PARSE_BUDGET_BASE + PARSE_BUDGET_PER_CHAR * len(source)
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        if count > budget:
            raise _OverBudget
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        return list(bashlex.parse(source))
    except _OverBudget:
        raise Unparseable("the parser gave up on this command (it would not terminate)") from None
    finally:
        sys.settrace(previous)


def parse_shell(source: str) -> tuple[list[Any], str]:
    """The parse trees of ``source`` and the text their positions refer to."""
    if len(source) > MAX_COMMAND_CHARS:
        raise Unparseable(f"the command is longer than {MAX_COMMAND_CHARS} characters")
    try:
        return _bounded_parse(source), source
    except bashlex.errors.ParsingError as err:
        raise Unparseable(f"cannot parse the command: {err}") from None
    except NotImplementedError as err:
        if "time" in str(err) and _TIME_KEYWORD.search(source):
            return parse_shell(_TIME_KEYWORD.sub(lambda m: f"{m.group(1)}{m.group(2)}{TIME_WORD}", source))
        raise Unparseable(f"uses shell syntax the analyser does not support ({err})") from None
    except (IndexError, AttributeError, TypeError, ValueError, AssertionError) as err:
        # bashlex's own bugs on hostile input: treated like any other unparseable command
        raise Unparseable(f"cannot parse the command ({type(err).__name__} in the parser)") from None
