"""Whether llama.cpp's extra weight buffers work on this machine, remembered per build, CPU and
quantisation (``[llama] extra_buffers = "auto"``).

llama.cpp repacks quantised weights into extra buffers for the CPU's matrix units (AMX, AVX-512
VNNI...). On some CPUs those kernels crash (llama.cpp issue 20824: a segfault in
``ggml_backend_amx_mul_mat`` on every quantised model); with them off (``--no-repack``) the same model
answers. ``models/local.py`` finds out once, by decoding a few tokens after the first load, and
records the answer here (``$XDG_CACHE_HOME/frogtui/llama-buffers.json``), keyed by everything that
can change it.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from frogtui.config import cache_dir


def store_path() -> Path:
    return cache_dir() / "llama-buffers.json"


def _build() -> str:
    """llama-cpp-python's version and its compiled library (a rebuild with other flags is another build)."""
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    spec = importlib.util.find_spec("llama_cpp")  # finds the package without importing it
    stamps = []
    for folder in (spec.submodule_search_locations or []) if spec else []:
        lib = Path(folder) / "lib"
        for item in sorted(lib.glob("*.so*")) + sorted(lib.glob("*.dylib")) + sorted(lib.glob("*.dll")):
            stat = item.stat()
            stamps.append(f"{item.name}:{stat.st_size}:{int(stat.st_mtime)}")
    return version + "|" + hashlib.sha256("|".join(stamps).encode()).hexdigest()[:16]


def _cpu() -> str:
    """The CPU's model and feature flags (``/proc/cpuinfo``'s first processor), or the platform's name."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.machine() + "|" + platform.processor()
    fields: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        name, _, value = line.partition(":")
        fields[name.strip()] = value.strip()
    flags = fields.get("flags") or fields.get("Features") or ""
    return (fields.get("model name") or platform.machine()) + "|" + hashlib.sha256(flags.encode()).hexdigest()[:16]


def machine_key(file_type: Any) -> str:
    """The key of this build of llama.cpp on this CPU for a model of GGUF ``general.file_type``."""
    return f"{_build()}|{_cpu()}|ftype {file_type}"


def _read() -> dict[str, Any]:
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered(key: str) -> bool | None:
    """The answer found before for ``key``: True (they work), False (they crashed), None (never tried)."""
    entry = _read().get(key)
    works = entry.get("extra_buffers") if isinstance(entry, dict) else None
    return works if isinstance(works, bool) else None


def remember(key: str, works: bool, reason: str = "") -> None:
    """Record the answer for ``key`` (written atomically; a folder that cannot be written only costs a probe next time)."""
    data = _read()
    data[key] = {"extra_buffers": works, "reason": reason, "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    path = store_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".llama-buffers-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass
