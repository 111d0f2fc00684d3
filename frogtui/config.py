"""Configuration as data: frozen dataclasses with every default in one place, TOML on disk, XDG paths.

Precedence: command-line flags > ``$XDG_CONFIG_HOME/frogtui/config.toml`` > the defaults below.
"""
from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import platformdirs

from frogtui.errors import ConfigError

APP_NAME = "frogtui"

DEFAULT_MODEL_SPEC = "hf:bartowski/microsoft_FrogNano-4B-2609-GGUF:Q4_K_M"
"""Community GGUF of FrogNano-4B-2609 (not verified from here: override with ``--model`` or
``model`` in config.toml). IQ2_M (about 1.65 GB) is the choice for a 4 GB card."""


SETTINGS_HELP = (
    "Settings without a flag live in $XDG_CONFIG_HOME/frogtui/config.toml (~/.config/frogtui/config.toml): "
    "model, theme, commit_trailer, project_instructions (give the repository's AGENTS.md to the model; default true), "
    "[limits] max_steps/max_tokens_per_turn/max_context_tokens/handoff_margin/max_handoffs/repeat_threshold, "
    "[sampling] temperature/top_p/top_k/min_p/repeat_penalty/seed, [llama] n_ctx/n_gpu_layers/flash_attn/"
    "cache_type_k/cache_type_v/n_threads/n_threads_batch/n_batch/prompt_mode/checkpoints/extra_buffers. Approval rules: rules.toml there "
    "and .frogtui.toml in the repository (docs/APPROVALS.md)."
)
"""The ``--help`` epilog of the commands: where every option without a flag is set."""


def config_dir() -> Path:
    """The user's config folder (``$XDG_CONFIG_HOME/frogtui``)."""
    return platformdirs.user_config_path(APP_NAME)


def state_dir() -> Path:
    """The user's state folder (``$XDG_STATE_HOME/frogtui``): sessions, trajectories, logs."""
    return platformdirs.user_state_path(APP_NAME)


def cache_dir() -> Path:
    """The user's cache folder (``$XDG_CACHE_HOME/frogtui``): what frogtui found out and can find again."""
    return platformdirs.user_cache_path(APP_NAME)


def config_file() -> Path:
    """The ``config.toml`` read at start: ``$FROGTUI_CONFIG``, else the one in ``config_dir()``."""
    return Path(os.environ.get("FROGTUI_CONFIG", config_dir() / "config.toml"))


def sessions_dir() -> Path:
    return state_dir() / "sessions"


@dataclass(frozen=True)
class Sampling:
    """Sampling settings; defaults are the FrogNano evaluation configs (LEAF.md)."""

    seed: int | None = None
    """None: a random seed for each load (set one for reproducible runs)."""
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = 20
    min_p: float = 0.0
    """0 turns min-p sampling off."""
    repeat_penalty: float = 1.0
    """1.0 turns the repetition penalty off (over the last 64 tokens otherwise)."""


@dataclass(frozen=True)
class LlamaSettings:
    """How a local GGUF is loaded by llama-cpp-python."""

    n_ctx: int = 65536
    """Context window (model card evaluation setting; up to 131,072)."""
    n_gpu_layers: int | None = None
    """None: all layers when the build can offload to a GPU, else 0."""
    flash_attn: bool = True
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    n_threads: int | None = None
    """CPU threads generating tokens; None: the physical cores this process may use, at most the CPUs
    not already busy when the model loads (``models/threads.py``, ``bench/threads.py``)."""
    n_threads_batch: int | None = None
    """CPU threads evaluating prompts in batches; None: every CPU this process may use that is not
    already busy when the model loads."""
    n_batch: int = 512
    prompt_mode: str = "append"
    """``append`` (default: transcript is append-only, no re-prefill on follow-ups) or ``exact``
    (re-render with the template on follow-ups, using recurrent-state checkpoints)."""
    extra_buffers: str | bool = "auto"
    """llama.cpp's extra weight buffers (repacked weights for AMX, AVX-512...): ``"auto"`` (on, unless
    a few tokens decoded with them after the first load on this build, CPU and quantisation crashed:
    then off, remembered; ``models/buffers.py``), ``true`` or ``false`` (llama.cpp's ``--no-repack``)."""
    saved_state_mb: int = 1024
    """A session keeps the model's state after each turn in its folder, up to this many MB (the
    oldest dropped), so that ``--resume`` evaluates only what was added since; 0 turns it off."""
    checkpoints: int = 4
    """Recurrent-state checkpoints kept for hybrid models (Qwen3.5), saved after each user message;
    0 turns them off. Each holds the model's recurrent state (tens of MB for a 4B model)."""


@dataclass(frozen=True)
class Limits:
    """How far a run goes: steps (Leaf's ``max_turns``), generated tokens per turn (FrogNano's
    evaluation setting), the context budget, hand-offs and repeats."""

    max_steps: int = 100
    max_tokens_per_turn: int = 8192
    max_context_tokens: int = 65536
    """Context budget: the run ends with ``max_context_len`` once a step's context exceeds it."""
    handoff_margin: int = 8192
    """Where a hand-off is on (the app; ``frogtui run --handoff``), a step that leaves fewer tokens
    than this of the budget ends the conversation with ``max_context_len`` and a fresh one starts
    from the hand-off (``agent/handoff.py``). Without a hand-off the run goes on until the budget
    itself is used up, as in Leaf."""
    max_handoffs: int = 5
    """Hand-offs ``frogtui run --handoff`` makes in one run at most."""
    repeat_threshold: int = 3
    """The Nth identical call in a row (or the Nth try of a call that failed N-1 times) is a
    repeat: asked about even when a rule allows it, denied headless under ``--approve policy``."""


