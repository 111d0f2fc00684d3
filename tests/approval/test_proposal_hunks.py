"""A proposal's text file accepted in part, on a real copy-on-write view: exactly the accepted
hunks land (adjacent ones too, a new file's, a file without a final newline), computed against
the tree's file the command ran on (changed since: stale, nothing lands), and hunks that are not
those of the change land nothing; the model is told which hunks of which file were not applied."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.protocol import FileHunks
from frogtui.tools.effect_hunks import HunksMismatch, changes, partial, unified, where
from frogtui.tools.landing import land, outcome
from tests.approval.test_proposals import Proposer
from tests.overlay import needs_overlay

LINES = "".join(f"line {n}\n" for n in range(1, 31))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "m.py").write_text(LINES)
    (root / "src" / "other.py").write_text("keep = 1\n")
    return root


@pytest.fixture
def propose(tree: Path, tmp_path: Path) -> Proposer:
    return Proposer(tree, tmp_path)


def hunks_of(tree: Path, proposal: object, path: str) -> list[tuple[int, int, int, int]]:
    return changes((tree / path).read_bytes(), (proposal.upper / path).read_bytes())  # type: ignore[attr-defined]


@needs_overlay
def test_exactly_the_accepted_hunks_land_adjacent_ones_too(tree: Path, propose: Proposer) -> None:
    # lines 3 and 5 (one unchanged line between them: one hunk of context, two changes) and line 20
    proposal = propose("sed -i -e 's/^line 3$/THREE/' -e 's/^line 5$/FIVE/' -e 's/^line 20$/TWENTY/' src/m.py && echo x >> src/other.py")
    three, five, twenty = hunks_of(tree, proposal, "src/m.py")
    assert (three, five, twenty) == ((2, 3, 2, 3), (4, 5, 4, 5), (19, 20, 19, 20))
    landed = land(proposal, hunks=(FileHunks("src/m.py", accepted=(three, twenty), rejected=(five,)),))
    assert landed.ok and set(landed.applied) == {"src/m.py", "src/other.py"}
    assert (tree / "src" / "m.py").read_text() == LINES.replace("line 3\n", "THREE\n").replace("line 20\n", "TWENTY\n")
    assert (tree / "src" / "other.py").read_text() == "keep = 1\nx\n", "a file not named in hunks lands whole"
    said = outcome(proposal, True, "", landed).observation
    assert said.startswith("Note: this command ran as a proposal, on a copy of the repository; "
                           "its changes to src/m.py were applied except 1 of 3 hunks (line 5)\n"), said
    proposal.discard()

    again = propose("sed -i -e 's/^THREE$/3/' -e 's/^line 5$/FIVE/' src/m.py")  # the other of two adjacent hunks
    first, second = hunks_of(tree, again, "src/m.py")
    assert land(again, hunks=(FileHunks("src/m.py", accepted=(second,), rejected=(first,)),)).ok
    assert (tree / "src" / "m.py").read_text() == LINES.replace("line 3\n", "THREE\n").replace("line 5\n", "FIVE\n").replace(
        "line 20\n", "TWENTY\n")


@needs_overlay
def test_where_a_hunk_not_applied_is_is_said_in_the_file_as_it_now_is(tree: Path, propose: Proposer) -> None:
    proposal = propose("sed -i -e '2i added one' -e '2i added two' -e '10,14d' -e 's/^line 30$/LAST/' src/m.py && printf tail >> src/m.py")
    spans = hunks_of(tree, proposal, "src/m.py")
    assert len(spans) == 3
    inserted, deleted, last = spans
    landed = land(proposal, hunks=(FileHunks("src/m.py", accepted=(inserted,), rejected=(deleted, last)),))
    assert landed.ok
    text = (tree / "src" / "m.py").read_text()
    assert text == LINES.replace("line 2\n", "added one\nadded two\nline 2\n"), "no final line without a newline: that hunk was left"
    said = outcome(proposal, True, "", landed).observation
    assert "its changes to src/m.py were applied except 2 of 3 hunks (lines 12-16, line 32)" in said, said
    assert text.splitlines()[11:16] == [f"line {n}" for n in range(10, 15)] and text.splitlines()[31] == "line 30"


@needs_overlay
def test_a_new_file_accepted_in_part(tree: Path, propose: Proposer) -> None:
    proposal = propose("seq 1 150 > src/new.txt")
    text = (proposal.upper / "src" / "new.txt").read_bytes()
    (whole,) = changes(b"", text)
    first, rest = (0, 0, 0, 100), (0, 0, 100, 150)  # the review cuts a run of more than 100 lines into blocks
    assert whole == (0, 0, 0, 150)
    landed = land(proposal, hunks=(FileHunks("src/new.txt", accepted=(rest,), rejected=(first,)),))
    assert landed.ok and landed.partly[0].left == ("at the start",)
    assert (tree / "src" / "new.txt").read_text() == "".join(f"{n}\n" for n in range(101, 151))


@needs_overlay
def test_a_tree_file_changed_since_the_command_ran_is_stale_and_nothing_lands(tree: Path, propose: Proposer) -> None:
    proposal = propose("sed -i -e 's/^line 3$/THREE/' -e 's/^line 20$/TWENTY/' src/m.py && echo x >> src/other.py")
    three, twenty = hunks_of(tree, proposal, "src/m.py")
    person = LINES.replace("line 25\n", "the person's line\n")
    (tree / "src" / "m.py").write_text(person)  # the same size: only the content tells
    landed = land(proposal, hunks=(FileHunks("src/m.py", accepted=(three,), rejected=(twenty,)),))
    assert landed.stale and "src/m.py" in landed.stale[0] and not landed.applied
    assert (tree / "src" / "m.py").read_text() == person and (tree / "src" / "other.py").read_text() == "keep = 1\n"
    assert "its changes were not applied: the tree changed meanwhile (src/m.py" in outcome(proposal, True, "", landed).observation


@needs_overlay
def test_hunks_that_are_not_the_changes_land_nothing(tree: Path, propose: Proposer) -> None:
    proposal = propose("sed -i -e 's/^line 3$/THREE/' -e 's/^line 20$/TWENTY/' src/m.py && echo x >> src/other.py")
    three, twenty = hunks_of(tree, proposal, "src/m.py")
    for wrong in (FileHunks("src/m.py", (three,), ()),  # a changed line in no hunk
                  FileHunks("src/m.py", (three, twenty), (three,)),  # one in two
                  FileHunks("src/m.py", ((3, 4, 3, 4),), (twenty,)),  # lines that did not change
                  FileHunks("src/other.py", ((0, 0, 1, 2),), ((0, 1, 0, 1),))):
        landed = land(proposal, hunks=(wrong,))
        assert landed.error.startswith("HunksMismatch: ") and not landed.applied, wrong
    assert (tree / "src" / "m.py").read_text() == LINES and (tree / "src" / "other.py").read_text() == "keep = 1\n"
    linked = propose("ln -sf other.py src/m.py")
    assert land(linked, hunks=(FileHunks("src/m.py", (), ()),)).error.startswith("HunksMismatch: src/m.py: only a text file")


def test_partial_keeps_every_byte_and_the_diff_is_the_same_change() -> None:
    before = b"a\r\nb\xff\nc\nd"
    after = b"A\r\nb\xff\nc\nd\n"
    first, last = changes(before, after)
    assert partial(before, after, (last,), (first,)) == b"a\r\nb\xff\nc\nd\n"
    assert partial(before, after, (first,), (last,)) == b"A\r\nb\xff\nc\nd"
    text = unified("x.txt", before, after)
    assert text.endswith("-d\n\\ No newline at end of file\n+d\n") and "b\udcff" in text
    with pytest.raises(HunksMismatch):
        partial(before, after, (first,), ())
    # blocks of one run: where the rejected one is depends on which of them landed above it
    assert where((0, 0, 100, 150), [(0, 0, 0, 100)]) == "after line 100" and where((0, 0, 0, 100), [(0, 0, 100, 150)]) == "at the start"
    assert where((4, 6, 4, 4), [(0, 1, 0, 3), (9, 10, 7, 8)]) == "lines 7-8"
