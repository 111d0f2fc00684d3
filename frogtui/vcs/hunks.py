"""Files, hunks and change groups of a git diff, and the patch of the accepted ones.

A diff (``git diff --binary --no-renames``) is split into one ``FileChange`` per file section; the
hunks of text files are parsed with unidiff. Inside a hunk, each maximal run of changed lines is a
*change group*: the smallest thing that can be accepted or rejected (``git add -p`` splits at the
same places), except that a run longer than ``BLOCK_LINES`` (a new file, a rewrite, a deleted
file) is cut into blocks of at most that many lines, ending at a blank line where one is near, and
each block starts as a hunk of its own: a person can take or leave any part of a long change, and
never has to take a thousand lines to take one. A ``ReviewHunk`` is what the person sees and toggles: one or more consecutive groups
of one unidiff hunk; ``split`` cuts it into one hunk per group.

``HunkSelection.to_patch()`` builds a patch that ``git apply`` accepts: unaccepted removals become
context, unaccepted additions are dropped, and the hunk headers are recomputed. Text is handled
as UTF-8 with ``surrogateescape``, so any bytes (CRLF, Latin-1, no final newline) survive exactly.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import unidiff

ENCODING = "utf-8"
ERRORS = "surrogateescape"

Origin = Literal["session", "earlier", "during", "mixed"]
"""Whose a change is: the session's, the person's from before it started, the person's made while
it ran (``vcs.authorship``), or both the person's and the session's (ambiguous)."""

BLOCK_LINES = 100
"""The most changed lines one change group holds; a longer run is cut into blocks."""
BLOCK_MIN_LINES = 60
"""A block of a cut run ends early, after a blank line, once it holds this many lines."""

_HEADER_DROPPED_WHEN_PARTIAL = ("index ",)
_MODE_LINES = ("old mode ", "new mode ")


def decode(data: bytes) -> str:
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


@dataclass
class ChangeGroup:
    """A maximal run of changed lines (or a whole-file change, or a mode change)."""

    id: int
    origin: Origin = "session"
    accepted: bool = True
    seen: bool = False
    """Every line of it has been on the person's screen (the review sets it; see ``ui/review_pages``)."""
    source_first: int = 0
    """First source line it touches (for insertions: the line it goes before)."""
    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()


class GroupSelection:
    """Accept/reject state over a set of change groups (``groups``): shared by a hunk and a file."""

    groups: list[ChangeGroup]

    @property
    def accepted(self) -> bool:
        return all(g.accepted for g in self.groups)

    @property
    def partly_accepted(self) -> bool:
        return any(g.accepted for g in self.groups) and not self.accepted

    def set_accepted(self, value: bool) -> None:
        for group in self.groups:
            group.accepted = value

    def toggle(self) -> None:
        self.set_accepted(not self.accepted)

    @property
    def origin(self) -> Origin:
        origins = {g.origin for g in self.groups}
        return origins.pop() if len(origins) == 1 else "mixed"


@dataclass
class ReviewHunk(GroupSelection):
    """Consecutive change groups of one unidiff hunk, shown and toggled together."""

    file: FileChange
    hunk_index: int
    """Index into ``file.hunks`` (-1 for a whole-file or mode pseudo-hunk)."""
    group_ids: list[int]
    label: str = ""

    @property
    def groups(self) -> list[ChangeGroup]:
        return [self.file.groups[i] for i in self.group_ids]

    @property
    def can_split(self) -> bool:
        return len(self.group_ids) > 1

    def span(self) -> tuple[int, int]:
        """Where the lines to show start and end in the unidiff hunk: the groups with the context
        around and between them ((0, 0) for a pseudo-hunk)."""
        if self.hunk_index < 0:
            return 0, 0
        owners = self.file.line_groups[self.hunk_index]
        spans = self.file.group_spans()
        first = min(spans[gid][0] for gid in self.group_ids)
        last = max(spans[gid][1] for gid in self.group_ids)
        start, end = first, last + 1
        while start > 0 and owners[start - 1] is None and first - start < 3:
            start -= 1
        while end < len(owners) and owners[end] is None and end - last - 1 < 3:
            end += 1
        return start, end

    def lines(self) -> list[unidiff.patch.Line]:
        """The diff lines to show: the groups with the context around and between them."""
        if self.hunk_index < 0:
            return []
        start, end = self.span()
        return self.file.hunks[self.hunk_index][start:end]


