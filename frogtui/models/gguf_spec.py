"""Model specs that name a GGUF file: a path, or ``hf:REPO[:QUANT]`` in the Hugging Face cache.

``hf:`` specs download through ``huggingface_hub`` into the standard cache (``$HF_HOME``), with its
progress bars and resumable downloads; a file already in the cache is used without the network.
The file is picked by quant name (``Q4_K_M``, ``IQ2_M``...); vision projectors (``mmproj``) are never
picked: FrogNano is text-only. Every failure is a ``ModelLoadError`` with one clear line.

The download stack (httpx, huggingface_hub, tqdm: a quarter of a second to import) is imported only
for ``hf:`` specs, never for a local file.
"""
from __future__ import annotations

import io
import os
import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from frogtui.errors import ModelLoadError

if TYPE_CHECKING:
    from tqdm import tqdm

GGUF_MAGIC = b"GGUF"
DEFAULT_QUANT = "Q4_K_M"
_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)


@dataclass(frozen=True)
class HfSpec:
    """A parsed ``hf:REPO[:QUANT]`` spec."""

    repo: str
    quant: str


def parse_hf_spec(spec: str) -> HfSpec:
    """Split ``hf:owner/name[:QUANT]``.

    Raises:
        ModelLoadError: the spec has no ``owner/name`` repository.
    """
    body = spec[len("hf:"):] if spec.startswith("hf:") else spec
    repo, _, quant = body.partition(":")
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise ModelLoadError(
            f"bad model spec {spec!r}: expected hf:OWNER/REPO[:QUANT], e.g. hf:bartowski/microsoft_FrogNano-4B-2609-GGUF:IQ2_M"
        )
    return HfSpec(repo=repo, quant=quant or DEFAULT_QUANT)


def is_vision_projector(name: str) -> bool:
    """True for multimodal projector files (``mmproj-*.gguf``), which frogtui never loads."""
    return "mmproj" in Path(name).name.lower()


def pick_gguf(files: list[str], quant: str) -> list[str]:
    """The file(s) of ``quant`` among a repository's files: one file, or every part of a split GGUF.

    The quant must appear in the file name as a whole word (``Q4_K_M`` does not match ``Q4_K_M_L``),
    case-insensitively. Prefers the shortest matching name (no ``-imat``-style variants).

    Raises:
        ModelLoadError: no file, or several different files, match.
    """
    pattern = re.compile(rf"(?<![A-Za-z0-9]){re.escape(quant)}(?![A-Za-z0-9_])", re.IGNORECASE)
    candidates = [f for f in files if f.lower().endswith(".gguf") and not is_vision_projector(f) and pattern.search(Path(f).name)]
    if not candidates:
        available = sorted(
            {
                m.group(0).upper()
                for f in files
                if f.lower().endswith(".gguf") and not is_vision_projector(f)
                for m in [re.search(r"(?:I?Q\d\w*|BF16|F16|F32)(?=\.gguf|-\d{5}-of)", Path(f).name, re.IGNORECASE)]
                if m
            }
        )
        hint = f" (available: {', '.join(available)})" if available else ""
        raise ModelLoadError(f"no {quant} GGUF in this repository{hint}")
    groups: dict[str, list[str]] = {}
    for name in candidates:
        groups.setdefault(_SPLIT.sub(".gguf", name), []).append(name)
    best = min(groups, key=lambda key: (len(Path(key).name), key))
    return sorted(groups[best])


def check_gguf_file(path: Path) -> Path:
    """Check that ``path`` is a readable GGUF file of a language model (not a vision projector).

    Raises:
        ModelLoadError: missing, unreadable, not a GGUF, or a projector.
    """
    if is_vision_projector(path.name):
        raise ModelLoadError(f"{path} is a vision projector (mmproj); FrogNano is text-only: give the language model's .gguf")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except FileNotFoundError:
        raise ModelLoadError(f"model file not found: {path}") from None
    except IsADirectoryError:
        raise ModelLoadError(f"model path is a folder, not a .gguf file: {path}") from None
    except OSError as err:
        raise ModelLoadError(f"cannot read model file {path}: {err.strerror or err}") from None
    if magic != GGUF_MAGIC:
        raise ModelLoadError(f"{path} is not a GGUF file (it does not start with the GGUF magic bytes)")
    return path


