"""``frogtui doctor``: what a person needs to know before the first run.

Reports the llama-cpp-python version and whether it can offload to a GPU, the model spec (or
``--model SPEC``) and whether it is on disk, what the sandbox confines (user namespace,
capabilities, hidden paths, network) or why there is none, the git identity, the rules files in
force and the session folder; each line is marked ✓, ! (works with a limit) or ✗ (stops a run).
Exit 0 when a run can start (model on disk or a server spec), 1 otherwise.
"""
from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from frogtui.cli import Parser
from frogtui.config import Config, LlamaSettings, config_dir, load_config, sessions_dir
from frogtui.errors import FrogtuiError


def _llama_line() -> str:
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return "llama-cpp-python: not installed (pip install llama-cpp-python)"
    from frogtui.models.local import ProcessDied, library_facts

    try:
        facts = library_facts()  # asked of a model process: llama.cpp never loads in frogtui's own
    except ProcessDied as err:
        return f"llama-cpp-python: {version}, but {err}"
    gpu = "yes" if facts.get("gpu_offload") else "no (CPU-only build; see docs/MODELS.md for CUDA, Metal, Vulkan builds)"
    return f"llama-cpp-python: {version}, GPU offload: {gpu}"


def _buffers_line(path: Path, config: Config) -> tuple[str, bool]:
    """Which path llama.cpp's weights take on this CPU (``[llama] extra_buffers``), tried for real."""
    from frogtui.models.local import probe_buffers

    results = probe_buffers(path, config)
    on, off = results[True], results[False]

    def speed(value: float | str) -> str:
        return f"{value:.1f} tok/s" if isinstance(value, float) else f"crashed: {value}"

    setting = config.llama.extra_buffers
    if setting == "auto":
        used = "on" if isinstance(on, float) else "off" if isinstance(off, float) else "none works"
        chosen = f"auto: {used}"
    else:
        chosen = f"{'on' if setting else 'off'} (set in [llama])"
    ok = isinstance(results[bool(setting)] if setting != "auto" else on if isinstance(on, float) else off, float)
    return f"llama.cpp extra weight buffers: {chosen}; with them {speed(on)}, without {speed(off)} ([llama] extra_buffers)", ok


def _threads_line(settings: LlamaSettings) -> str:
    from frogtui.models.threads import (
        available_cpus,
        default_threads,
        idle_cpus,
        physical_cores,
    )

    cpus = available_cpus()
    free = idle_cpus(cpus)
    generating, batch = default_threads(settings.n_threads, settings.n_threads_batch, busy=float(cpus - free))
    chosen = "set in [llama]" if settings.n_threads or settings.n_threads_batch else "defaults"
    return (f"threads: {generating} generating, {batch} batch ({chosen}; {physical_cores()} physical cores, "
            f"{cpus} CPUs available, {free} not busy by other processes now; [llama] n_threads / n_threads_batch)")


def _model_line(spec: str) -> tuple[str, bool]:
    if spec.startswith(("http://", "https://")):
        return f"model: {spec} (server; checked when a run starts)", True
    if spec.startswith("replay:"):
        path = Path(spec[len("replay:"):]).expanduser()
        return f"model: {spec} ({'found' if path.is_file() else 'file not found'})", path.is_file()
    from frogtui.models.gguf_spec import cached_path, check_gguf_file

    try:
        local = cached_path(spec)
        if local is not None:
            check_gguf_file(local)  # header only: a truncated download or a projector shows here
    except FrogtuiError as err:
        return f"model: {spec} ({err})", False
    if local is not None:
        return f"model: {spec} (on disk: {local})", True
    where = "not downloaded yet; the first run downloads it" if spec.startswith("hf:") else "file not found"
    return f"model: {spec} ({where})", False


def _local_gguf(spec: str) -> Path | None:
    """The GGUF file on disk a local spec names (None for servers, replays and files not there)."""
    if spec.startswith(("http://", "https://", "replay:")):
        return None
    from frogtui.models.gguf_spec import cached_path

    try:
        return cached_path(spec)
    except FrogtuiError:
        return None