@dataclass
class FileChange(GroupSelection):
    """One file section of the diff.

    Attributes:
        path: the file's path (the new one; the old one for a deletion), decoded for display.
        status: ``added``, ``deleted``, ``modified`` or ``binary``.
        header: the section's header lines (``diff --git``, modes, ``---``/``+++``).
        raw: the whole section text, used as is for whole-file changes.
        hunks: the unidiff hunks (empty for whole-file changes).
        line_groups: for each hunk, the group id owning each line (None for context).
        groups: every change group of the file, by id.
        mode_group: the id of the mode-change group, if the mode changed.
        whole: True when the file can only be taken as a whole (binary, empty, symlink type change).
    """

    path: str
    status: str
    header: list[str]
    raw: str
    hunks: list[unidiff.Hunk] = field(default_factory=list)
    line_groups: list[list[int | None]] = field(default_factory=list)
    groups: list[ChangeGroup] = field(default_factory=list)
    mode_group: int | None = None
    whole: bool = False
    review_hunks: list[ReviewHunk] = field(default_factory=list)
    held: str = ""
    """Why the change is never accepted by default ('' when nothing holds it): a binary change whose
    new content would run (``review.runs_as_code``)."""
    _spans: dict[int, tuple[int, int]] | None = field(default=None, repr=False, compare=False)

    def group_spans(self) -> dict[int, tuple[int, int]]:
        """For each group of a hunk, the positions of its first and last line in that hunk."""
        if self._spans is None:
            self._spans = {}
            for owners in self.line_groups:
                for position, owner in enumerate(owners):
                    if owner is not None:
                        first = self._spans.get(owner, (position, position))[0]
                        self._spans[owner] = (first, position)
        return self._spans

    def split(self, hunk: ReviewHunk) -> list[ReviewHunk]:
        """Replace ``hunk`` by one review hunk per change group; returns the new hunks."""
        if not hunk.can_split:
            return [hunk]
        base = hunk.label.split(" · ")[0]
        pieces = [ReviewHunk(self, hunk.hunk_index, [gid], f"{base} · line {self.groups[gid].source_first}") for gid in hunk.group_ids]
        at = self.review_hunks.index(hunk)
        self.review_hunks[at : at + 1] = pieces
        return pieces

    def _patch_text(self, selected: Callable[[ChangeGroup], bool], others_applied: bool) -> str:
        if not any(selected(g) for g in self.groups):
            return ""
        if self.whole:
            return self.raw
        mode_taken = self.mode_group is not None and selected(self.groups[self.mode_group])
        header = self.header
        if not all(selected(g) for g in self.groups) and self.status == ("added" if others_applied else "deleted"):
            header = _as_modification(header)  # some blocks of a new or deleted file: the file stays
        header = [
            line
            for line in header
            if not line.startswith(_HEADER_DROPPED_WHEN_PARTIAL) and (mode_taken or not line.startswith(_MODE_LINES))
        ]
        body, delta_old, delta_new = [], 0, 0
        for hunk, owners in zip(self.hunks, self.line_groups, strict=False):
            lines, shift = _rewrite_hunk(hunk, owners, lambda gid: selected(self.groups[gid]), others_applied)
            old_len = sum(1 for t, _ in lines if t in " -")
            new_len = sum(1 for t, _ in lines if t in " +")
            source_first = hunk.source_start if hunk.source_length else hunk.source_start + 1
            old_first = source_first + delta_old
            if any(t in "+-" for t, _ in lines):
                new_first = old_first + delta_new
                old_start = old_first if old_len else old_first - 1
                new_start = new_first if new_len else new_first - 1
                section = f" {hunk.section_header}" if hunk.section_header else ""
                body.append(f"@@ -{old_start},{old_len} +{new_start},{new_len} @@{section}\n")
                body.extend(t + v for t, v in lines)
                delta_new += new_len - old_len
            delta_old += shift
        if not body and not mode_taken:
            return ""
        if not body:
            header = [line for line in header if not line.startswith(("--- ", "+++ "))]
        return "".join(header) + "".join(body)


