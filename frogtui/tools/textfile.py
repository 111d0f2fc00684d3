"""Reading and writing text files the way a careful editor does: detect binary and non-UTF-8
content, keep line endings and the file mode, and replace files atomically."""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

BINARY_SNIFF = 8192


class NotTextError(ValueError):
    """The file is binary or not UTF-8; tools refuse it with this message instead of mojibake."""


@dataclass(frozen=True)
class TextFile:
    """A text file's content with its line endings normalised to ``\\n``."""

    text: str
    newline: str
    """``\\r\\n`` when the file uses CRLF line endings throughout, else ``\\n``."""
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def file_sha256(path: Path) -> str | None:
    """sha256 of the file's bytes, None when it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def decode_text(data: bytes, display: str) -> TextFile:
    """Decode bytes as UTF-8 text, normalising CRLF.

    Raises:
        NotTextError: NUL bytes (binary) or invalid UTF-8.
    """
    if b"\0" in data[:BINARY_SNIFF]:
        raise NotTextError(f"{display} is a binary file ({len(data)} bytes); only text files can be read or edited")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise NotTextError(
            f"{display} is not UTF-8 text (invalid byte 0x{data[err.start]:02x} at offset {err.start}); "
            "inspect it with Bash (e.g. file, iconv) instead"
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    crlf = text.count("\r\n")
    if crlf and crlf == text.count("\n"):
        return TextFile(text=text.replace("\r\n", "\n"), newline="\r\n", data=data)
    return TextFile(text=text, newline="\n", data=data)


def read_text(path: Path, display: str) -> TextFile:
    return decode_text(path.read_bytes(), display)


def encode_text(text: str, newline: str, bom: bool = False) -> bytes:
    if newline == "\r\n":
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if bom else data


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same folder, fsync, rename),
    keeping the mode of an existing file. Creates parent folders. Never leaves a half-written file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".frogtui-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
