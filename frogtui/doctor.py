"""``frogtui doctor``: what a person needs to know before the first run.

Reports the llama-cpp-python version and whether it can offload to a GPU, the model spec (or
``--model SPEC``) and whether it is on disk (a server spec: what the server's ``/models`` answers,
and whether it answers a one-token completion),
what the sandbox confines (user namespace, capabilities, hidden paths, network) or why there is none,
the git identity, whether git can record the working tree, the rules files in force, each read as a
run reads it, and the session folder;
each line is marked ✓, ! (works with a limit) or ✗ (stops a run). Exit 0 when a run can start (the
model found, every rules file valid), 1 otherwise.
"""
from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from frogtui.arguments import Parser
from frogtui.config import Config, LlamaSettings, load_config, sessions_dir
from frogtui.errors import FrogtuiError
from frogtui.temp_folders import process_folder
from frogtui.terminal_text import ControlFreeStream

if TYPE_CHECKING:
    from frogtui.approval.rules import RuleSet

if TYPE_CHECKING:
    from frogtui.approval import Sandbox
from frogtui.programs import at_start, which


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


def _buffers_line(results: dict[bool, float | str], config: Config) -> tuple[str, bool]:
    """Which path llama.cpp's weights take on this CPU (``[llama] extra_buffers``), from the probe
    of each (``probe_buffers``: tokens per second, or how it ended). "crashed" only for a signal."""
    on, off = results[True], results[False]

    def speed(value: float | str) -> str:
        if isinstance(value, float):
            return f"{value:.1f} tok/s"
        return f"crashed: {value}" if _killed(value) else f"failed: {value}"

    setting = config.llama.extra_buffers
    if setting == "auto":
        used = "on" if isinstance(on, float) else "off" if isinstance(off, float) else "none works"
        chosen = f"auto: {used}"
    else:
        chosen = f"{'on' if setting else 'off'} (set in [llama])"
    ok = isinstance(results[bool(setting)] if setting != "auto" else on if isinstance(on, float) else off, float)
    return f"llama.cpp extra weight buffers: {chosen}; with them {speed(on)}, without {speed(off)} ([llama] extra_buffers)", ok


TURN_MINUTES = 10
"""A turn that may run longer than this at the measured speed gets a ! and a cap that fits."""


def _rate_used(results: dict[bool, float | str], config: Config) -> float | None:
    """Tokens per second of the setting a run uses (``[llama] extra_buffers``), None if it fails."""
    setting = config.llama.extra_buffers
    value = results[bool(setting)] if setting != "auto" else results[True] if isinstance(results[True], float) else results[False]
    return value if isinstance(value, float) and value > 0 else None


