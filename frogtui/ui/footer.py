"""A footer that shows the bindings that fit and hides the rest whole.

Textual's ``Footer`` lays its keys out in one row and docks the palette key (``^p``) on the right;
when the keys are wider than the terminal they run under it and the row reads as garbage. This
footer hides, from the right, the keys that would not fit (``display = False``), so every key
shown is whole. Every action stays in the command palette (``ctrl+p``).
"""
from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer

KEY_GAP = 1
"""The margin after each key in the compact footer."""


def key_width(key: Widget) -> int:
    """Cells one ``FooterKey`` takes in the compact footer: ``^r Review`` and its margin (the
    palette key: its left border)."""
    description = str(getattr(key, "description", "") or "")
    return cell_len(str(getattr(key, "key_display", ""))) + (1 + cell_len(description) if description else 0) + KEY_GAP


class FittingFooter(Footer):
    """A compact ``Footer`` that never lets keys overlap: the ones that do not fit are hidden."""

    def __init__(self) -> None:
        super().__init__(compact=True)

    def compose(self) -> ComposeResult:
        for key in super().compose():  # compact from the start: Textual sets the class once mounted, a restyle per key
            yield key.add_class("-compact", update=False) if self.compact and type(key).__name__ == "FooterKey" else key

    async def recompose(self) -> None:
        await super().recompose()
        self.fit_keys()

    def on_resize(self) -> None:
        self.fit_keys()

    def fit_keys(self) -> None:
        """Show the keys, left to right, while they fit beside the palette key."""
        keys = list(self.query("FooterKey"))  # Textual's footer keys (the type is not public)
        palette = [key for key in keys if key.has_class("-command-palette")]
        room = self.size.width - sum(key_width(key) for key in palette)
        for key in keys:
            if key in palette:
                continue
            width = key_width(key)
            key.display = width <= room
            room = room - width if key.display else -1  # keep the order: nothing after a gap
