"""Real repositories with every hard case git handles, for the vcs tests."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

SPLITTABLE = "".join(f"line {i}\n" for i in range(1, 41))


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, env={**os.environ, **(env or {})}
    )
    return result.stdout.decode("utf-8", "surrogateescape")


def write(repo: Path, name: str, data: bytes | str, mode: int | None = None) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    if mode is not None:
        path.chmod(mode)


def make_base_repo(repo: Path) -> Path:
    """One commit holding files of every kind."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    write(repo, "many.txt", SPLITTABLE)
    write(repo, "old.txt", "to be deleted\n")
    write(repo, "long_old.txt", "".join(f"gone {n}\n" if n % 40 else "\n" for n in range(230)))
    write(repo, "rename_me.py", "def f():\n    return 1\n" * 3)
    write(repo, "img.bin", bytes(range(256)) * 4)
    write(repo, "nonl.txt", "first\nlast without newline")
    write(repo, "gets_nl.txt", "alpha\nbeta")
    write(repo, "crlf.txt", "one\r\ntwo\r\nthree\r\nfour\r\n")
    write(repo, "run.sh", "#!/bin/sh\necho hi\n", 0o644)
    write(repo, "latin1.txt", "caf\xe9\nna\xefve\n".encode("latin-1"))
    write(repo, "dir with space/file one.txt", "a\nb\nc\n")
    write(repo, "we\"ird.txt", "quoted\n")
    write(repo, ".gitignore", "*.log\n")
    os.symlink("many.txt", repo / "link")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def make_session_changes(repo: Path) -> None:
    """What an agent session might do: every kind of change."""
    text = SPLITTABLE.replace("line 5\n", "line five\n").replace("line 9\n", "line nine\nline 9b\n")
    text = text.replace("line 30\n", "").replace("line 40\n", "line forty\n")
    write(repo, "many.txt", text)
    (repo / "old.txt").unlink()
    (repo / "long_old.txt").unlink()  # a deletion cut into blocks
    write(repo, "long_new.txt", "".join(f"new {n}\n" if n % 45 else "\n" for n in range(250)) + "no final newline")
    (repo / "rename_me.py").rename(repo / "renamed.py")
    write(repo, "img.bin", bytes(range(255, -1, -1)) * 4)
    write(repo, "new.bin", b"\x00\x01\x02frog\xff")
    write(repo, "nonl.txt", "first\nlast changed, still no newline")
    write(repo, "gets_nl.txt", "alpha\nbeta\n")
    write(repo, "crlf.txt", "one\r\nTWO\r\nthree\r\nfour\r\nfive\r\n")
    write(repo, "run.sh", "#!/bin/sh\necho hello\n", 0o755)
    write(repo, "latin1.txt", "caf\xe9\nna\xefve\nd\xe9j\xe0\n".encode("latin-1"))
    write(repo, "dir with space/file one.txt", "a\nB\nc\n")
    write(repo, "dir with space/new file ü.txt", "grüße\n")
    write(repo, "we\"ird.txt", "quoted and changed\n")
    write(repo, "empty.txt", "")
    write(repo, "debug.log", "ignored\n")
    (repo / "link").unlink()
    os.symlink("crlf.txt", repo / "link")
