"""Cost of a proposal per step, against the same command run directly in the sandbox, phase by phase.

Usage: python bench/proposals.py [--files 5000] [--runs 9] [--only NAME] [--checkpoints] [--profile NAME]
                                 [--way auto|overlay|fuse|undo]

A throwaway git repository of FILES files (100 per folder) and, for each command, two sides,
alternating after a warm-up run each:

* direct: the Bash tool (``ToolRunner.run``: ``run_bash`` under the bubblewrap wrapper);
* proposal: the same command as a proposal (``ToolRunner.propose``: the overlay mounted in a user
  and mount namespace, bwrap on it, the upper layer read as effects, the ignored paths asked of
  git), judged by the gate (``Approver.judge_proposal`` with ``src/**`` allowed), landed
  (``ToolRunner.land``: the stale check and the writes) and its layer folder removed.

The proposal's phases are timed in the same runs, by wrapping the functions ``propose`` calls:

* ``layers``: the layer folder made (``Layers.make``);
* ``run``: the command on the view (``run_bash``: ``unshare``, ``sh``, ``mount``, bwrap, the command
  and the kernel's copy-ups); ``run - direct`` is what the view adds to running the command;
* ``effects``: the upper layer read (``read_effects``); ``ignored``: ``git check-ignore``;
* ``judge``: ``Approver.judge_proposal``; ``stale``/``apply``: ``land``'s stale check and writes;
* ``discard``: the layer folder removed (renamed, then removed on a thread of its own);
* ``own``: the sum of the phases above but ``run``: frogtui's own work around the command.

``--way`` picks how the proposal runs (``approval.sandbox.views``: the kernel's overlay,
fuse-overlayfs, or run then undo from git's view, ``vcs.in_place``).

The direct side's changes are put back with ``git checkout``/``git clean`` between runs, outside
the clock. The checkpoints (one before and one after on both sides: ``loop._land`` takes them
around landing as ``loop`` does around a direct command) are left out unless ``--checkpoints``:
then both sides take them, inside the clock (``Checkpoints`` as an unsandboxed session takes them,
``git status`` each time), and ``checkpoints`` is their own phase. ``--profile NAME`` runs cProfile
over the proposal side of one command and prints where the time went.

Figures are medians in milliseconds over ``--runs`` alternating pairs; ``ratio`` is the median of
each pair's proposal/direct. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import frogtui.tools.landing as landing_module  # noqa: E402
import frogtui.tools.proposals as proposals_module  # noqa: E402
from frogtui.approval import Approver, PolicyEngine, SandboxSettings, make_sandbox  # noqa: E402
from frogtui.approval.rules import combine, parse_rules  # noqa: E402
from frogtui.approval.sandbox import make_view  # noqa: E402
from frogtui.protocol import ApprovalRequest, ToolCall  # noqa: E402
from frogtui.tools import ToolRunner  # noqa: E402
from frogtui.tools.proposals import Layers, ProposalRunner  # noqa: E402
from frogtui.tools.workspace import Workspace  # noqa: E402
from frogtui.vcs.in_place import TreeCapture  # noqa: E402
from frogtui.vcs.snapshot import open_repo  # noqa: E402

COMMANDS = {
    "true": (0, "true"),
    "sed one file": (1, "sed -i 's/^x = .*/x = 2/' src/f000/m000.py"),
    "rm -r a folder (100 files)": (100, "rm -r src/f002"),
    "append to 100 files": (100, "for i in $(seq 0 99); do echo y >> src/f001/m$(printf %03d $i).py; done"),
    "append to 1000 files": (1000, "for d in $(seq 10 19); do for i in $(seq 0 99); do"
                                   " echo y >> src/f0$d/m$(printf %03d $i).py; done; done"),
}
"""name -> (files changed, command)."""
PHASES = ("layers", "run", "effects", "ignored", "judge", "stale", "apply", "discard", "checkpoints")
OWN = ("layers", "effects", "ignored", "judge", "stale", "apply", "discard")
"""frogtui's own work around the command (``own``): every phase but the run and the checkpoints."""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def make_repo(root: Path, files: int) -> None:
    for n in range(files):
        folder = root / "src" / f"f{n // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{n % 100:03d}.py").write_text(f"x = {n}\n" + "# filler line\n" * 20)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "start")


