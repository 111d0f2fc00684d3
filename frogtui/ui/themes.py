"""Themes as data: TOML files holding Textual ``Theme`` fields plus frogtui's own variables.

Where themes come from, later folders overriding earlier ones by name:

1. the ``themes/`` folder next to the package (a source checkout),
2. ``frogtui/ui/themes/`` inside an installed package (package data),
3. ``$XDG_CONFIG_HOME/frogtui/themes/`` (the person's own themes).

The theme last chosen in the app (``f3``, the palette) is remembered in
``$XDG_STATE_HOME/frogtui/theme`` and used at the next start unless ``--theme`` names one.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from textual.app import App
from textual.theme import BUILTIN_THEMES, Theme

from frogtui.config import config_dir, state_dir
from frogtui.errors import ConfigError

DEFAULT_THEME = "frog-dark"

VARIABLE_DEFAULTS: dict[str, str] = {
    "diff-added": "green",
    "diff-removed": "red",
    "diff-added-background": "green 15%",
    "diff-removed-background": "red 15%",
    "diff-hunk": "cyan",
    "reasoning": "grey",
    "pygments-style": "",
}
"""Fallbacks for frogtui's custom variables, so Textual's own themes work too."""

_THEME_FIELDS = {f.name for f in fields(Theme)} - {"variables"}


def theme_folders() -> list[Path]:
    """The folders searched for ``*.toml`` themes, lowest precedence first."""
    package = Path(__file__).resolve().parent
    return [package.parents[1] / "themes", package / "themes", config_dir() / "themes"]


def parse_theme(text: str, source: str) -> Theme:
    """Build a Textual ``Theme`` from the TOML text of one theme file.

    Raises:
        ConfigError: not TOML, no ``name``/``primary``, or an unknown key.
    """
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"theme {source}: not valid TOML: {err}") from None
    variables = data.pop("variables", {})
    unknown = set(data) - _THEME_FIELDS
    if unknown:
        raise ConfigError(f"theme {source}: unknown key(s): {', '.join(sorted(unknown))}")
    if not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        raise ConfigError(f"theme {source}: needs string keys 'name' and 'primary'")
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ConfigError(f"theme {source}: [variables] must map names to strings")
    return Theme(**data, variables=dict(variables))


@dataclass(frozen=True)
class ThemeCatalog:
    """The themes found at startup, and the files that could not be read."""

    themes: dict[str, Theme]
    problems: list[str]


def load_themes(folders: list[Path] | None = None) -> ThemeCatalog:
    """Read every ``*.toml`` theme in ``folders`` (default: ``theme_folders()``).

    A broken file is reported in ``problems`` and skipped; the others still load.
    """
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in folders if folders is not None else theme_folders():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = parse_theme(path.read_text(encoding="utf-8"), str(path))
            except (OSError, UnicodeDecodeError) as err:
                problems.append(f"theme {path}: cannot read: {err}")
                continue
            except ConfigError as err:
                problems.append(str(err))
                continue
            themes[theme.name] = theme
    return ThemeCatalog(themes, problems)


def theme_names(catalog: ThemeCatalog) -> list[str]:
    """Every theme the app can show: frogtui's (and the person's) first, then Textual's own."""
    return sorted(catalog.themes) + sorted(set(BUILTIN_THEMES) - set(catalog.themes))


def check_theme(name: str, catalog: ThemeCatalog) -> None:
    """
    Raises:
        ConfigError: there is no theme ``name`` (the message names the themes there are).
    """
    if name not in theme_names(catalog):
        raise ConfigError(f"no theme named {name!r}; themes: {', '.join(theme_names(catalog))}")


def remembered_path() -> Path:
    return state_dir() / "theme"


def remembered_theme(catalog: ThemeCatalog) -> str | None:
    """The theme last chosen in the app, None when none was or it is gone."""
    try:
        name = remembered_path().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if name in theme_names(catalog) else None


def remember_theme(name: str) -> None:
    """Keep ``name`` for the next start (a folder that cannot be written: not kept)."""
    path = remembered_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name + "\n", encoding="utf-8")
    except OSError:
        pass


def start_theme(app: App[Any], wanted: str, catalog: ThemeCatalog) -> list[str]:
    """Register ``catalog``'s themes on an app that has not started, and set ``wanted`` (else
    ``DEFAULT_THEME``, else Textual's dark theme); returns the warnings to show (an unknown theme,
    the theme files that could not be read).

    Setting ``App.theme`` on a running app re-parses every style sheet and restyles every widget,
    a second start-up's worth of CSS work; set here, before the first parse, it is styled once.
    This does what Textual's theme watcher does but that refresh (nothing is styled yet)."""
    for theme in catalog.themes.values():
        app.register_theme(theme)
    name, warnings = wanted, list(catalog.problems)
    if wanted not in app.available_themes:
        name = DEFAULT_THEME if DEFAULT_THEME in app.available_themes else "textual-dark"
        warnings.insert(0, f"No theme named {wanted!r}; using {name}. Themes: {', '.join(sorted(catalog.themes))}")
    app.set_reactive(App.theme, name)
    dark = app.current_theme.dark
    classes = {old: False for old in app.classes if old.startswith("-theme-")}
    app.update_classes({**classes, f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark}, update=False)
    app._refresh_truecolor_filter(app.ansi_theme)  # ANSI colours as the theme maps them (Textual's watcher does this)
    app.stylesheet.set_variables(app.get_css_variables())
    return warnings


def pygments_style_for(theme: Theme) -> str:
    """The pygments style a theme asks for (a sensible one for Textual's own themes)."""
    return theme.variables.get("pygments-style") or ("monokai" if theme.dark else "default")
