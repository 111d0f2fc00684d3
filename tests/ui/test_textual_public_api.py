"""frogtui's widgets, screens and app use Textual's public API: none of them defines a method under
a private (underscore) name that a Textual class defines (the frame pacer once replaced
``Screen._on_timer_update``, which pinned Textual below 9)."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import frogtui.ui


def private_overrides() -> list[str]:
    found = []
    for info in pkgutil.iter_modules(frogtui.ui.__path__):
        module = importlib.import_module(f"frogtui.ui.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            textual = [base for base in cls.__mro__[1:] if base.__module__.startswith("textual.")]
            for attr, value in cls.__dict__.items():
                if not attr.startswith("_") or attr.startswith("__") or not callable(value):
                    continue
                if attr.startswith("_on_") or any(attr in vars(base) for base in textual):
                    if textual:
                        found.append(f"{module.__name__}.{name}.{attr}")
    return found


def test_no_private_textual_method_is_overridden() -> None:
    assert private_overrides() == []
