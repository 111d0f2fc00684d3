"""Start-up of the app: it paints before the policy, git, the agent loop or a model is imported
(they come with the session, on the worker that prepares it). Checked in a fresh interpreter."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.app import App
from textual.color import Color

from tests.ui.conftest import SIZE, last_json_line, wait_for

HEAVY = ("frogtui.approval", "frogtui.vcs", "frogtui.agent.loop", "frogtui.session.core", "git", "bashlex", "llama_cpp")


def heavy_after(code: str, tmp_path: Path) -> list[str]:
    """The modules of ``HEAVY`` that a fresh interpreter has imported after running ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    env = {**os.environ, **{name: str(tmp_path / name.lower()) for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")}}
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_importing_the_app_imports_no_policy_git_loop_or_model(tmp_path: Path) -> None:
    assert heavy_after("import frogtui.ui.app, frogtui.ui.launch", tmp_path) == []


def test_building_the_app_imports_none_of_them_either(tmp_path: Path) -> None:
    code = (
        "from pathlib import Path\nfrom frogtui.config import Config\nfrom frogtui.ui.app import FrogApp\n"
        "app = FrogApp(Config(repo=Path('.'), model_spec='replay:none.jsonl'))"
    )
    assert heavy_after(code, tmp_path) == []


DEFERRED = (
    "pygments", "markdown_it", "textual.widgets._markdown", "textual.widgets._text_area",
    "frogtui.ui.diffmodel", "frogtui.ui.diffview", "frogtui.ui.review", "frogtui.ui.approval_screen",
    "frogtui.ui.handoff_screen", "frogtui.ui.trajectory_screen", "frogtui.ui.answer",
)
"""What the first screen does not show: imported when first needed (a diff, an answer, a screen)."""


def test_the_first_paint_imports_no_highlighter_markdown_or_other_screen(tmp_path: Path, py_repo: Path) -> None:
    """The app runs headless to its first paint; what it imported by then is checked (the worker
    that prepares the session may import more once the screen is up, so it is not started)."""
    code = (
        "import json, sys\nfrom pathlib import Path\nfrom frogtui.config import Config\nfrom frogtui.ui.app import FrogApp\n"
        f"app = FrogApp(Config(repo=Path({str(py_repo)!r}), model_spec='replay:none.jsonl', theme='frog-dark'))\n"
        "app._prepare = lambda load: None\n"
        "seen = []\n"
        "def painted():\n"
        f"    seen.extend(m for m in {DEFERRED!r} if m in sys.modules)\n"
        "    app.exit()\n"
        "app.call_later(lambda: app.call_after_refresh(painted))\n"
        "app.run(headless=True, size=(120, 40))\n"
        "print(json.dumps(seen))"
    )
    assert last_json_line(code, tmp_path) == []


@pytest.mark.parametrize(("wanted", "shown"), [("frog-light", "frog-light"), ("no-such-theme", "frog-dark")])
async def test_the_theme_styles_the_first_paint_without_a_second_css_pass(make_app, monkeypatch, wanted, shown) -> None:
    """The configured theme is set before the style sheets are first parsed: setting it on the
    running app re-parsed them all and restyled every widget before the first paint. An unknown
    theme still falls back to frog-dark and says so."""
    refreshes: list[object] = []
    original = App.refresh_css
    monkeypatch.setattr(App, "refresh_css", lambda self, *args, **kwargs: refreshes.append(args) or original(self, *args, **kwargs))
    app = make_app([], theme=wanted)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert refreshes == []
        assert app.theme == shown and app.has_class(f"-theme-{shown}")
        dark = app.get_theme(shown).dark
        assert app.has_class("-dark-mode") is dark and app.has_class("-light-mode") is not dark
        assert app.screen.styles.background == Color.parse(app.get_theme(shown).background)
        assert app.query_one("#prompt").has_focus
        warnings = [n.message for n in app._notifications]
        assert any("No theme named 'no-such-theme'" in w for w in warnings) is (wanted != shown)
        app.action_next_theme()  # switching later still restyles
        await wait_for(pilot, lambda: refreshes, what="the theme switch")


async def test_what_was_imported_is_frozen_for_the_collector_while_the_app_runs(make_app) -> None:
    """A full collection at start-up walked every object the imports made (tens of ms before the
    first paint); they are frozen while the app lives and thawed when it ends (a test process
    builds many apps: nothing stays frozen after one)."""
    app = make_app([])
    assert gc.get_freeze_count() > 0
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
