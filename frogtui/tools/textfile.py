"""Reading and writing text files the way a careful editor does: detect binary and non-UTF-8
content, keep line endings and the file mode, and replace files atomically."""
from __future__ import annotations

import codecs
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
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


MAX_EDIT_BYTES = 64 * 1024 * 1024
"""The largest file Write/Edit load whole (to show and change it); a bigger one is refused."""


def file_sha256(path: Path) -> str | None:
    """sha256 of the file's bytes (streamed), None when it does not exist.

    Raises:
        NotRegularFileError: a FIFO, device or socket (never opened for reading).
    """
    try:
        fd = open_regular(path, str(path))
    except FileNotFoundError:
        return None
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def read_regular(path: Path, display: str, max_bytes: int = MAX_EDIT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.

    Raises:
        FileNotFoundError: it does not exist.
        NotRegularFileError: a FIFO, device or socket (refused without blocking).
        FileTooBigError: it holds more than ``max_bytes``.
    """
    fd = open_regular(path, display)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise FileTooBigError(f"{display} is too big to load whole ({size} bytes, at most {max_bytes}); change it with Bash instead")
        data = bytearray()
        while (chunk := os.read(fd, 1 << 20)) and len(data) <= max_bytes:
            data += chunk
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise FileTooBigError(f"{display} is too big to load whole (over {max_bytes} bytes); change it with Bash instead")
    return bytes(data)


class FileTooBigError(NotTextError):
    """A file too big for Write/Edit to load whole."""


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
    return decode_text(read_regular(path, display), display)


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
    # the name's first 40 characters (at most 160 bytes): the temporary name stays under the 255 bytes a name may have
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".frogtui-tmp", dir=path.parent)
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


class NotRegularFileError(ValueError):
    """The path is a FIFO, a device or a socket: reading it could block forever or never end."""


def open_regular(path: Path, display: str) -> int:
    """A read-only descriptor of ``path``, refused (never blocking) unless it is a regular file.

    Raises:
        NotRegularFileError: a FIFO, device, socket…
    """
    kind = _kind(os.stat(path).st_mode)
    if kind:
        raise NotRegularFileError(f"{display} is not a regular file ({kind}); only regular files can be read")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    kind = _kind(os.fstat(fd).st_mode)
    if kind:  # swapped since the stat
        os.close(fd)
        raise NotRegularFileError(f"{display} is not a regular file ({kind}); only regular files can be read")
    return fd


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return ""
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a file")


def text_lines(fd: int, display: str, size: int, keep: int, line_bytes: int) -> Iterator[tuple[str, int, int]]:
    """The lines of an open text file as ``str.splitlines`` gives them, each cut to its first
    ``keep`` characters, with its full length and the number of bytes read so far; streamed (one
    huge line costs ``keep`` characters of memory, not the line), strict UTF-8, a leading BOM dropped.
    A line still going on after about ``line_bytes`` bytes ends the reading: it comes last, with
    length -1.

    Raises:
        NotTextError: NUL bytes in the first 8 KiB (binary) or invalid UTF-8.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    pending, dropped, position, first = "", 0, 0, True  # the unfinished line, and how much of it was let go
    while True:
        chunk = os.read(fd, 1 << 16)
        if first and b"\0" in chunk[:BINARY_SNIFF]:
            raise NotTextError(f"{display} is a binary file ({size} bytes); only text files can be read or edited")
        try:
            piece = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as err:
            offset = max(position + err.start, 0)
            raise NotTextError(
                f"{display} is not UTF-8 text (invalid byte 0x{err.object[err.start]:02x} at offset {offset}); "
                "inspect it with Bash (e.g. file, iconv) instead"
            ) from None
        position += len(chunk)
        if first and piece.startswith("\ufeff"):
            piece = piece[1:]
        first = False
        lines = (pending + piece).splitlines(keepends=True)
        carried, pending, dropped = dropped, "", 0
        if chunk and lines and (lines[-1].endswith("\r") or len(lines[-1].splitlines()[0]) == len(lines[-1])):
            pending = lines.pop()  # an unfinished line (or a CR whose LF may follow)
            dropped = carried if not lines else 0
            if len(pending) > keep + 1:  # keep its head, and its last character (a CR pairs with a next LF)
                dropped += len(pending) - keep - 1
                pending = pending[:keep] + pending[-1]
            if dropped > line_bytes:  # a line that does not end (a sparse file's hole): stop reading
                yield pending[:keep], -1, position
                return
        for n, line in enumerate(lines):
            text = line.splitlines()[0] if line.splitlines() else ""
            yield text[:keep], len(text) + (carried if n == 0 else 0), position
        if not chunk:
            return


def numbered_lines(path: Path, display: str, start: int, end: int | None, limit: int, count_bytes: int) -> tuple[str, int, bool]:
    """Read's output for lines ``start``..``end`` of ``path``: the display path, then ``N. text``
    lines, formatted only up to ``limit`` characters. Returns (text, more, exact): ``more`` is the
    number of characters cut when ``exact`` (counted by reading on at most ``count_bytes``), else
    about how many bytes of the file were not read."""
    fd = open_regular(path, display)
    try:
        size = os.fstat(fd).st_size
        parts, length, more, cut_at = [display], len(display), 0, -1
        for n, (line, full, position) in enumerate(text_lines(fd, display, size, limit, count_bytes), start=1):
            if full < 0:  # the line went on past count_bytes; about the rest of the file is left
                if cut_at < 0 and n >= start:
                    parts.append(f"{n}. {line}")
                return "\n".join(parts), max(size - position, 1), False
            if n < start:
                continue
            if end is not None and n > end:
                break
            width = len(str(n)) + 3 + full
            if cut_at < 0:
                parts.append(f"{n}. {line}")
                length += width
                more += full - len(line)  # what a line longer than the limit was not kept
                if length > limit:
                    cut_at = position
            else:
                more += width
                if position - cut_at > count_bytes:
                    return "\n".join(parts), max(size - cut_at, 1), False
    finally:
        os.close(fd)
    text = "\n".join(parts)
    return text, (len(text) + more - limit) if cut_at >= 0 else 0, True
