"""Opening a link of the model's answer (Textual's Markdown opens a clicked link with
``App.open_url``, whose ``webbrowser`` looks for a browser on ``PATH``): only ``http`` and
``https`` links, with ``xdg-open`` (``open`` on macOS) by its absolute path from frogtui's clean
``PATH`` (``frogtui.programs``) and that ``PATH`` in its environment, so neither a ``file:`` link
to something the model wrote nor an ``xdg-open`` a command planted in ``.venv/bin`` runs."""
from __future__ import annotations

import os
import subprocess
import sys
from urllib.parse import urlsplit

from frogtui.programs import Programs

SCHEMES = ("http", "https")
"""The links that are opened; any other is shown, not opened."""


def open_link(url: str, programs: Programs) -> str | None:
    """Open ``url`` in the person's browser; the one line to show them when it was not opened."""
    if urlsplit(url).scheme.lower() not in SCHEMES:
        return f"Not opened (only http and https links are): {url}"
    name = "open" if sys.platform == "darwin" else "xdg-open"
    opener = programs.which(name)
    if opener is None:
        return f"Not opened: no {name} on PATH outside a repository. The link: {url}"
    try:
        subprocess.Popen(
            [opener, url], env={**os.environ, "PATH": programs.path}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
    except OSError as err:
        return f"Not opened ({err.strerror}): {url}"
    return None
