"""Project instructions: the repository's ``AGENTS.md`` (or ``CLAUDE.md`` where there is no
``AGENTS.md``) given to the model with the task, as Codex CLI, Claude Code and OpenCode do.

Leaf's system prompt stays its three lines: the file goes into the conversation's first user
message, before the task, in a delimited block (Codex CLI's ``<INSTRUCTIONS>`` block)::

    # AGENTS.md instructions for this repository

    <INSTRUCTIONS>
    …the file's text…
    </INSTRUCTIONS>

    <the task>

The file is repository content, so hostile input: only a regular file whose real path is inside the
repository is read (a symlink to ``~/.ssh/id_ed25519`` or ``/dev/zero`` is not), never blocking, at
most ``MAX_BYTES`` of it (the block then says how much was cut); a file that is not UTF-8 text (a
NUL byte, invalid bytes) is not given. Each case is one line for the person (``ProjectInstructions.line``
or the reason it was skipped). ``project_instructions = false`` in config.toml (``frogtui run
--no-project-instructions``) turns it off.
"""
from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path

FILES = ("AGENTS.md", "CLAUDE.md")
"""Read in this order; the first that exists is the one given."""

MAX_BYTES = 32 * 1024
"""The most of the file given to the model (Codex CLI's ``project_doc_max_bytes``)."""

BLOCK_START = "# {name} instructions for this repository\n\n<INSTRUCTIONS>\n"
BLOCK_END = "\n</INSTRUCTIONS>\n\n"


@dataclass(frozen=True)
class ProjectInstructions:
    """The instructions found, or why a file that is there was not given."""

    name: str
    """The file's name (``AGENTS.md``)."""
    text: str = ""
    """What the model gets ('' when skipped)."""
    size: int = 0
    """The file's size in bytes."""
    cut: bool = False
    """Only the first ``MAX_BYTES`` are given."""
    skipped: str = ""
    """Why the file is not given (a symlink out of the repository, not text…); '' when it is."""

    @property
    def line(self) -> str:
        """What the person is told, one line."""
        if self.skipped:
            return f"{self.name} is not given to the model: {self.skipped}"
        if self.cut:
            return (f"{self.name} is given to the model with the task, cut to its first {MAX_BYTES:,} of {self.size:,} bytes "
                    "(project_instructions = false in config.toml turns it off)")
        return (f"{self.name} ({self.size:,} bytes) is given to the model with the task "
                "(project_instructions = false in config.toml turns it off)")

    def with_task(self, task: str) -> str:
        """The first user message: the block, then ``task`` (``task`` alone when skipped)."""
        if self.skipped or not self.text:
            return task
        cut = f"\n[{self.name} cut here: the first {MAX_BYTES:,} of {self.size:,} bytes are shown]" if self.cut else ""
        return BLOCK_START.format(name=self.name) + self.text + cut + BLOCK_END + task


def read_instructions(repo: Path) -> ProjectInstructions | None:
    """The project instructions of the repository at ``repo``, None when it has no such file."""
    from frogtui.tools.textfile import NotRegularFileError, open_regular

    root = repo.resolve()
    for name in FILES:
        path = root / name
        if not os.path.lexists(path):
            continue
        real = path.resolve()
        if real != root and root not in real.parents:
            return ProjectInstructions(name, skipped=f"it is a link to {real}, outside the repository")
        try:
            fd = open_regular(real, name)
        except FileNotFoundError:
            return ProjectInstructions(name, skipped="it is a link to nothing")
        except NotRegularFileError:
            return ProjectInstructions(name, skipped="it is not a regular file (a FIFO, a device, a socket…)")
        except OSError as err:  # no permission, a folder
            return ProjectInstructions(name, skipped=f"it cannot be read ({err.strerror or err})")
        try:
            size = os.fstat(fd).st_size
            data = os.read(fd, MAX_BYTES + 1)
        finally:
            os.close(fd)
        return _decoded(name, data, size)
    return None


def _decoded(name: str, data: bytes, size: int) -> ProjectInstructions:
    cut = len(data) > MAX_BYTES
    data = data[:MAX_BYTES]
    if b"\0" in data:
        return ProjectInstructions(name, size=size, skipped="it is not text (it holds NUL bytes)")
    try:  # a cut in the middle of a character drops that character's first bytes, nothing else
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=not cut)
    except UnicodeDecodeError:
        return ProjectInstructions(name, size=size, skipped="it is not UTF-8 text")
    return ProjectInstructions(name, text=text.strip("\n"), size=max(size, len(data)), cut=cut)


def without_instructions(message: str) -> str:
    """A first user message without its instructions block: what the person typed."""
    for name in FILES:
        start = BLOCK_START.format(name=name)
        if message.startswith(start) and BLOCK_END in message:
            return message[message.rindex(BLOCK_END) + len(BLOCK_END):]
    return message
