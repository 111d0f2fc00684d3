"""A proposal's change to one text file as hunks, and the file with only some of them applied.

The change is the tree's file against the command's, line by line (``difflib``, each line with its
``\\n``, so a missing final newline is a change of its own): every run of changed lines is an
*opcode*, and a hunk the person accepts or rejects is a run or a part of one (the review cuts a
run of more than 100 lines into blocks: ``vcs.hunks``). A hunk is a ``Span``: the tree's lines
``[old_start, old_end)`` replaced by the command's lines ``[new_start, new_end)``, 0-based, an
empty side's start where it would be.

``partial(before, after, accepted, rejected)`` is the file with the accepted hunks only: a
rejected hunk's old lines stay, its new lines are left out, exactly as the review's patch of the
accepted hunks would leave it. The spans come from the person's front end: they are checked to
cover every changed line of this very change exactly once (``HunksMismatch`` otherwise), so a
choice made against another text never lands.

The front end shows the same change: ``unified`` writes it as a git diff section (``vcs.hunks``
reads it into the review's files and hunks), from the same opcodes.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from frogtui.protocol import Span

CONTEXT_LINES = 3
SAFE_NAME = re.compile(r"[^A-Za-z0-9._/-]")
ENCODING = "utf-8"
ERRORS = "surrogateescape"


class HunksMismatch(ValueError):
    """The hunks chosen are not those of the change (another text, or spans that overlap or miss a line)."""


def lines_of(data: bytes) -> list[bytes]:
    """The lines of ``data``, each with its ``\\n`` (the last one without, when the file has none)."""
    lines = data.split(b"\n")
    out = [line + b"\n" for line in lines[:-1]]
    return out + [lines[-1]] if lines[-1] else out


def opcodes(old: Sequence[bytes], new: Sequence[bytes]) -> list[tuple[str, int, int, int, int]]:
    """``difflib``'s opcodes of ``old`` against ``new`` (the one computation both the front end's
    diff and the landing use)."""
    return difflib.SequenceMatcher(None, old, new, autojunk=True).get_opcodes()


def changes(before: bytes, after: bytes) -> list[Span]:
    """Every run of changed lines of ``before`` against ``after``, as spans."""
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes(lines_of(before), lines_of(after)) if tag != "equal"]


def unified(path: str, before: bytes | None, after: bytes) -> str:
    """The change as one ``git diff`` section (``CONTEXT_LINES`` of context, ``\\ No newline at end
    of file`` where a side has none), text read as UTF-8 with ``surrogateescape`` (every byte kept).
    ``path`` only names it (it picks the highlighter): written with every character but letters,
    digits and ``._-/`` as ``_``, so that no name can break the section's header."""
    old, new = lines_of(before or b""), lines_of(after)
    name = SAFE_NAME.sub("_", path) or "_"
    a, b = f"a/{name}", f"b/{name}"
    head = [f"diff --git {a} {b}\n"]
    if before is None:
        head += ["new file mode 100644\n", "--- /dev/null\n"]
    else:
        head.append(f"--- {a}\n")
    head.append(f"+++ {b}\n")
    body: list[str] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=True)
    groups = [[("insert", 0, 0, 0, len(new))]] if before is None and new else matcher.get_grouped_opcodes(CONTEXT_LINES)
    for group in groups:
        first, last = group[0], group[-1]
        old_len, new_len = last[2] - first[1], last[4] - first[3]
        body.append(f"@@ -{first[1] + (1 if old_len else 0)},{old_len} +{first[3] + (1 if new_len else 0)},{new_len} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                body += [_line(" ", line) for line in old[i1:i2]]
                continue
            body += [_line("-", line) for line in old[i1:i2]]
            body += [_line("+", line) for line in new[j1:j2]]
    return "".join(head + body)


def _line(sign: str, line: bytes) -> str:
    text = line.decode(ENCODING, ERRORS)
    return sign + text if text.endswith("\n") else f"{sign}{text}\n\\ No newline at end of file\n"


def partial(before: bytes, after: bytes, accepted: Sequence[Span], rejected: Sequence[Span]) -> bytes:
    """``before`` with only the ``accepted`` hunks of its change to ``after`` applied.

    Raises:
        HunksMismatch: ``accepted`` and ``rejected`` together are not every changed line of this
            change, each once.
    """
    old, new = lines_of(before), lines_of(after)
    runs = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in opcodes(old, new) if tag != "equal"]
    taken: dict[tuple[str, int], bool] = {}
    """Each changed line (``-`` and its old index, ``+`` and its new index): whether it is accepted."""
    for choice, spans in ((True, accepted), (False, rejected)):
        for span in spans:
            for key in _lines_of_span(span, runs):
                if key in taken:
                    raise HunksMismatch(f"the hunks chosen overlap at {'old' if key[0] == '-' else 'new'} line {key[1] + 1}")
                taken[key] = choice
    every = sum((i2 - i1) + (j2 - j1) for i1, i2, j1, j2 in runs)
    if len(taken) != every:
        raise HunksMismatch(f"the hunks chosen cover {len(taken)} of the {every} changed lines")
    out: list[bytes] = []
    at = 0
    for i1, i2, j1, j2 in runs:
        out += old[at:i1]
        out += [old[i] for i in range(i1, i2) if not taken[("-", i)]]
        out += [new[j] for j in range(j1, j2) if taken[("+", j)]]
        at = i2
    out += old[at:]
    return b"".join(out)


def _lines_of_span(span: Span, runs: list[Span]) -> list[tuple[str, int]]:
    """The changed lines a span names: a contiguous part of one run's lines (its removed lines,
    then its added ones), as the review's change groups and blocks are."""
    o1, o2, n1, n2 = span
    for i1, i2, j1, j2 in runs:
        if not (i1 <= o1 <= o2 <= i2 and j1 <= n1 <= n2 <= j2) or (o1 == o2 and n1 == n2):
            continue
        if o2 > o1 and n2 > n1 and (o2 != i2 or n1 != j1):
            continue  # removed and added lines of a run, but not where the two meet: not one piece
        if o1 == o2 and o1 != i2:
            continue  # only added lines: they come after every removed line of the run
        if n1 == n2 and n1 != j1:
            continue  # only removed lines: they come before every added line of the run
        return [("-", i) for i in range(o1, o2)] + [("+", j) for j in range(n1, n2)]
    raise HunksMismatch(f"no run of changed lines has the hunk at old lines {o1 + 1}-{o2}, new lines {n1 + 1}-{n2}")


def where(span: Span, accepted: Sequence[Span]) -> str:
    """Where a rejected hunk's old text is in the landed file (``lines 10-14``, ``line 3``), or
    where its new lines would have gone (``after line 9``): its old lines moved by what the
    ``accepted`` hunks above it added or removed."""
    o1, o2, m1, _m2 = span
    shift = sum((n2 - n1) - (i2 - i1) for i1, i2, n1, n2 in accepted if i2 <= o1 and n2 <= m1)
    first, last = o1 + shift + 1, o2 + shift
    if o2 == o1:
        return f"after line {first - 1}" if first > 1 else "at the start"
    return f"line {first}" if first == last else f"lines {first}-{last}"
