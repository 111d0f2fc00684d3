"""The model's answer for one step: streamed Markdown. Its own module so that Markdown (and
markdown-it) is imported with the first answer, not before the app's first paint."""
from __future__ import annotations

from textual.widgets import Markdown


class AnswerBlock(Markdown):
    """The model's answer for one step, appended as it streams."""
