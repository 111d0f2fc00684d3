"""bashlex's parser tables come from frogtui's cache after the first start, and give the same
parser bashlex builds itself (checked in fresh interpreters)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

COMMANDS = ["ls -la | grep x > out.txt", "for f in *.py; do echo $(basename $f); done", "a && b || c; (d) &", "cat <<EOF\nhi\nEOF"]

PROBE = f"""
import json, sys
from frogtui.approval.shell.bashlex_tables import bashlex
parser = sys.modules["bashlex.parser"].yaccparser
dumps = [node.dump() for command in {COMMANDS!r} for node in bashlex.parse(command)]
print(json.dumps({{"states": len(parser.action), "marker": 999999 in parser.action, "dumps": dumps,
                  "action": sorted((k, sorted(v.items())) for k, v in parser.action.items() if k != 999999)}}))
"""
PLAIN = PROBE.replace("from frogtui.approval.shell.bashlex_tables import bashlex", "import bashlex")


def run(code: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=os.environ.copy(), check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def cache_files() -> list[Path]:
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "frogtui"
    return sorted(folder.glob("bashlex-lalr-*.json"))


def test_the_tables_are_built_once_then_loaded_and_the_parser_is_the_same() -> None:
    assert cache_files() == []
    built = run(PROBE)
    (table,) = cache_files()
    data = json.loads(table.read_text())
    data["action"].append([999999, {}])  # a marker only a loaded table has
    table.write_text(json.dumps(data))
    loaded = run(PROBE)
    assert loaded["marker"] and not built["marker"]
    plain = run(PLAIN)
    assert loaded["action"] == built["action"] and loaded["dumps"] == built["dumps"] == plain["dumps"]
    assert loaded["states"] == built["states"] + 1 == plain["states"] + 1


def test_a_damaged_table_file_is_rebuilt() -> None:
    run(PROBE)
    (table,) = cache_files()
    table.write_text('{"action": [[0, ')
    again = run(PROBE)
    assert not again["marker"] and json.loads(table.read_text())["action"]
