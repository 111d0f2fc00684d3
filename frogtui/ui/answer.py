"""The model's answer for one step: streamed Markdown. Its own module so that Markdown (and
markdown-it) is imported with the first answer, not before the app's first paint."""
from __future__ import annotations

from textual.await_complete import AwaitComplete
from textual.widgets import Markdown


class AnswerBlock(Markdown):
    """The model's answer for one step, appended as it streams.

    The chat mounts a block without waiting for it, and the same burst of events may append to it
    at once. Textual's ``Markdown`` keeps its first text aside (``_initial_markdown``) until it
    mounts, then renders it and replaces whatever ``append`` wrote before: so text appended before
    the mount joins that first text instead, and ``source`` includes it from the start.

    A code block wraps its long lines at the pane's width (Textual's scrolls them sideways with
    no scroll bar: the end of a line was cut off, unseen).
    """

    DEFAULT_CSS = """
    AnswerBlock MarkdownFence {
        overflow-x: hidden;
        & > Label { width: 1fr; text-wrap: wrap; }
    }
    """

    def append(self, markdown: str) -> AwaitComplete:
        if self._initial_markdown is not None:  # not mounted yet: its mount renders this text
            self._initial_markdown += markdown
            return AwaitComplete(_nothing())
        return super().append(markdown)

    @property
    def source(self) -> str:
        return self._initial_markdown if self._initial_markdown is not None else super().source


async def _nothing() -> None:
    return None