NotifyWhen = Literal["unfocused", "always", "never"]
NOTIFY_WHEN: tuple[NotifyWhen, ...] = get_args(NotifyWhen)


@dataclass(frozen=True)
class UiSettings:
    """The app's settings (``[ui]``)."""

    notify: str = "unfocused"
    """When the app rings the terminal bell and sends a desktop notification (OSC 9 / OSC 777) as
    a question opens, a run ends or a run fails: ``unfocused`` (the terminal window does not have
    the focus, as far as the terminal reports it), ``always`` or ``never``."""


ApprovalMode = Literal["policy", "edits", "all", "none"]
"""How approvals are answered (``Config.approve``)."""
APPROVAL_MODES: tuple[ApprovalMode, ...] = get_args(ApprovalMode)
"""In the order the app's F2 cycles them."""


@dataclass(frozen=True)
class Config:
    repo: Path = field(default_factory=Path.cwd)
    model_spec: str = DEFAULT_MODEL_SPEC
    approve: ApprovalMode = "policy"
    """The approval mode (``--approve``; F2 in the app), one meaning in every front end
    (``approval.modes.apply_mode``):

    - ``policy``: what the rules allow runs, what they deny is denied, what they would ask about is
      asked (``frogtui run`` has no one to ask: it denies it, saying so);
    - ``edits``: as ``policy``, but a Write or Edit inside the repository that only the defaults
      would ask about runs (with its checkpoint), as if a rule allowed it; Bash as under ``policy``;
    - ``all``: what the rules would ask about runs too; the floor and explicit deny rules still deny;
    - ``none``: every Write, Edit and Bash is denied, even one a rule allows; Read and Glob as the
      rules say, with what they would ask about denied.
    """
    limits: Limits = field(default_factory=Limits)
    sampling: Sampling = field(default_factory=Sampling)
    llama: LlamaSettings = field(default_factory=LlamaSettings)
    ui: UiSettings = field(default_factory=UiSettings)
    theme: str = "frog-dark"
    rules_file: Path | None = None
    """Override for the user's rules file (``policy check --rules``)."""
    commit_trailer: str = "Assisted-by: {model} via frogtui"
    """The last line of every commit frogtui makes; ``{model}`` is the name of the model that ran."""
    project_instructions: bool = True
    """Give the repository's ``AGENTS.md`` (or ``CLAUDE.md``) to the model with the task
    (``agent/project_instructions.py``); ``frogtui run --no-project-instructions`` turns it off."""

    def replace(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **changes)


def repo_folder(path: str | os.PathLike[str]) -> Path:
    """The repository folder named on the command line (``~`` expanded, resolved).

    Raises:
        ConfigError: it is not an existing folder.
    """
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"repository folder not found: {folder}")
    return folder.resolve()


_SECTIONS = {"limits": Limits, "sampling": Sampling, "llama": LlamaSettings, "ui": UiSettings}


def _check_type(path: Path, section: str, cls: type, name: str, value: Any) -> None:
    """The value must have the type of the field's default (an int is a fine float; an optional
    field whose default is None takes an int)."""
    default = next(f for f in dataclasses.fields(cls) if f.name == name).default
    if (section, name) == ("llama", "extra_buffers"):
        if value not in ("auto", True, False) or isinstance(value, int) and not isinstance(value, bool):
            raise ConfigError(f'{path}: [llama] extra_buffers must be "auto", true or false, not {value!r}')
        return
    if (section, name) == ("ui", "notify") and value not in NOTIFY_WHEN:
        raise ConfigError(f'{path}: [ui] notify must be one of {", ".join(NOTIFY_WHEN)}, not {value!r}')
    if default is None:
        ok, wanted = value is None or (isinstance(value, int) and not isinstance(value, bool)), "an integer"
    elif isinstance(default, bool):
        ok, wanted = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, wanted = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(default, float):
        ok, wanted = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
    else:
        ok, wanted = isinstance(value, str), "a string"
    if not ok:
        raise ConfigError(f"{path}: [{section}] {name} must be {wanted}, not {value!r}")


def load_config(path: Path | None = None, **overrides: Any) -> Config:
    """Read ``config.toml`` (if any) and apply ``overrides`` (None values are ignored).

    The file's top-level keys are ``model`` (the spec), ``theme``, ``commit_trailer``,
    ``project_instructions`` and the
    sections ``[limits]``, ``[sampling]``, ``[llama]``, ``[ui]`` with the fields of those dataclasses.

    Raises:
        ConfigError: the file is not valid TOML or names an unknown key.
    """
    path = path or config_file()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(f"{path}: not valid TOML: {err}") from None
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key in _SECTIONS:
            cls = _SECTIONS[key]
            names = {f.name for f in dataclasses.fields(cls)}
            unknown = set(value) - names
            if unknown:
                raise ConfigError(f"{path}: unknown key(s) in [{key}]: {', '.join(sorted(unknown))}")
            for name, item in value.items():
                _check_type(path, key, cls, name, item)
            kwargs[key] = cls(**value)
        elif key == "model":
            kwargs["model_spec"] = str(value)
        elif key in ("theme", "commit_trailer"):
            kwargs[key] = str(value)
        elif key == "project_instructions":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: project_instructions must be true or false, not {value!r}")
            kwargs[key] = value
        else:
            raise ConfigError(f"{path}: unknown key {key!r}")
    config = Config(**kwargs)
    clean = {k: v for k, v in overrides.items() if v is not None}
    for section in _SECTIONS:
        if section in clean and isinstance(clean[section], dict):
            clean[section] = dataclasses.replace(getattr(config, section), **clean[section])
    return config.replace(**clean)
