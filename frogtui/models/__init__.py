"""Model backends behind ``frogtui.protocol.Model``: replay files, local GGUFs, OpenAI-compatible servers."""
from __future__ import annotations

from collections.abc import Callable

from frogtui.config import Config
from frogtui.errors import ModelLoadError
from frogtui.protocol import Model


def load_model(spec: str, config: Config | None = None, report: Callable[[str], None] | None = None) -> Model:
    """Build the model a spec names.

    Specs: ``replay:FILE`` (JSONL of recorded turns), a path to a ``.gguf``, ``hf:REPO[:QUANT]``,
    ``http(s)://HOST:PORT/v1[#MODEL]``. ``report`` receives progress lines (download bytes,
    loading, what was chosen); without it they go to stderr.

    Raises:
        ModelLoadError: unknown spec, or the model cannot be loaded (one clear line).
    """
    config = config or Config()
    if spec.startswith("replay:"):
        from frogtui.models.replay import ReplayModel

        return ReplayModel(spec[len("replay:"):])
    if spec.startswith(("http://", "https://")):
        from frogtui.models.openai_compat import OpenAICompatModel

        return OpenAICompatModel.from_spec(spec, config, report=report)
    if spec.startswith("hf:") or spec.endswith(".gguf"):
        from frogtui.models.local import LocalModel  # llama.cpp runs in a process of its own

        return LocalModel.from_spec(spec, config, report=report)
    raise ModelLoadError(
        f"unknown model spec {spec!r}: use replay:FILE, a path to a .gguf, hf:REPO[:QUANT] or http(s)://HOST:PORT/v1[#MODEL]"
    )
