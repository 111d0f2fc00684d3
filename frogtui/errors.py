"""Errors that carry a message meant for a person (one clear line, no traceback)."""
from __future__ import annotations


class FrogtuiError(Exception):
    """Base class: ``str(err)`` is the one line shown to the person."""


class ConfigError(FrogtuiError):
    """Bad command line, missing repository, unreadable rules file... (exit 2)."""


class ModelError(FrogtuiError):
    """The model could not be loaded or could not answer (``llm_query_error``)."""


class ModelLoadError(ModelError, ConfigError):
    """The model spec is unknown, or the file is missing, unreadable, corrupt or unsupported."""


class ContextOverflowError(ModelError):
    """The prompt does not fit in the model's context (``max_context_len``)."""