def reset(root: Path) -> None:
    git(root, "checkout", "-q", "--", ".")
    git(root, "clean", "-qfd")


class Phases:
    """Seconds spent in each phase since ``clear``, by wrapping the functions that do them."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def clear(self) -> None:
        self.spent = {}

    @contextlib.contextmanager
    def timing(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.spent[phase] = self.spent.get(phase, 0.0) + time.perf_counter() - start

    def wrap(self, owner: Any, name: str, phase: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.timing(phase):
                return original(*args, **kwargs)

        setattr(owner, name, staticmethod(timed) if isinstance(owner, type) else timed)


def install(phases: Phases) -> None:
    """Time the phases ``ProposalRunner.propose`` and ``land`` go through (module globals they call)."""
    make = Layers.make.__func__  # type: ignore[attr-defined]

    def timed_make(cls: type, parent: Path, root: Path) -> Layers:
        with phases.timing("layers"):
            return make(cls, parent, root)  # type: ignore[no-any-return]

    Layers.make = classmethod(timed_make)  # type: ignore[assignment,method-assign]
    phases.wrap(proposals_module, "run_bash", "run")
    phases.wrap(proposals_module, "read_effects", "effects")
    phases.wrap(landing_module, "stale", "stale")
    original_ignored = ProposalRunner._ignored

    def timed_ignored(self: ProposalRunner, effects: Any) -> set[str]:
        with phases.timing("ignored"):
            return original_ignored(self, effects)

    ProposalRunner._ignored = timed_ignored  # type: ignore[method-assign]


def median(values: list[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--only", action="append", choices=list(COMMANDS), help="only this command (repeatable)")
    parser.add_argument("--checkpoints", action="store_true", help="both sides take a checkpoint before and after, in the clock")
    parser.add_argument("--profile", choices=list(COMMANDS), help="cProfile the proposal side of this command instead")
    parser.add_argument("--way", default="auto", choices=["auto", "overlay", "fuse", "undo"])
    args = parser.parse_args()
    phases = Phases()
    install(phases)
    with tempfile.TemporaryDirectory(prefix="frogtui-bench-proposals-") as folder:
        root = Path(folder) / "repo"
        root.mkdir()
        make_repo(root, args.files)
        tmp_dir = Path(folder) / "tmp"
        tmp_dir.mkdir()
        workspace = Workspace(root, tmp_dir=tmp_dir)
        sandbox = make_sandbox(workspace, SandboxSettings())
        view, why = make_view(sandbox.wrap, workspace.root, args.way)
        if view is None:
            sys.exit(f"no copy-on-write view here: {why}")
        checkpoints = None
        if args.checkpoints:
            from frogtui.vcs.checkpoints import Checkpoints
            from frogtui.vcs.repository import discover

            state = discover(root, "bench")
            assert state is not None
            checkpoints = Checkpoints(state)

        def ignored(paths: list[str]) -> set[str]:
            done = subprocess.run(["git", "check-ignore", "-z", "--stdin"], cwd=root, input="\0".join(paths) + "\0",
                                  capture_output=True, text=True, check=False)
            return {p for p in done.stdout.split("\0") if p}

        in_place = TreeCapture(open_repo(root)) if view.kind == "undo" else None
        proposals = ProposalRunner(view, workspace.root, Path(folder) / "layers", ignored=ignored, in_place=in_place)
        runner = ToolRunner(workspace, wrap=sandbox.wrap, proposals=proposals)
        rules = combine(parse_rules('[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n', "bench"), None)
        gate = Approver(PolicyEngine(workspace, rules), mode="policy")
        step = [0]

        def checkpoint(when: str, call: ToolCall) -> None:
            if checkpoints is not None:
                with phases.timing("checkpoints"):
                    (checkpoints.before_action if when == "before" else checkpoints.after_action)(step[0], call)

        def direct(call: ToolCall) -> float:
            step[0] += 1
            phases.clear()
            start = time.perf_counter()
            checkpoint("before", call)
            outcome = runner.run(call)
            checkpoint("after", call)
            took = time.perf_counter() - start
            assert outcome.exit_code == 0, outcome.observation
            reset(root)
            return took

        def proposed(call: ToolCall, request: ApprovalRequest) -> tuple[float, int]:
            step[0] += 1
            phases.clear()
            start = time.perf_counter()
            proposal = runner.propose(call)
            with phases.timing("judge"):
                approval = gate.judge_proposal(request, proposal)
            assert approval.allowed, approval.reason
            checkpoint("before", call)
            with phases.timing("land"):
                landed = runner.land(proposal, approval.accepted)
            checkpoint("after", call)
            assert landed.ok, landed
            with phases.timing("discard"):
                proposal.discard()
            took = time.perf_counter() - start
            phases.spent["apply"] = phases.spent.pop("land") - phases.spent.get("stale", 0.0)
            reset(root)
            return took, len(proposal.effects)

        if args.profile:
            _, command = COMMANDS[args.profile]
            call = ToolCall(id="b", name="Bash", arguments={"command": command})
            request = ApprovalRequest(call=call, step=1, root=str(root), proposable=True)
            proposed(call, request)
            profile = cProfile.Profile()
            for _ in range(args.runs):
                profile.enable()
                proposed(call, request)
                profile.disable()
            for order in ("cumulative", "tottime"):
                out = io.StringIO()
                pstats.Stats(profile, stream=out).sort_stats(order).print_stats(40)
                print(out.getvalue())
            return

        results: dict[str, Any] = {}
        shown = [p for p in PHASES if p != "checkpoints" or checkpoints is not None]
        print(f"{'command':28} {'changed':>7} {'direct':>8} {'proposal':>9} {'ratio':>5}  " + " ".join(f"{p:>8}" for p in shown)
              + f" {'run-direct':>10} {'own':>8}", flush=True)
        for name, (changed, command) in COMMANDS.items():
            if args.only and name not in args.only:
                continue
            call = ToolCall(id="b", name="Bash", arguments={"command": command})
            request = ApprovalRequest(call=call, step=1, root=str(root), proposable=True)
            direct(call)
            proposed(call, request)
            direct_ms: list[float] = []
            proposal_ms: list[float] = []
            ratios: list[float] = []
            spent: dict[str, list[float]] = {p: [] for p in PHASES}
            direct_checkpoints: list[float] = []
            effects = 0
            for _ in range(args.runs):
                direct_ms.append(direct(call) * 1000)
                direct_checkpoints.append(phases.spent.get("checkpoints", 0.0) * 1000)
                took, effects = proposed(call, request)
                proposal_ms.append(took * 1000)
                ratios.append(proposal_ms[-1] / direct_ms[-1])
                for phase in PHASES:
                    spent[phase].append(phases.spent.get(phase, 0.0) * 1000)
            d, p = median(direct_ms), median(proposal_ms)
            figures = {phase: median(values) for phase, values in spent.items()}
            bare = [dm - dc for dm, dc in zip(direct_ms, direct_checkpoints, strict=True)]
            run_minus_direct = median([run - b for run, b in zip(spent["run"], bare, strict=True)])
            own = median([sum(spent[phase][n] for phase in OWN) for n in range(args.runs)])
            results[name] = {"changed": changed, "effects": effects, "direct_ms": d, "proposal_ms": p,
                             "ratio": round(statistics.median(ratios), 2), "phases_ms": figures, "run_minus_direct_ms": run_minus_direct,
                             "own_ms": own}
            print(f"{name:28} {changed:>7} {d:8.1f} {p:9.1f} {statistics.median(ratios):5.2f}  "
                  + " ".join(f"{figures[ph]:8.1f}" for ph in shown) + f" {run_minus_direct:10.1f} {own:8.1f}", flush=True)
        load = os.getloadavg()
        print(json.dumps({"files": args.files, "runs": args.runs, "way": view.kind, "cpus": os.cpu_count(), "checkpoints": args.checkpoints,
                          "load": [round(x, 1) for x in load], "results": results}))


if __name__ == "__main__":
    main()
