"""Read, Write, Edit and Glob with Leaf's observation strings (LEAF.md)."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from frogtui.protocol import Preview
from frogtui.tools import observations as obs
from frogtui.tools.globwalk import GlobSearch
from frogtui.tools.textfile import NotTextError, TextFile, atomic_write, decode_text, encode_text, file_sha256, numbered_lines, read_regular
from frogtui.tools.workspace import OutsideRootError, Workspace

READ_LIMIT = 20_000
READ_COUNT_BYTES = 16 * 1024 * 1024
"""Past the part Read returns, how many bytes are read to count the characters cut exactly."""
GLOB_LIMIT = 1_000
Shown = Callable[[str], "str | None"]
"""The sandbox's view (``ToolRunner.shown``): the host file a sandboxed command sees at a real
path, None when hidden."""


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` at ``limit`` characters with Leaf's ``[truncated K chars]`` ending."""
    if len(text) <= limit:
        return text
    return text[:limit] + obs.truncated_chars(len(text) - limit)


def read(ws: Workspace, file_path: str, offset: int | None = None, limit: int | None = None,
         shown: Shown | None = None) -> str:
    """Leaf's Read, streamed: only regular files (a FIFO, device or socket is refused, never
    opened), and only what is returned is formatted (the rest of a big file is only counted, up to
    ``READ_COUNT_BYTES``). With ``shown`` (the sandbox's view), the file a sandboxed command
    sees there: a sanitized copy (the repository's git config), or nothing when the sandbox hides it."""
    resolved = ws.resolve(file_path)
    real = _seen(resolved.real, file_path, shown)
    if real.is_dir():
        raise IsADirectoryError(f"[Errno 21] Is a directory: '{file_path}'")
    start = max(offset or 1, 1)
    end = None if not limit or limit <= 0 else start - 1 + limit
    text, more, exact = numbered_lines(real, resolved.display, start, end, READ_LIMIT, READ_COUNT_BYTES)
    if not more:
        return text
    if exact:
        return text[:READ_LIMIT] + obs.truncated_chars(more)
    return text[:READ_LIMIT] + obs.truncated_about(more)


def _seen(real: Path, written: str, shown: Shown | None) -> Path:
    if shown is None:
        return real
    source = shown(str(real))
    if source is None:
        raise PermissionError(f"{written} ({real}) is hidden from the agent, as from its commands' sandbox")
    return Path(source)


def _existing_text(path: Path, display: str) -> TextFile | None:
    if path.is_dir():
        raise IsADirectoryError(f"[Errno 21] Is a directory: '{display}'")
    try:
        data = read_regular(path, display)  # a FIFO is refused, never opened: reading it would block for good
    except FileNotFoundError:
        return None
    return decode_text(data, display)


def preview_write(ws: Workspace, file_path: str, content: str) -> Preview:
    resolved = ws.resolve_for_write(file_path)
    if resolved.real.is_dir():
        raise IsADirectoryError(f"[Errno 21] Is a directory: '{file_path}'")
    try:
        before = _existing_text(resolved.real, resolved.display)
        before_text = before.text if before else None
    except NotTextError:  # binary, non-UTF-8 or too big to show: it may still be overwritten as a whole
        before_text = None
    return Preview(
        path=resolved.display,
        abs_path=str(resolved.real),
        before=before_text,
        after=content,
        before_hash=file_sha256(resolved.real),
    )


def preview_edit(ws: Workspace, file_path: str, old_string: str, new_string: str, replace_all: bool = False) -> Preview:
    resolved = ws.resolve_for_write(file_path)
    if not old_string:
        raise ValueError("old_string must not be empty")
    tf = _existing_text(resolved.real, resolved.display)
    if tf is None:
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{file_path}'")
    old = old_string.replace("\r\n", "\n") if tf.newline == "\r\n" else old_string
    new = new_string.replace("\r\n", "\n") if tf.newline == "\r\n" else new_string
    count = tf.text.count(old)
    if count == 0:
        raise ValueError("old_string was not found")
    if count > 1 and not replace_all:
        raise ValueError(f"old_string matched {count} times; set replace_all=true or use a more specific old_string")
    after = tf.text.replace(old, new) if replace_all else tf.text.replace(old, new, 1)
    return Preview(path=resolved.display, abs_path=str(resolved.real), before=tf.text, after=after, before_hash=tf.sha256)