def _turn_cap_line(config: Config, rate: float) -> tuple[str, str]:
    """How long a turn that runs to ``[limits] max_tokens_per_turn`` takes on this machine; a !
    and the cap that fits ``TURN_MINUTES`` when it is longer."""
    cap = config.limits.max_tokens_per_turn
    minutes = cap / rate / 60
    text = (f"turn cap: {cap:,} generated tokens ([limits] max_tokens_per_turn): up to {minutes:.0f} min a turn at "
            f"{rate:.1f} tok/s; a turn repeating itself ends sooner ([limits] repeat_text = {config.limits.repeat_text})")
    if minutes <= TURN_MINUTES:
        return "ok", text
    fits = max(512, int(rate * 60 * TURN_MINUTES) // 512 * 512)
    return "warn", f"{text}; for at most {TURN_MINUTES} min a turn here: max_tokens_per_turn = {fits}"


def _killed(outcome: str) -> bool:
    """Whether a probe's outcome is the model process killed by a signal (a crash), not an error."""
    return outcome.startswith("was killed by")


def _load_failure(results: dict[bool, float | str]) -> str | None:
    """Why the model does not load at all, when neither setting loads it and neither crashed (a
    truncated or corrupt file, an architecture llama.cpp lacks): said once, on the model's line."""
    outcomes = [value for value in results.values() if not isinstance(value, float)]
    if len(outcomes) < len(results) or any(_killed(value) for value in outcomes):
        return None
    return outcomes[-1]


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


def _model_line(spec: str, config: Config) -> tuple[str, bool]:
    if spec.startswith(("http://", "https://")):
        return _server_line(spec, config)
    if spec.startswith("replay:"):
        path = Path(spec[len("replay:"):]).expanduser()
        return f"model: {spec} ({'found' if path.is_file() else 'file not found'})", path.is_file()
    from frogtui.models.gguf_spec import cached_path, check_gguf_file, missing_bytes

    try:
        local = cached_path(spec)
        if local is not None:
            check_gguf_file(local)  # a projector, not a GGUF
            short = missing_bytes(local)  # a truncated download: its tensor table says how long it is
            if short is not None:
                return (f"model: {spec} (on disk: {local}, but truncated: {short[0]:,} of its {short[1]:,} bytes; "
                        "an interrupted download? download it again)"), False
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


def _rules_lines(repo: Path, rules_file: Path | None) -> tuple[list[tuple[str, str]], RuleSet | None]:
    """Each rules file in force for ``repo``, read as a run reads it: (mark, line) pairs, ✗ for one
    that stops a run (``frogtui run`` exits 2 on it), and the rules in force (None when they stop it)."""
    from frogtui.approval.loading import PROJECT_FILE, load_rules, read_rule_file, user_rules_path

    lines: list[tuple[str, str]] = []
    failed = False
    for label, path, required in (("user rules", user_rules_path(rules_file), rules_file is not None),
                                  ("repository rules", repo / PROJECT_FILE, False)):
        try:
            found = read_rule_file(path, required=required)
        except FrogtuiError as err:
            if path.name == PROJECT_FILE:  # a run ignores it, saying so: a project file can only tighten
                lines.append(("warn", f"{label}: {err}; ignored (a project file can only tighten your rules)"))
                continue
            lines.append(("fail", f"{label}: {err}"))
            failed = True
            continue
        lines.append(("ok", f"{label}: {path} ({'in force' if found is not None else 'none'})"))
    if failed:
        return lines, None
    try:
        rules = load_rules(repo, rules_file)
    except FrogtuiError as err:  # each file reads, but not together (or the trusted projects' list)
        lines.append(("fail", f"rules: {err}"))
        return lines, None
    lines.extend(("warn", f"rules: {note}") for note in rules.notes if not note.startswith(f"ignored {PROJECT_FILE}: "))
    return lines, rules


def _sandbox_lines(repo: Path, rules_file: Path | None, rules: RuleSet | None = None) -> list[str]:
    """What the sandbox confines for Bash in ``repo`` under the rules in force (``rules``, else read
    from disk; the default settings, said so, when the rules cannot be read), and what is missing."""
    from frogtui.approval import make_sandbox
    from frogtui.approval.backstop import backstopped
    from frogtui.approval.loading import load_rules
    from frogtui.approval.rules import RuleSet
    from frogtui.tools.workspace import Workspace

    folder = repo if repo.is_dir() else Path.cwd()
    unread = ""
    if rules is None:
        try:
            rules = load_rules(folder, rules_file)
        except FrogtuiError:
            rules, unread = RuleSet(), " (the default settings: the rules file does not load, see its line)"
    bwrap = which("bwrap", folder)
    found = bwrap if bwrap else "not found on PATH outside a repository (Bash commands run without a sandbox; install bubblewrap)"
    with tempfile.TemporaryDirectory(prefix="doctor-", dir=process_folder()) as tmp:
        try:
            sandbox = make_sandbox(Workspace(folder, tmp_dir=tmp), rules.sandbox)
        except FrogtuiError as err:
            return [f"bubblewrap: {found}", f"sandbox: unknown ({err})"]
        proposals = _proposals_line(sandbox, rules, folder)
    lines = [f"bubblewrap: {found}", f"sandbox: {sandbox.describe()}{unread}", *_sandbox_home_lines(sandbox)]
    _, no_backstop = backstopped(rules, sandbox)
    if sandbox.warning:
        lines.append(f"sandbox: WARNING {sandbox.warning}")
    lines += [f"sandbox: WARNING {note}" for note in sandbox.notes]
    if no_backstop:
        lines.append(f"sandbox: WARNING {no_backstop}")
    elif rules.read_only:
        lines.append("read-only default: on; the commands it allows run with everything read-only, an empty temp folder, no network")
    return [*lines, proposals]


def _proposals_line(sandbox: Sandbox, rules: RuleSet, folder: Path) -> str:
    """Whether a command the rules would ask about runs first as a proposal here, or why not."""
    from frogtui.approval.sandbox import OFF_SETTING, make_view, proposals_line
    from frogtui.vcs.in_place import undo_problem
    from frogtui.vcs.snapshot import open_repo

    if not rules.proposals:
        return OFF_SETTING
    repo = open_repo(folder)
    return proposals_line(*make_view(sandbox.wrap, folder, rules.proposals_way, repository=repo is not None,
                                     undo_problem=(lambda: undo_problem(repo)) if repo is not None else ""))


def _server_line(spec: str, config: Config) -> tuple[str, bool]:
    """Ask the model server of an ``http(s)://`` spec what it serves (``GET …/models``), as a run
    does when it starts: which model a run would use and its context size, or why it cannot."""
    from frogtui.models.openai_compat import OpenAICompatModel

    try:
        model = OpenAICompatModel.from_spec(spec, config)
    except FrogtuiError as err:
        return f"model: {spec} ({err})", False
    try:
        context = f", context {model.context_size:,} tokens" if model.context_size else ""
        listed = f"model: {spec} (the server answers: model {model.model}{context}"
        try:  # a server can list its model and still die on the first request (a CPU its weights crash)
            list(model.stream_turn([{"role": "user", "content": "Say OK."}], [], max_tokens=1, cancel=threading.Event()))
        except FrogtuiError as err:
            return f"{listed}; but a one-token completion failed: {err})", False
        return f"{listed}; a one-token completion worked)", True
    finally:
        model.close()


def _repository_line(repo: Path) -> tuple[str, str]:
    """Whether git can record the working tree of ``repo`` as a run does when it starts (a
    ``.gitattributes`` filter that does not work here stops it): (mark, line)."""
    from frogtui.vcs.snapshot import open_repo, snapshot

    try:
        found = open_repo(repo)
        if found is None or found.working_tree_dir is None:
            return "warn", f"repository: {repo} is not a git repository (no checkpoints, undo, review or patch)"
        snapshot(found)  # objects in git's store only: no ref, no index, no file of the person's changes
    except FrogtuiError as err:
        return "fail", f"repository: {err}"
    return "ok", f"repository: {found.working_tree_dir} (git records the working tree: checkpoints, undo, review)"

def _sandbox_home_lines(sandbox: Sandbox) -> list[str]:
    """What the sandbox shows of the home folder (``[sandbox] expose`` shows more)."""
    from frogtui.approval.sandbox import BwrapWrapper

    if not isinstance(sandbox.wrap, BwrapWrapper):
        return []
    home = os.environ.get("HOME") or os.path.expanduser("~")
    return [f"sandbox home: {sandbox.wrap.home_view(os.environ).describe(home)} ([sandbox] expose shows more)"]


def _git_identity() -> str:
    programs = at_start()
    executable = programs.which("git")
    if executable is None:
        return "git: not found on PATH outside a repository (frogtui never runs a git from a repository or a relative PATH entry)"
    values = []
    for key in ("user.name", "user.email"):
        env = {**os.environ, "PATH": programs.path}
        result = subprocess.run([executable, "config", "--get", key], capture_output=True, text=True, check=False, env=env)
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
    from frogtui.models.confinement import runner_argv

    confined = runner_argv()  # the model's process parses a file nobody vetted: in a sandbox of its own
    line("ok" if confined.sandboxed else "warn", confined.describe())
    line("ok", _threads_line(config.llama))
    model_line, model_ok = _model_line(config.model_spec, config)
    local = _local_gguf(config.model_spec) if model_ok and "not installed" not in llama else None
    if local is None:
        line("ok" if model_ok else "fail", model_line)
    else:
        from frogtui.models.local import probe_buffers

        results = probe_buffers(local, config)
        failure = _load_failure(results)
        if failure is not None:
            line("fail", f"{model_line}; llama.cpp does not load it: {failure}")
            model_ok = False
        else:
            line("ok", model_line)
            buffers_line, buffers_ok = _buffers_line(results, config)
            line("ok" if buffers_ok else "fail", buffers_line)
            model_ok = buffers_ok
            rate = _rate_used(results, config)
            if rate:
                mark, text = _turn_cap_line(config, rate)
                line(mark, text)
    rules_lines, rules = _rules_lines(repo, config.rules_file)
    for text in _sandbox_lines(repo, config.rules_file, rules):
        line("warn" if any(w in text for w in ("WARNING", "not found", "default settings", "without a sandbox")) else "ok", text)
    from frogtui.tools.project_env import describe_python

    line("ok", describe_python(os.environ, repo))
    identity = _git_identity()
    line("warn" if "not set" in identity or "not found" in identity else "ok", identity)
    repository_mark, repository = _repository_line(repo)
    line(repository_mark, repository)
    for mark, text in rules_lines:
        line(mark, text)
    line("ok", f"sessions: {sessions_dir()}")
    (leftover := _attempt_worktrees_line(repo)) and line("warn", leftover)
    ready = model_ok and rules is not None and repository_mark != "fail"
    hint = "" if model_ok else " (--model SPEC tries another model)"
    print("ready: frogtui can run here" if ready else f"not ready: fix the line marked ✗{hint}", file=out)
    return 0 if ready else 1


def main(argv: list[str]) -> int:
    parser = Parser(prog="frogtui doctor", description="Check the setup before the first run.")
    parser.add_argument("--repo", default=".", help="repository whose rules file is checked (default: current folder)")
    parser.add_argument("--model", help="check this model spec instead of the configured one (config key: model)")
    args = parser.parse_args(argv)
    out = ControlFreeStream(sys.stdout)  # a server's error text and the repository's file names are in it
    return report(Path(args.repo).expanduser().resolve(), out, model_spec=args.model)
