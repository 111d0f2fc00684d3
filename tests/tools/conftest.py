"""Fixtures shared by the tool tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.tools.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """An empty repository root (not a git repository) with its private temp folder."""
    root = tmp_path / "root"
    root.mkdir()
    return Workspace(root, tmp_dir=tmp_path / "private-tmp")
