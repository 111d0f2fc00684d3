"""bashlex with its parser tables loaded, not rebuilt.

bashlex builds its LALR tables with a vendored PLY ``yacc`` at import time (about 0.1 s): its
``yacc()`` neither reads the ``parsetab.py`` it ships nor honours ``write_tables``/``outputdir``.
``load_bashlex`` imports bashlex with its ``LRTable`` replaced, for that one import, by one that
takes the action and goto tables from a JSON file in frogtui's cache folder, keyed by a hash of
the grammar (productions, precedence, start symbol), and writes the file the first time. A file
that is missing, unreadable or for another grammar is rebuilt the usual way; the parser is then the
same object bashlex would have built.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import platformdirs

APP_NAME = "frogtui"


def tables_folder() -> Path:
    """Where the tables are kept (``$XDG_CACHE_HOME/frogtui``)."""
    return platformdirs.user_cache_path(APP_NAME)


def grammar_key(grammar: Any) -> str:
    """A hash of everything the LALR tables depend on."""
    productions = [(p.name, p.prod, p.prec) for p in grammar.Productions if p is not None]
    text = repr((productions, sorted(grammar.Precedence.items()), grammar.Start))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _read(path: Path) -> tuple[dict[int, dict[str, int]], dict[int, dict[str, int]]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        action = {int(state): dict(row) for state, row in data["action"]}
        goto = {int(state): dict(row) for state, row in data["goto"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return action, goto


def _write(path: Path, action: dict[int, dict[str, int]], goto: dict[int, dict[str, int]]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"action": list(action.items()), "goto": list(goto.items())}, handle, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:
        pass  # no cache folder: the tables are built again next time


def _cached_table_class(base: type) -> type:
    class CachedLRTable(base):  # type: ignore[misc, valid-type]
        def __init__(self, grammar: Any, log: Any = None) -> None:
            path = tables_folder() / f"bashlex-lalr-{grammar_key(grammar)}.json"
            tables = _read(path)
            if tables is None:
                super().__init__(grammar, log)
                _write(path, self.lr_action, self.lr_goto)
                return
            self.grammar, self.log = grammar, log
            self.lr_action, self.lr_goto = tables
            self.lr_productions = grammar.Productions
            self.sr_conflicts, self.rr_conflicts = [], []

    return CachedLRTable


def load_bashlex() -> ModuleType:
    """Import bashlex (once per process) with its parser tables from the cache."""
    if "bashlex" in sys.modules:
        return sys.modules["bashlex"]
    spec = importlib.util.find_spec("bashlex")
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError("No module named 'bashlex'", name="bashlex")
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package  # its submodules import without running its __init__ yet
    try:
        from bashlex import yacc

        original = yacc.LRTable
        yacc.LRTable = _cached_table_class(original)
        try:
            spec.loader.exec_module(package)  # bashlex.parser builds its parser here
        finally:
            yacc.LRTable = original
    except BaseException:
        for name in [n for n in sys.modules if n == "bashlex" or n.startswith("bashlex.")]:
            del sys.modules[name]
        raise
    return package


bashlex = load_bashlex()
