"""The effects of one simple command: a scheduler (the floor), else the program's own analyser
(``special.SPECIAL``), else its row of the table (``programs.PROGRAMS``), with the files its words
name as written (``write_targets``); read-only only when the read-only default knows every option
(``known``: failing closed). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from frogtui.approval.shell.effects import program_name, write_targets
from frogtui.approval.shell.known import unknown_option
from frogtui.approval.shell.model import Effects
from frogtui.approval.shell.programs import PROGRAMS, SCHEDULERS, VERB_SCHEDULERS, table_effects
from frogtui.approval.shell.special import special_for
from frogtui.approval.shell.words import Word


def program_effects(words: Sequence[Word]) -> Effects:
    """The effects of one simple command (program first, wrappers removed)."""
    if not words:
        return Effects()
    name = program_name(words[0].text)
    own = tuple(write_targets(words))
    if name in SCHEDULERS:
        verb = [w.text for w in words[1:] if not w.text.startswith("-")][:1] if name in VERB_SCHEDULERS else [w.text for w in words[1:]]
        looks = set(verb) & SCHEDULERS[name]
        if not looks:
            return Effects(writes=own, floor=f"{name} schedules code to run later, outside frogtui and its sandbox")
    special = special_for(name)
    if special is not None:
        found = special.analyse(name, list(words[1:]))
        return _known_only(name, words, replace(found, writes=(*own, *found.writes)))
    program = PROGRAMS.get(name)
    if program is None:
        return Effects(writes=own)
    found = table_effects(name, program, list(words[1:]))
    return _known_only(name, words, replace(found, writes=(*own, *found.writes), read_only=found.read_only and not own))


def _known_only(name: str, words: Sequence[Word], found: Effects) -> Effects:
    """``found``, read-only only when every option is one the read-only default knows
    (``known``: failing closed)."""
    if found.read_only and unknown_option(name, words[1:]) is not None:
        return replace(found, read_only=False)
    return found
