"""The GGUF header reader on corrupt files: any bytes give metadata or one ``ModelLoadError``
line (fuzzed with hypothesis), and ``frogtui run`` with such a file exits 2 with one line."""
from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from frogtui import headless
from frogtui.errors import ModelLoadError
from frogtui.models.gguf_spec import read_gguf_header


def gguf_string(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def header(*entries: bytes, n_kv: int | None = None) -> bytes:
    """A GGUF v3 header with no tensors and the given key/value entries."""
    count = len(entries) if n_kv is None else n_kv
    return b"GGUF" + struct.pack("<IQQ", 3, 0, count) + b"".join(entries)


def entry_str(key: str, value: str) -> bytes:
    return gguf_string(key) + struct.pack("<I", 8) + gguf_string(value)


def entry_u32(key: str, value: int) -> bytes:
    return gguf_string(key) + struct.pack("<II", 4, value)


def entry_array(key: str) -> bytes:
    """An array of two arrays of strings (nested), as a vocabulary-like value."""
    inner = struct.pack("<IQ", 8, 2) + gguf_string("a") + gguf_string("bc")
    return gguf_string(key) + struct.pack("<IIQ", 9, 9, 2) + inner + inner


VALID = header(
    entry_str("general.architecture", "llama"),
    entry_array("tokenizer.ggml.tokens"),
    entry_u32("llama.context_length", 4096),
    entry_u32("llama.block_count", 2),
    entry_str("general.name", "tiny"),
)


def test_a_valid_header_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.gguf"
    path.write_bytes(VALID)
    assert read_gguf_header(path) == {
        "general.architecture": "llama", "tokenizer.ggml.tokens": None, "llama.context_length": 4096,
        "llama.block_count": 2, "general.name": "tiny",
    }


@pytest.mark.parametrize(
    "data",
    [
        header(struct.pack("<Q", 2**63) + b"key"),  # a key length past any size (was OverflowError)
        header(struct.pack("<Q", 2**40) + b"key"),  # a key length past the end (was a 1 TB read)
        header(entry_str("a", "b"), n_kv=2**64 - 1),  # more entries than bytes
        header(gguf_string("k") + struct.pack("<IIQ", 9, 0, 2**62)),  # an array longer than the file
        header(gguf_string("k") + struct.pack("<I", 9) + struct.pack("<I", 9) * 50 + struct.pack("<Q", 1) * 50),  # arrays in arrays
        header(gguf_string("k") + struct.pack("<I", 77)),  # an unknown type
        header(gguf_string("k") + struct.pack("<I", 8)),  # a string value cut off
    ],
    ids=["overflowing-length", "huge-length", "huge-n_kv", "huge-array", "deep-arrays", "unknown-type", "cut"],
)
def test_corrupt_headers_are_one_clear_line(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(ModelLoadError, match="truncated or corrupt") as info:
        read_gguf_header(path)
    assert "\n" not in str(info.value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.binary(min_size=1, max_size=8)), max_size=4),
    cut=st.integers(4, len(VALID)),
)
def test_fuzzed_headers_give_metadata_or_one_line(edits: list[tuple[int, bytes]], cut: int, tmp_path: Path) -> None:
    data = bytearray(VALID)
    for offset, chunk in edits:
        data[offset : offset + len(chunk)] = chunk
    path = tmp_path / "fuzz.gguf"
    path.write_bytes(bytes(data[:cut]))
    try:
        found = read_gguf_header(path)
    except ModelLoadError as err:
        assert "\n" not in str(err)
    else:
        assert isinstance(found, dict)


def test_frogtui_run_with_a_corrupt_header_exits_2_with_one_line(py_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "model.gguf"
    bad.write_bytes(header(entry_str("general.architecture", "llama"), struct.pack("<Q", 2**63) + b"key"))
    assert headless.main(["hi", "--repo", str(py_repo), "--model", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "truncated or corrupt" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


FOUR_GIB = 4 * 2**30


def sparse(path: Path, head: bytes, size: int = FOUR_GIB) -> Path:
    """A file of ``size`` bytes starting with ``head`` and zeros after it, taking no disk (a hole)."""
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)
    return path


def test_a_fixed_size_array_of_billions_is_skipped_with_one_seek(tmp_path: Path) -> None:
    """Issue 30: the reader walked arrays element by element; a crafted 4 GiB file of one array of
    4 * 10^9 bytes took 20-30 minutes. An array of fixed-size values is now one seek (the entry
    after it is read)."""
    after = entry_str("general.name", "after")
    head = header(gguf_string("k") + struct.pack("<IIQ", 9, 0, 0), after)
    count = FOUR_GIB - len(head)  # the uint8 array fills the file up to the entry after it
    head = header(gguf_string("k") + struct.pack("<IIQ", 9, 0, count), n_kv=2)
    path = tmp_path / "huge.gguf"
    with path.open("wb") as handle:  # sparse: the array is a hole
        handle.write(head)
        handle.seek(len(head) + count)
        handle.write(after)
    started = time.monotonic()
    assert read_gguf_header(path) == {"k": None, "general.name": "after"}
    assert time.monotonic() - started < 1.0


def test_a_huge_array_of_strings_is_refused_within_the_time_budget(tmp_path: Path) -> None:
    """An array of 5 * 10^8 empty strings (a 4 GiB sparse file of zeros: each a zero length) can
    only be walked string by string: the walk stops at the budget with one clear line."""
    path = sparse(tmp_path / "strings.gguf", header(gguf_string("k") + struct.pack("<IIQ", 9, 8, FOUR_GIB // 8 - 8)))
    started = time.monotonic()
    with pytest.raises(ModelLoadError, match="more than can be read in 0.5 s") as info:
        read_gguf_header(path, budget=0.5)
    assert time.monotonic() - started < 3.0
    assert "\n" not in str(info.value)


def test_many_entries_are_refused_within_the_time_budget(tmp_path: Path) -> None:
    """10^8 entries with empty keys, each a uint8 (a sparse file of zeros): refused at the budget."""
    path = sparse(tmp_path / "entries.gguf", header(n_kv=FOUR_GIB // 16))
    with pytest.raises(ModelLoadError, match="more than can be read"):
        read_gguf_header(path, budget=0.5)
