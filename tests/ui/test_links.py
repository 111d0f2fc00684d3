"""A clicked link of the model's answer (issue 23, item 3: what frogtui runs outside the sandbox):
only http and https links open, with the opener from frogtui's clean ``PATH``, never one a command
planted in the repository."""
from __future__ import annotations

import time
from pathlib import Path

from frogtui.programs import Programs
from frogtui.ui.links import open_link
from tests.support import turn


def opener(folder: Path, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "xdg-open").write_text(f"#!/bin/sh\necho \"$0 $1\" >> {marker}\n")
    (folder / "xdg-open").chmod(0o755)


def wait_for_file(path: Path, seconds: float = 10.0) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().endswith("\n"):
            return path.read_text()
        time.sleep(0.05)
    return ""


def test_an_http_link_opens_with_the_opener_outside_the_repository(tmp_path: Path) -> None:
    repo, marker = tmp_path / "repo", tmp_path / "opened.txt"
    (repo / ".git").mkdir(parents=True)
    opener(repo / ".venv" / "bin", marker)  # planted by a command, on PATH first
    opener(tmp_path / "system" / "bin", marker)
    programs = Programs((str(repo / ".venv" / "bin"), str(tmp_path / "system" / "bin")), ()).for_trees(repo)
    assert open_link("https://example.invalid/docs", programs) is None
    assert wait_for_file(marker) == f"{tmp_path / 'system' / 'bin' / 'xdg-open'} https://example.invalid/docs\n"


def test_other_links_are_shown_not_opened(tmp_path: Path) -> None:
    marker = tmp_path / "opened.txt"
    opener(tmp_path / "bin", marker)
    programs = Programs((str(tmp_path / "bin"),), ())
    for url in ("file:///home/x/evil.desktop", "javascript:alert(1)", "smb://host/share", "/etc/passwd"):
        assert open_link(url, programs) == f"Not opened (only http and https links are): {url}"
    assert "no xdg-open" in (open_link("https://example.invalid", Programs((), ())) or "")
    time.sleep(0.2)
    assert not marker.exists()


async def test_the_app_opens_no_file_link_of_the_answer(make_app) -> None:
    app = make_app([turn("Done.", answer="See [this](file:///etc/passwd).")])
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_url("file:///etc/passwd")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["Not opened (only http and https links are): file:///etc/passwd"]
