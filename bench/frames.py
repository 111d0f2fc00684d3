"""Where the app's frames go while it shows a run of replayed steps: the frames drawn, their time,
and the time each kind of widget took to draw its lines.

Usage: python bench/frames.py [--steps 100] [--runs 3] [--kinds read] [--top 8]

Replays STEPS ``Read calc.py`` turns (or ``Bash true``) in the app as ``bench/overhead_steps.py``
does (Pilot, 120x40, ``--approve all``), timing every frame (``Screen._refresh_layout``: layout,
then the widgets' lines and the compositor) and, within them, each widget's ``render_lines`` by
class (a widget's time includes its border and scrollbars' composition, not its children's).
Prints each run, then the medians over runs of the widgets' times; the last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead_steps import TimedReplay, in_app, make_repo, write_replay  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.widget import Widget  # noqa: E402

from frogtui.config import Config  # noqa: E402


class FrameTimer:
    """Wraps the frame and the widgets' drawing with clocks while installed."""

    def __init__(self) -> None:
        self.frames: list[float] = []
        self.widgets: dict[str, float] = defaultdict(float)
        self._frame, self._lines = Screen._refresh_layout, Widget.render_lines

    def install(self) -> None:
        timer, frame, lines = self, self._frame, self._lines

        def timed_frame(screen, *args, **kwargs):
            started = time.perf_counter()
            try:
                return frame(screen, *args, **kwargs)
            finally:
                timer.frames.append(time.perf_counter() - started)

        def timed_lines(widget, crop):
            started = time.perf_counter()
            try:
                return lines(widget, crop)
            finally:
                timer.widgets[type(widget).__name__] += time.perf_counter() - started

        Screen._refresh_layout, Widget.render_lines = timed_frame, timed_lines

    def remove(self) -> None:
        Screen._refresh_layout, Widget.render_lines = self._frame, self._lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default="read", choices=("read", "bash"))
    parser.add_argument("--top", type=int, default=8)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            os.environ[name] = str(tmp / name.lower())
        repo = tmp / "repo"
        make_repo(repo)
        replay = write_replay(tmp / "replay.jsonl", args.kinds, args.steps)
        config = Config(repo=repo, model_spec=f"replay:{replay}", approve="all")
        for run in range(args.runs):
            timer, model = FrameTimer(), TimedReplay(replay)
            timer.install()
            try:
                in_app(config, model)
            finally:
                timer.remove()
            widgets = {name: round(seconds * 1000, 1) for name, seconds in timer.widgets.items()}
            result = {"total_s": round(model.done - model.asked[0], 3), "frames": len(timer.frames),
                      "frames_ms": round(sum(timer.frames) * 1000, 1), "widgets_ms": widgets}
            runs.append(result)
            top = sorted(result["widgets_ms"].items(), key=lambda kv: -kv[1])[: args.top]
            print(f"run {run + 1}: {result['total_s']} s until shown, {result['frames']} frames, {result['frames_ms']} ms in frames; "
                  + ", ".join(f"{k} {v}" for k, v in top))
    names = {name for result in runs for name in result["widgets_ms"]}
    medians = {name: round(statistics.median(r["widgets_ms"].get(name, 0.0) for r in runs), 1) for name in names}
    summary = {"steps": args.steps, "runs": args.runs, "kind": args.kinds,
               "total_s": statistics.median(r["total_s"] for r in runs), "frames": statistics.median(r["frames"] for r in runs),
               "frames_ms": statistics.median(r["frames_ms"] for r in runs),
               "widgets_ms": dict(sorted(medians.items(), key=lambda kv: -kv[1])[: args.top])}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