def _sandbox_lines(repo: Path, rules_file: Path | None) -> list[str]:
    """What the sandbox confines for Bash in ``repo`` under the rules in force, and what is missing."""
    from frogtui.approval import PolicyEngine, make_sandbox
    from frogtui.tools.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="frogtui-doctor-") as tmp:
        try:
            workspace = Workspace(repo if repo.is_dir() else Path.cwd(), tmp_dir=tmp)
            sandbox = make_sandbox(workspace, PolicyEngine.load(workspace, rules_file).rules.sandbox)
        except FrogtuiError as err:
            return [f"sandbox: unknown ({err})"]
    bwrap = shutil.which("bwrap")
    found = bwrap if bwrap else "not found (Bash commands run without a sandbox; install bubblewrap)"
    lines = [f"bubblewrap: {found}", f"sandbox: {sandbox.describe()}"]
    if sandbox.warning:
        lines.append(f"sandbox: WARNING {sandbox.warning}")
    return lines


def _git_identity() -> str:
    if shutil.which("git") is None:
        return "git: not found"
    values = []
    for key in ("user.name", "user.email"):
        result = subprocess.run(["git", "config", "--get", key], capture_output=True, text=True, check=False)
        values.append(result.stdout.strip())
    name, email = values
    if not name or not email:
        return "git identity: not set (git config --global user.name / user.email; commits need it)"
    return f"git identity: {name} <{email}>"


def _attempt_worktrees_line(repo: Path) -> str:
    """The attempt worktrees a stopped ``--attempts`` run left in ``repo`` ('' when none), with how to remove them."""
    from frogtui.vcs.worktrees import leftovers

    paths = leftovers(repo)
    if not paths:
        return ""
    removal = "; ".join(f"git worktree remove --force {path}" for path in paths)
    return f"{len(paths)} attempt worktree(s) left by a stopped run: {', '.join(paths)} (remove: {removal})"


MARKS = {"ok": "✓", "warn": "!", "fail": "✗"}
"""The mark in front of each line: fine, works with a limit, stops a run."""


def report(repo: Path, out: TextIO, model_spec: str | None = None) -> int:
    """Write the report for ``repo`` to ``out`` (``model_spec`` overrides the configured model),
    each line marked ✓, ! (works with a limit) or ✗ (what stops a run); return the exit status."""

    def line(mark: str, text: str) -> None:
        print(f"{MARKS[mark]} {text}", file=out)

    try:
        config = load_config(repo=repo, model_spec=model_spec)
    except FrogtuiError as err:
        line("fail", f"config: {err}")
        print("frogtui cannot start here: fix the line marked ✗", file=out)
        return 1
    llama = _llama_line()
    line("warn" if "not installed" in llama else "ok", llama)
    line("ok", _threads_line(config.llama))
    model_line, model_ok = _model_line(config.model_spec)
    line("ok" if model_ok else "fail", model_line)
    local = _local_gguf(config.model_spec) if model_ok and "not installed" not in llama else None
    if local is not None:
        buffers_line, buffers_ok = _buffers_line(local, config)
        line("ok" if buffers_ok else "fail", buffers_line)
        model_ok = model_ok and buffers_ok
    for text in _sandbox_lines(repo, config.rules_file):
        line("warn" if any(w in text for w in ("WARNING", "not found", "unknown", "without a sandbox")) else "ok", text)
    identity = _git_identity()
    line("warn" if "not set" in identity or "not found" in identity else "ok", identity)
    user_rules = config.rules_file or config_dir() / "rules.toml"
    repo_rules = repo / ".frogtui.toml"
    for label, path in (("user rules", user_rules), ("repository rules", repo_rules)):
        line("ok", f"{label}: {path} ({'in force' if path.is_file() else 'none'})")
    line("ok", f"sessions: {sessions_dir()}")
    (leftover := _attempt_worktrees_line(repo)) and line("warn", leftover)
    print("ready: frogtui can run here" if model_ok else "not ready: fix the line marked ✗ (--model SPEC tries another model)", file=out)
    return 0 if model_ok else 1


def main(argv: list[str]) -> int:
    parser = Parser(prog="frogtui doctor", description="Check the setup before the first run.")
    parser.add_argument("--repo", default=".", help="repository whose rules file is checked (default: current folder)")
    parser.add_argument("--model", help="check this model spec instead of the configured one (config key: model)")
    args = parser.parse_args(argv)
    return report(Path(args.repo).expanduser().resolve(), sys.stdout, model_spec=args.model)
