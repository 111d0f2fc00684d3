"""The modal's hunks of a proposal's text file and the landing agree: for every choice of hunks,
the spans the modal reads off the review's change groups land (``effect_hunks.partial``) exactly
what the review's own patch of those groups leaves when git applies it. Odd bytes, odd names,
long runs cut into blocks and missing final newlines included."""
from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from frogtui.tools.effect_hunks import partial
from frogtui.ui.proposal_hunks import hunk_change, spans
from frogtui.vcs.hunks import HunkSelection, decode

NUMBERS = "".join(f"{n}\n" for n in range(1, 41))
CASES = {
    "two close changes and one far": (NUMBERS, NUMBERS.replace("3\n", "three\n", 1).replace("\n5\n", "\nfive\n").replace("30\n", "")),
    "insert at the start, append without newline": (NUMBERS, "top\n" + NUMBERS + "tail"),
    "a long run cut into blocks": (NUMBERS, NUMBERS.replace("20\n", "20\n" + "".join(f"new {n}\n" for n in range(150)))),
    "crlf, form feed, line separator, a lone cr": ("a\r\nb\x0cc\nd\u2028e\nf\rg\nh\n", "a\r\nB\x0cc\nd\u2028E\nf\rg\nh"),
    "a new file": (None, "".join(f"line {n}\n" for n in range(130))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_choice_of_hunks_lands_what_the_reviews_patch_leaves(name: str, tmp_path: Path) -> None:
    before, after = CASES[name]
    change = hunk_change('we"ird\npath ␊.py', before, after)
    assert change is not None
    lines = spans(change)
    assert [h.group_ids for h in change.review_hunks] == [[g.id] for g in change.groups], "one hunk per run (or block)"
    old = (before or "").encode()
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    choices = list(itertools.product([True, False], repeat=len(change.groups)))
    for choice in choices[:16]:
        for group, taken in zip(change.groups, choice, strict=True):
            group.accepted = taken
        accepted = tuple(lines[g.id] for g in change.groups if g.accepted)
        rejected = tuple(lines[g.id] for g in change.groups if not g.accepted)
        landed = partial(old, after.encode(), accepted, rejected)
        target = tmp_path / change.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(old)
        patch = HunkSelection([change]).to_patch()
        if patch:
            done = subprocess.run(["git", "apply", "-"], cwd=tmp_path, input=_as_existing(patch, before), capture_output=True)
            assert done.returncode == 0, decode(done.stderr)
        assert landed == target.read_bytes(), (name, choice)


def _as_existing(patch: bytes, before: str | None) -> bytes:
    """A new file's patch, applied over an empty file (as the landing computes it: against nothing)."""
    if before is not None:
        return patch
    name = patch.split(b"+++ b/")[1].split(b"\n")[0]
    return patch.replace(b"new file mode 100644\n", b"").replace(b"--- /dev/null\n", b"--- a/" + name + b"\n")
