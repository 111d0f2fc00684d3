from __future__ import annotations

from pathlib import Path

import pytest

from tests.models.tiny_gguf import write_dense_llama


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny dense llama GGUF with random weights (it loads and generates, fast)."""
    return write_dense_llama(tmp_path_factory.mktemp("gguf") / "tiny-llama.gguf")