def cached_path(spec: str) -> Path | None:
    """The local file a spec names if it is already on disk (no network), else None."""
    if not spec.startswith("hf:"):
        path = Path(spec).expanduser()
        return path if path.is_file() else None
    hf = parse_hf_spec(spec)
    from huggingface_hub import errors as hf_errors
    from huggingface_hub import snapshot_download

    try:
        folder = Path(snapshot_download(hf.repo, allow_patterns=["*.gguf"], local_files_only=True))
    except (hf_errors.LocalEntryNotFoundError, hf_errors.HfHubHTTPError, OSError, ValueError):
        return None
    files = [str(p.relative_to(folder)) for p in folder.rglob("*.gguf")]
    try:
        parts = pick_gguf(files, hf.quant)
    except ModelLoadError:
        return None
    paths = [folder / part for part in parts]
    return paths[0] if all(p.is_file() for p in paths) else None


def resolve_spec(spec: str, report: Callable[[str], None] | None = None) -> Path:
    """The local ``.gguf`` for a spec, downloading ``hf:`` specs into the Hugging Face cache first.

    Args:
        spec: a path to a ``.gguf`` or ``hf:REPO[:QUANT]``.
        report: receives download progress lines ("downloading NAME: 12/1650 MB"); without it the
            Hub client's own progress bar is shown on stderr.

    Raises:
        ModelLoadError: bad spec, no such repository or quant, no network, or a bad file.
    """
    if not spec.startswith("hf:"):
        return check_gguf_file(Path(spec).expanduser())
    hf = parse_hf_spec(spec)
    local = cached_path(spec)
    if local is not None:
        return check_gguf_file(local)
    import httpx
    from huggingface_hub import errors as hf_errors
    from huggingface_hub import hf_hub_download, list_repo_files

    try:
        _probe_hub()
        files = list_repo_files(hf.repo)
        parts = pick_gguf(files, hf.quant)
        tqdm_class = progress_reporter(report) if report is not None else None
        paths = [Path(hf_hub_download(hf.repo, part, tqdm_class=tqdm_class)) for part in parts]
    except ModelLoadError as err:
        raise ModelLoadError(f"{spec}: {err}") from None
    except hf_errors.OfflineModeIsEnabled:
        raise ModelLoadError(
            f"{spec} is not in the Hugging Face cache and HF_HUB_OFFLINE is set: download it once online, or give a path to a .gguf"
        ) from None
    except (hf_errors.RepositoryNotFoundError, hf_errors.GatedRepoError) as err:
        raise ModelLoadError(f"{spec}: repository {hf.repo} not found or not accessible ({type(err).__name__})") from None
    except (hf_errors.LocalEntryNotFoundError, httpx.TransportError) as err:
        raise ModelLoadError(
            f"cannot download {spec}: no connection to the Hugging Face Hub ({_first_line(err)}); "
            "give a path to a .gguf, or try again online"
        ) from None
    except hf_errors.HfHubHTTPError as err:
        raise ModelLoadError(f"cannot download {spec}: {_first_line(err)}") from None
    except OSError as err:
        raise ModelLoadError(f"cannot download {spec}: {err.strerror or err}") from None
    return check_gguf_file(paths[0])


def progress_reporter(report: Callable[[str], None]) -> type[tqdm]:
    """A tqdm class that sends its progress to ``report`` as one line, at most every half second."""
    from tqdm import tqdm

    class ReportingTqdm(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = False
            kwargs["file"] = io.StringIO()  # the bar itself is drawn nowhere
            kwargs["mininterval"] = 0.5
            super().__init__(*args, **kwargs)

        def display(self, msg: str | None = None, pos: int | None = None) -> bool:
            total = f"/{self.total / 1e6:.0f}" if self.total else ""
            report(f"downloading {self.desc or 'model'}: {self.n / 1e6:.0f}{total} MB")
            return True

    return ReportingTqdm


def _probe_hub() -> None:
    """Fail fast (instead of the Hub client's retries with backoff) when the Hub is unreachable.

    Raises:
        OfflineModeIsEnabled: ``HF_HUB_OFFLINE`` is set.
        httpx.ConnectError: no route, no DNS, or the connection is refused.
    """
    import socket

    import httpx
    from huggingface_hub import constants
    from huggingface_hub import errors as hf_errors

    if constants.HF_HUB_OFFLINE:
        raise hf_errors.OfflineModeIsEnabled("HF_HUB_OFFLINE is set")
    parts = urlsplit(constants.ENDPOINT)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=5).close()
    except OSError as err:
        raise httpx.ConnectError(f"{parts.hostname}:{port}: {err.strerror or err}") from None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_ARRAY_DEPTH_MAX = 8
"""Arrays of arrays nested deeper than this are taken as corruption (real models use one level)."""
HEADER_TIME_BUDGET = 10.0
"""Seconds the header may take to read: a real model's takes a fraction of one (its largest array,
the vocabulary, holds some 10^5 strings); a crafted header of 10^9 empty strings is refused, not
walked for half an hour."""
_CHECK_EVERY = 4096
"""Elements read between two looks at the clock."""