def apply_preview(ws: Workspace, preview: Preview) -> None:
    """Write a previewed change, only if the file still has the content it had when previewed.

    The path is resolved again first: a folder swapped for a symlink since the preview is refused,
    and so is any ``.git`` entry or file under one (a nested repository's or a submodule's).

    Raises:
        StaleFileError: the file changed since the preview (the change must be approved again).
        OutsideRootError: the path now leads somewhere else (outside the repository).
        PermissionError: it is one of git's own files.
    """
    path = Path(preview.abs_path)
    now = ws.resolve_for_write(preview.abs_path)  # a parent swapped for a symlink since the preview
    ws.refuse_git_files(now)
    if now.real != path:
        raise OutsideRootError(f"refusing to write {preview.path}: it now resolves to {now.real}, not to the file that was shown")
    if file_sha256(path) != preview.before_hash:
        raise StaleFileError(f"{preview.path} changed since the change was shown; it was not written")
    newline, bom = "\n", False
    if preview.before is not None:
        data = read_regular(path, preview.path)
        bom = data.startswith(b"\xef\xbb\xbf")
        newline = decode_text(data, preview.path).newline
    atomic_write(path, encode_text(preview.after, newline, bom))


class StaleFileError(RuntimeError):
    """The file changed between the approval and the write."""


def write_observation(preview: Preview) -> str:
    return obs.wrote(preview.path, len(preview.after))


def edit_observation(preview: Preview, old_string: str, replace_all: bool) -> str:
    n = preview.before.count(old_string.replace("\r\n", "\n")) if (replace_all and preview.before) else 1
    return obs.edited(preview.path, n)


def glob(ws: Workspace, pattern: str, path: str | None = None, shown: Shown | None = None) -> str:
    """Leaf's Glob; with ``shown`` (the sandbox's view), only the files a sandboxed command sees."""
    base = ws.resolve(path) if path else ws.resolve(".")
    _seen(base.real, path or ".", shown)
    if not base.real.exists():
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    if not base.real.is_dir():
        raise NotADirectoryError(f"[Errno 20] Not a directory: '{path}'")
    if os.path.isabs(os.path.expanduser(pattern)):
        pattern_abs = os.path.expanduser(pattern)
    else:
        pattern_abs = os.path.join(glob_root(ws, path), pattern)
    matches = []
    search = GlobSearch()
    for hit in search.files(pattern_abs):
        p = Path(os.path.normpath(hit))
        if _under(p, ws.root) and ".git" in p.relative_to(ws.root).parts:
            continue  # git's internals are never search results
        if shown is not None and shown(os.path.realpath(p)) is None:
            continue  # hidden from a sandboxed command (a link into /tmp, a masked secret)
        matches.append(ws.display(p))
    stopped = f"[search {search.stopped}: the list is incomplete; narrow the pattern or the path]" if search.stopped else ""
    if not matches:
        return f"{obs.NO_FILES_MATCHED}\n{stopped}" if stopped else obs.NO_FILES_MATCHED
    matches.sort()
    shown = matches[:GLOB_LIMIT]
    if len(matches) > GLOB_LIMIT:
        shown.append(obs.more_files(len(matches) - GLOB_LIMIT))
    return "\n".join([*shown, stopped] if stopped else shown)


def glob_root(ws: Workspace, path: str | None) -> str:
    """The (unresolved, normalised) folder a Glob searches from."""
    if not path:
        return str(ws.root)
    return os.path.normpath(ws.root / os.path.expanduser(path))


def _under(p: Path, root: Path) -> bool:
    return p == root or root in p.parents
