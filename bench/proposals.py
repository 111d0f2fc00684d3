"""Cost of a proposal per step, against the same command run directly in the sandbox.

Usage: python bench/proposals.py [--files 5000] [--runs 15] [--way auto|overlay|fuse|undo]

A throwaway git repository of FILES files (100 per folder) and, for each command, two sides,
alternating after a warm-up run each:

* direct: the Bash tool (``ToolRunner.run``: ``run_bash`` under the bubblewrap wrapper);
* proposal: the same command as a proposal (``ToolRunner.propose``: the overlay mounted in a user
  and mount namespace, bwrap on it, the upper layer read as effects, the ignored paths asked of
  git), judged by the gate (``Approver.judge_proposal`` with ``src/**`` allowed), landed
  (``ToolRunner.land``: the stale check and the writes) and its layer folder removed.

``--way`` picks how the proposal runs (``approval.sandbox.views``: the kernel's overlay,
fuse-overlayfs, or run then undo from git's view, ``vcs.in_place``).

The direct side's changes are put back with ``git checkout``/``git clean`` between runs, outside
the clock; the checkpoint both sides take (before the command, or before landing) is left out.
Figures are medians in milliseconds; the last line is one JSON object.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frogtui.approval import Approver, PolicyEngine, SandboxSettings, make_sandbox  # noqa: E402
from frogtui.approval.rules import combine, parse_rules  # noqa: E402
from frogtui.approval.sandbox import make_view  # noqa: E402
from frogtui.protocol import ApprovalRequest, ToolCall  # noqa: E402
from frogtui.tools import ToolRunner  # noqa: E402
from frogtui.tools.proposals import ProposalRunner  # noqa: E402
from frogtui.tools.workspace import Workspace  # noqa: E402
from frogtui.vcs.in_place import TreeCapture  # noqa: E402
from frogtui.vcs.snapshot import open_repo  # noqa: E402

COMMANDS = {
    "true": "true",
    "sed one file": "sed -i 's/^x = .*/x = 2/' src/f000/m000.py",
    "write 100 files": "for i in $(seq 0 99); do echo y >> src/f001/m$(printf %03d $i).py; done",
    "rm -r a folder (100 files)": "rm -r src/f002",
    "write 1000 files": "for d in $(seq 10 19); do for i in $(seq 0 99); do echo y >> src/f0$d/m$(printf %03d $i).py; done; done",
}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--way", default="auto", choices=["auto", "overlay", "fuse", "undo"])
    args = parser.parse_args()
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

        def ignored(paths: list[str]) -> set[str]:
            done = subprocess.run(["git", "check-ignore", "-z", "--stdin"], cwd=root, input="\0".join(paths) + "\0",
                                  capture_output=True, text=True, check=False)
            return {p for p in done.stdout.split("\0") if p}

        in_place = TreeCapture(open_repo(root)) if view.kind == "undo" else None
        proposals = ProposalRunner(view, workspace.root, Path(folder) / "layers", ignored=ignored, in_place=in_place)
        runner = ToolRunner(workspace, wrap=sandbox.wrap, proposals=proposals)
        rules = combine(parse_rules('[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n', "bench"), None)
        gate = Approver(PolicyEngine(workspace, rules), mode="policy")
        results = {}
        for name, command in COMMANDS.items():
            call = ToolCall(id="b", name="Bash", arguments={"command": command})
            request = ApprovalRequest(call=call, step=1, root=str(root), proposable=True)

            def direct(call: ToolCall = call) -> float:
                start = time.perf_counter()
                outcome = runner.run(call)
                took = time.perf_counter() - start
                assert outcome.exit_code == 0, outcome.observation
                reset(root)
                return took

            def proposed(call: ToolCall = call, request: ApprovalRequest = request) -> tuple[float, int]:
                start = time.perf_counter()
                proposal = runner.propose(call)
                approval = gate.judge_proposal(request, proposal)
                assert approval.allowed, approval.reason
                landed = runner.land(proposal, approval.accepted)
                assert landed.ok, landed
                proposal.discard()
                took = time.perf_counter() - start
                reset(root)
                return took, len(proposal.effects)

            direct()
            proposed()
            direct_ms, proposal_ms, effects = [], [], 0
            for _ in range(args.runs):
                direct_ms.append(direct() * 1000)
                took, effects = proposed()
                proposal_ms.append(took * 1000)
            d, p = statistics.median(direct_ms), statistics.median(proposal_ms)
            results[name] = {"direct_ms": round(d, 1), "proposal_ms": round(p, 1), "ratio": round(p / d, 2), "effects": effects}
            print(f"{name:28} direct {d:7.1f} ms   proposal {p:7.1f} ms   ratio {p / d:4.2f}   effects {effects}", flush=True)
        print(json.dumps({"files": args.files, "runs": args.runs, "way": view.kind, "cpus": os.cpu_count(), "results": results}))


if __name__ == "__main__":
    main()