class _CorruptHeader(Exception):
    """The header contradicts itself or the file (a length past the end, an unknown type...)."""


class _HeaderReader:
    """Reads GGUF header values from an open file, checking every length against the bytes left:
    a corrupt length is an error, never a huge allocation or a long loop. An array of fixed-size
    values is skipped with one seek; one of strings or arrays is walked under a time budget."""

    def __init__(self, handle: io.BufferedReader, size: int, *, budget: float = HEADER_TIME_BUDGET) -> None:
        self.handle = handle
        self.size = size
        self.budget = budget
        self.deadline = time.monotonic() + budget
        self.elements = 0

    def left(self) -> int:
        return self.size - self.handle.tell()

    def read(self, fmt: str) -> object:
        size = struct.calcsize(fmt)
        data = self.handle.read(size)
        if len(data) != size:
            raise _CorruptHeader("the file ends inside its header")
        return struct.unpack(fmt, data)[0]

    def count(self) -> int:
        """A uint64 count or length that must fit in the bytes left."""
        value = int(self.read("<Q"))  # type: ignore[arg-type]
        if value > self.left():
            raise _CorruptHeader(f"a length of {value} runs past the end of the file")
        return value

    def string(self) -> str:
        return self.handle.read(self.count()).decode("utf-8", errors="replace")

    def skip(self, length: int) -> None:
        """Move past ``length`` bytes that must be in the file."""
        if length > self.left():
            raise _CorruptHeader(f"an array of {length} bytes runs past the end of the file")
        self.handle.seek(length, os.SEEK_CUR)

    def tick(self) -> None:
        """One more element walked: past the budget, the header is refused."""
        self.elements += 1
        if self.elements % _CHECK_EVERY == 0 and time.monotonic() > self.deadline:
            raise _TooSlow(f"its header holds more than can be read in {self.budget:g} s ({self.elements} values read so far)")

    def value(self, kind: int, depth: int = 0) -> object:
        """A value of GGUF type ``kind``; arrays are skipped (None)."""
        if kind == 8:
            return self.string()
        if kind == 9:
            if depth >= _ARRAY_DEPTH_MAX:
                raise _CorruptHeader("arrays nested too deep")
            item_kind = int(self.read("<I"))  # type: ignore[arg-type]
            count = self.count()
            if item_kind in _SCALARS:  # fixed size: one seek, whatever the count
                self.skip(count * struct.calcsize(_SCALARS[item_kind]))
                return None
            if item_kind not in (8, 9):
                raise _CorruptHeader(f"unknown metadata type {item_kind}")
            for _ in range(count):
                self.tick()
                if item_kind == 8:
                    self.skip(self.count())  # a string of the array: its length, then past it
                else:
                    self.value(item_kind, depth + 1)
            return None
        if kind not in _SCALARS:
            raise _CorruptHeader(f"unknown metadata type {kind}")
        return self.read(_SCALARS[kind])


class _TooSlow(Exception):
    """The header's arrays hold more values than ``HEADER_TIME_BUDGET`` lets be walked."""


def read_gguf_header(path: Path, wanted: set[str] | None = None, *, budget: float = HEADER_TIME_BUDGET) -> dict[str, object]:
    """Read scalar and string metadata from a GGUF header (arrays are skipped), without loading it.

    Stops early once every key in ``wanted`` (``{arch}`` in a key stands for the architecture) has
    been read. Used to pick ``n_ctx`` and refuse projectors before llama.cpp allocates anything.
    Any bytes give a result or a ``ModelLoadError`` (the suite fuzzes it), within ``budget``
    seconds (a header that takes longer is refused).

    Raises:
        ModelLoadError: the header is truncated or malformed.
    """
    found: dict[str, object] = {}
    try:
        with path.open("rb") as handle:
            reader = _HeaderReader(handle, os.fstat(handle.fileno()).st_size, budget=budget)
            if handle.read(4) != GGUF_MAGIC:
                raise ModelLoadError(f"{path} is not a GGUF file")
            reader.read("<I")
            reader.read("<Q")
            n_kv = reader.count()
            for _ in range(n_kv):
                reader.tick()
                key = reader.string()
                found[key] = reader.value(int(reader.read("<I")))  # type: ignore[arg-type]
                arch = str(found.get("general.architecture", ""))
                if wanted and all(k.replace("{arch}", arch) in found for k in wanted):
                    break
    except _CorruptHeader as err:
        raise ModelLoadError(f"{path} is truncated or corrupt (its GGUF header cannot be read: {err})") from None
    except _TooSlow as err:
        raise ModelLoadError(f"{path} is not a model frogtui loads: {err}") from None
    except OSError as err:
        raise ModelLoadError(f"cannot read model file {path}: {err.strerror or err}") from None
    return found
