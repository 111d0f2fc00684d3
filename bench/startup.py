"""Start-up: how long until the first screen is painted, against a bare Textual app, and what
the heavy imports cost.

Usage: python bench/startup.py [--runs 5]

Each figure comes from a fresh interpreter (``python -c``), alternating between the ways, timed
from just before the process starts until it prints (ms, medians; a paint is timed by the wall
clock the process prints then, so a worker still running at its exit is not counted):

- ``bare_paint``: a bare Textual app with the same input (a prompt ``Input``, a ``Static``, a
  ``Footer``), headless, exiting right after its first refresh;
- ``frogtui_paint``: ``FrogApp`` on a replay model in a small git repository, headless, exiting
  after its first refresh (the model loads on a worker after the first paint);
- ``bashlex_plain`` / ``bashlex_cached``: ``import bashlex`` (which builds its LALR tables) and
  ``frogtui/approval/shell/bashlex_tables.py`` (tables from the cache), timed inside the process;
- ``gguf_spec``: ``import frogtui.models.gguf_spec`` (no download stack any more), inside too.

frogtui's modules are byte-compiled first (``compileall``), as an installed package's are and as
Textual's are for the bare app.

The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAINT = """
import sys, time
from textual.app import App
{setup}
app = {make}
def painted():
    print("painted", time.time(), flush=True)  # the paint, not the exit (workers may still run)
    app.exit()
app.call_later(lambda: app.call_after_refresh(painted))
app.run(headless=True, size=(120, 40))
"""
BARE = PAINT.format(setup="""
from textual.widgets import Footer, Input, Static
class Bare(App):
    def compose(self):
        yield Static("chat")
        yield Input(placeholder="Describe a task")
        yield Footer()
""", make="Bare()")
FROGTUI = PAINT.format(setup="""
from pathlib import Path
from frogtui.config import Config
from frogtui.ui.app import FrogApp
""", make="FrogApp(Config(repo=Path(sys.argv[1]), model_spec='replay:' + sys.argv[2], theme='frog-dark'))")
IMPORT = """
import importlib.util, json, platformdirs, hashlib, tempfile, time
started = time.perf_counter()
{code}
print(round((time.perf_counter() - started) * 1000, 1))
"""
CACHED = """
spec = importlib.util.spec_from_file_location("tables", "frogtui/approval/shell/bashlex_tables.py")  # without the package's imports
spec.loader.exec_module(importlib.util.module_from_spec(spec))
"""
IMPORTS = {
    "bashlex_plain": IMPORT.format(code="import bashlex"),
    "bashlex_cached": IMPORT.format(code=CACHED),
    "gguf_spec": IMPORT.format(code="import frogtui.models.gguf_spec"),
}
"""In-process times: the import alone (the interpreter's start is not counted)."""


def timed(code: str, *argv: str) -> float:
    """Until the process printed ``painted`` (its wall clock then), else the figure it printed last
    when that is a number, else the process's wall time."""
    started, started_wall = time.perf_counter(), time.time()
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=os.environ.copy(), cwd=ROOT,
                          timeout=120, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    words = proc.stdout.split()
    if "painted" in words:
        return (float(words[words.index("painted") + 1]) - started_wall) * 1000
    last = words[-1] if words else ""
    return float(last) if last.replace(".", "", 1).isdigit() else elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(tmp / name.lower())
        os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
        repo = tmp / "repo"
        repo.mkdir()
        (repo / "a.py").write_text("x = 1\n")
        for command in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "a"]):
            subprocess.run(["git", *command], cwd=repo, check=True)
        replay = tmp / "r.jsonl"
        replay.write_text(json.dumps({"content": "ok\n</think>\n\nok"}) + "\n")
        timed(IMPORTS["bashlex_cached"])  # writes the table cache once
        # frogtui's bytecode, as an installed package has it (pip compiles it; Textual's came with
        # its install): where PYTHONDONTWRITEBYTECODE is set, an editable checkout would otherwise
        # compile every module at every start, which the bare app never does
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "frogtui")], check=True)
        ways = {"bare_paint": (BARE,), "frogtui_paint": (FROGTUI, str(repo), str(replay)),
                **{name: (code,) for name, code in IMPORTS.items()}}
        results: dict[str, list[float]] = {name: [] for name in ways}
        for run in range(args.runs):
            for name in ways if run % 2 == 0 else reversed(list(ways)):
                results[name].append(timed(*ways[name]))
            print(f"run {run + 1}: " + "  ".join(f"{k} {v[-1]:.0f} ms" for k, v in results.items()), flush=True)
        medians = {f"{k}_ms": round(statistics.median(v)) for k, v in results.items()}
        ratio = statistics.median(f / b for f, b in zip(results["frogtui_paint"], results["bare_paint"], strict=False))
        print(json.dumps({"runs": args.runs, **medians, "paint_ratio": round(ratio, 2)}))


if __name__ == "__main__":
    main()