def _as_modification(header: list[str]) -> list[str]:
    """A new or deleted file's header as a change of a file that exists on both sides (when only
    some of its blocks are in the patch: the file is created or deleted by all of them only)."""
    minus = next(line for line in header if line.startswith("--- "))
    plus = next(line for line in header if line.startswith("+++ "))
    out = []
    for line in header:
        if line.startswith(("new file mode ", "deleted file mode ")):
            continue
        if line == "--- /dev/null\n":
            line = "--- " + _other_side(plus[4:], "a")
        elif line == "+++ /dev/null\n":
            line = "+++ " + _other_side(minus[4:], "b")
        out.append(line)
    return out


def _other_side(name: str, prefix: str) -> str:
    """``b/path`` as ``a/path`` (or the other way), keeping git's C quoting."""
    quote = '"' if name.startswith('"') else ""
    return f"{quote}{prefix}{name[len(quote) + 1 :]}"


def _rewrite_hunk(
    hunk: unidiff.Hunk, owners: list[int | None], selected: Callable[[int], bool], others_applied: bool
) -> tuple[list[tuple[str, str]], int]:
    """The hunk's lines with unselected groups undone, and how many lines those groups add to the
    base when ``others_applied`` (their added minus removed lines, else 0)."""
    out: list[tuple[str, str]] = []
    shift = 0
    keep_marker = True
    for line, owner in zip(hunk, owners, strict=False):
        kind, value = line.line_type, line.value
        if kind == "\\":
            if keep_marker:
                out.append((kind, value))
            continue
        keep_marker = True
        if owner is None or selected(owner):
            out.append((kind, value))
            continue
        undone = "+" if others_applied else "-"
        if kind == undone:
            out.append((" ", value))
        else:
            keep_marker = False
        if others_applied:
            shift += 1 if kind == "+" else -1
    return out, shift


@dataclass
class HunkSelection:
    """Every file of a diff with its accepted/rejected groups."""

    files: list[FileChange]

    def groups(self) -> list[tuple[FileChange, ChangeGroup]]:
        return [(f, g) for f in self.files for g in f.groups]

    def to_patch(self) -> bytes:
        """The patch of the accepted groups, for ``git apply`` on the diff's base tree."""
        return encode("".join(f._patch_text(lambda g: g.accepted, False) for f in self.files))

    def patch_of(self, selected: Callable[[ChangeGroup], bool], *, others_applied: bool = False) -> bytes:
        """The patch of the ``selected`` groups. With ``others_applied`` the patch applies to the
        diff's target minus the selected groups (reverse it to undo them in the working tree)."""
        return encode("".join(f._patch_text(selected, others_applied) for f in self.files))

    def unseen_accepted(self) -> list[ReviewHunk]:
        """The review hunks holding an accepted group that was never shown in full."""
        return [h for f in self.files for h in f.review_hunks if any(g.accepted and not g.seen for g in h.groups)]

    @property
    def accepted_count(self) -> int:
        return sum(1 for _, g in self.groups() if g.accepted)

    def paths(self, selected: Callable[[ChangeGroup], bool]) -> list[str]:
        """The paths of files with at least one ``selected`` group."""
        return sorted({f.path for f in self.files if any(selected(g) for g in f.groups)})


# parsing ----------------------------------------------------------------------------------
def parse_diff(diff: bytes) -> HunkSelection:
    """Parse ``git diff --binary --no-renames`` output into files, hunks and change groups
    (every group accepted, origin ``session``)."""
    return HunkSelection([parse_section(section) for section in split_sections(decode(diff))])


def diff_lines(text: str) -> list[str]:
    """The lines of a diff, each with its ``\\n``: cut at ``\\n`` only. ``str.splitlines`` also cuts
    at a form feed, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028/2029 and a lone ``\\r`` inside a file's line:
    what follows one would read as a line of its own (dropped from view, or a forged ``diff --git``)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def split_sections(text: str) -> list[str]:
    """Cut a diff into its ``diff --git`` sections (no hunk line can start with ``diff``)."""
    sections: list[list[str]] = []
    for line in diff_lines(text):
        if line.startswith("diff --git ") or not sections:
            sections.append([line])
        else:
            sections[-1].append(line)
    return ["".join(s) for s in sections if s[0].startswith("diff --git ")]


def section_path(first_line: str) -> str:
    """The path named by a ``diff --git a/P b/P`` line (both sides equal without renames)."""
    rest = first_line[len("diff --git ") :].rstrip("\n")
    if rest.startswith('"'):
        return c_unquote(rest)[2:]
    length = (len(rest) - 5) // 2
    return rest[2 : 2 + length]


def c_unquote(text: str) -> str:
    """The first C-quoted string at the start of ``text`` (git's quoting of odd paths)."""
    escapes = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\", "a": b"\a", "b": b"\b", "f": b"\f", "r": b"\r", "v": b"\v"}
    out = bytearray()
    i = 1
    while i < len(text) and text[i] != '"':
        char = text[i]
        if char == "\\":
            nxt = text[i + 1]
            if nxt in "01234567":
                out.append(int(text[i + 1 : i + 4], 8))
                i += 4
                continue
            out += escapes.get(nxt, nxt.encode())
            i += 2
            continue
        out += encode(char)
        i += 1
    return decode(bytes(out))


def parse_section(section: str) -> FileChange:
    """One file section: header, unidiff hunks and change groups."""
    lines = diff_lines(section)
    path = section_path(lines[0])
    body_at = next((i for i, line in enumerate(lines) if line.startswith(("@@ ", "GIT binary patch", "Binary files "))), len(lines))
    header = lines[:body_at]
    status = "modified"
    if any(line.startswith("new file mode") for line in header):
        status = "added"
    elif any(line.startswith("deleted file mode") for line in header):
        status = "deleted"
    change = FileChange(path=path, status=status, header=header, raw=section)
    if body_at < len(lines) and not lines[body_at].startswith("@@ "):
        change.status = "binary"
    hunks = _unidiff_hunks(section, lines[body_at:]) if change.status != "binary" else None
    if hunks is None or (not hunks and status in ("added", "deleted")) or any(
        line.startswith(("new file mode 120000", "deleted file mode 120000")) for line in header
    ):
        change.whole = True
        change.groups = [ChangeGroup(0)]
        change.review_hunks = [ReviewHunk(change, -1, [0], _whole_label(change))]
        return change
    if any(line.startswith("old mode ") for line in header):
        old = next(h for h in header if h.startswith("old mode "))[9:].strip()
        new = next(h for h in header if h.startswith("new mode "))[9:].strip()
        change.mode_group = len(change.groups)
        change.groups.append(ChangeGroup(change.mode_group))
        change.review_hunks.append(ReviewHunk(change, -1, [change.mode_group], f"mode {old} → {new}"))
    change.hunks = hunks
    for index, hunk in enumerate(hunks):
        owners, cut = _assign_groups(hunk, change.groups)
        change.line_groups.append(owners)
        ids = sorted({o for o in owners if o is not None})
        if cut:  # a long run was cut into blocks: each block is a hunk of its own from the start
            spans = _block_lines(hunk, owners)
            for gid in ids:
                change.review_hunks.append(ReviewHunk(change, index, [gid], f"{_hunk_label(hunk)} · {spans[gid]}"))
        else:
            change.review_hunks.append(ReviewHunk(change, index, ids, _hunk_label(hunk)))
    return change


def _unidiff_hunks(section: str, body: list[str]) -> list[unidiff.Hunk] | None:
    """The hunks of a text section, or None when unidiff's reading does not give back the exact
    text (then the file is taken whole)."""
    try:
        patch = unidiff.PatchSet(diff_lines(section))
    except unidiff.UnidiffParseError:
        return None
    if len(patch) != 1:
        return None
    hunks = list(patch[0])
    rebuilt = "".join(line for line in body if not line.startswith("@@ "))
    if "".join(str(line) for hunk in hunks for line in hunk) != rebuilt:
        return None
    return hunks


def _block_starts(lines: list[unidiff.patch.Line]) -> set[int]:
    """Where a run of more than ``BLOCK_LINES`` changed lines is cut: the indices (into ``lines``)
    of the lines that start a new block."""
    starts: set[int] = set()
    run: list[int] = []
    for index, line in enumerate([*lines, None]):
        if line is not None and line.line_type in "+-" and line.line_type:
            run.append(index)
            continue
        if line is not None and line.line_type == "\\":
            continue
        if len(run) > BLOCK_LINES:
            size = 0
            for position, at in enumerate(run):
                blank_before = position > 0 and not lines[run[position - 1]].value.strip()
                if size >= BLOCK_LINES or (size >= BLOCK_MIN_LINES and blank_before):
                    starts.add(at)
                    size = 0
                size += 1
        run = []
    return starts


def _assign_groups(hunk: unidiff.Hunk, groups: list[ChangeGroup]) -> tuple[list[int | None], bool]:
    """The group owning each line of ``hunk`` (None for context), new groups appended to
    ``groups``; and whether a long run was cut into blocks."""
    lines_of_hunk = list(hunk)
    starts = _block_starts(lines_of_hunk)
    owners: list[int | None] = []
    current: ChangeGroup | None = None
    lines: dict[int, tuple[list[str], list[str]]] = {}  # lists while reading: tuples grow quadratically
    last_source = hunk.source_start - 1 if hunk.source_length else hunk.source_start
    for index, line in enumerate(lines_of_hunk):
        if line.line_type == "\\":
            owners.append(owners[-1] if owners else None)
            continue
        if line.line_type == " ":
            current = None
            owners.append(None)
            last_source = line.source_line_no or last_source
            continue
        if current is None or index in starts:
            current = ChangeGroup(len(groups), source_first=last_source + 1)
            groups.append(current)
            lines[current.id] = ([], [])
        if line.line_type == "-":
            lines[current.id][0].append(line.value)
            last_source = line.source_line_no or last_source
        else:
            lines[current.id][1].append(line.value)
        owners.append(current.id)
    for gid, (removed, added) in lines.items():
        groups[gid].removed, groups[gid].added = tuple(removed), tuple(added)
    return owners, bool(starts)


def _block_lines(hunk: unidiff.Hunk, owners: list[int | None]) -> dict[int, str]:
    """Which lines each group of ``hunk`` covers: ``lines 101–200`` (the new file's), or
    ``old lines …`` for a group that only removes."""
    new: dict[int, list[int]] = {}
    old: dict[int, list[int]] = {}
    for line, owner in zip(hunk, owners, strict=False):
        if owner is not None and line.line_type in ("+", "-"):
            numbers = (new if line.line_type == "+" else old).setdefault(owner, [])
            numbers.append(line.target_line_no if line.line_type == "+" else line.source_line_no)
    labels = {gid: f"old lines {numbers[0]}–{numbers[-1]}" for gid, numbers in old.items()}
    labels.update({gid: f"lines {numbers[0]}–{numbers[-1]}" for gid, numbers in new.items()})
    return labels


def _hunk_label(hunk: unidiff.Hunk) -> str:
    return f"@@ -{hunk.source_start},{hunk.source_length} +{hunk.target_start},{hunk.target_length} @@ {hunk.section_header}".rstrip()


def _whole_label(change: FileChange) -> str:
    if change.status == "binary":
        return "binary file changed"
    if change.status == "added":
        return "new file"
    if change.status == "deleted":
        return "file deleted"
    return "whole file"
