"""``frogtui run``: the agent loop without a UI. A compact trace goes to stderr, the final message
to stdout (or, with ``--output json|stream-json``, JSON: ``run_output``). ``--resume ID`` and
``--continue`` send the message as a follow-up in a saved session. Exit 0 when the run ends with
``agent``, 1 for other exit reasons, 2 for usage errors. docs/HEADLESS.md."""
from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from frogtui.agent.trajectory import write_json_atomic
from frogtui.approval import APPROVAL_MODES
from frogtui.arguments import Parser
from frogtui.config import SETTINGS_HELP, Config, Limits, load_config, repo_folder
from frogtui.errors import FrogtuiError
from frogtui.protocol import Model
from frogtui.run_output import OUTPUTS, JsonLines, line, result_object, start_object
from frogtui.run_progress import CountingModel
from frogtui.run_trace import TraceSink, start_traced
from frogtui.session.core import SessionCore
from frogtui.session.folder import Session
from frogtui.terminal_text import ControlFreeStream


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="frogtui run", description="Run one task headless (no UI).", epilog=SETTINGS_HELP)
    parser.add_argument("task", type=task_text, help="the task, as you would type it (with --resume/--continue: the follow-up message)")
    parser.add_argument("--repo", help="repository root (default: current folder; a resumed session's own)")
    parser.add_argument(
        "--model", help="model spec: replay:FILE, PATH.gguf, hf:REPO[:QUANT], http(s)://HOST:PORT/v1[#MODEL] (config key: model)"
    )
    parser.add_argument("--approve", choices=APPROVAL_MODES, default="policy", help="approval mode (default: policy)")
    parser.add_argument("--trajectory", type=Path, help="also write the trajectory JSON here")
    parser.add_argument("--max-steps", type=int, help="step limit (default 100; config key: limits.max_steps)")
    parser.add_argument("--commit", action="store_true", help="commit the run's changes with a drafted message when it ends with 'agent'")
    parser.add_argument("--no-project-instructions", action="store_true",
                        help="do not give the repository's AGENTS.md (or CLAUDE.md) to the model with the task "
                        "(config key: project_instructions)")
    parser.add_argument("--handoff", action="store_true",
                        help="when the context nears its budget (limits.handoff_margin), continue in a fresh conversation from a "
                        "drafted hand-off (at most limits.max_handoffs times) instead of ending with max_context_len")
    # headless output and follow-ups (docs/HEADLESS.md) -----------------------------------------
    parser.add_argument("--output", choices=OUTPUTS, default="text",
                        help="stdout: the final message (text, the default), one JSON object at the end (json), or one JSON "
                        "object per event as it happens (stream-json); the trace stays on stderr")
    follow = parser.add_mutually_exclusive_group()
    follow.add_argument("--resume", metavar="ID", help="send TASK as a follow-up in saved session ID (frogtui sessions lists them)")
    follow.add_argument("--continue", dest="follow_latest", action="store_true",
                        help="send TASK as a follow-up in the latest session of this repository")
    # ---------------------------------------------------------------------------------------------
    attempts = parser.add_argument_group("attempts (docs/ATTEMPTS.md)")
    attempts.add_argument("--attempts", type=int, metavar="N",
                          help="run the task as N attempts (1-8), each in its own git worktree and sandbox; the working tree is "
                          "not touched unless --pick applies one")
    attempts.add_argument("--check", metavar="CMD", help="with --attempts: the command that decides whether an attempt passed, run "
                          "in each attempt's sandbox (default: proposed from the repository: pytest, npm test, cargo test, go test)")
    attempts.add_argument("--pick", choices=("best",), help="with --attempts: apply the best passing attempt (fewest changed lines, "
                          "then fewest steps) to the working tree; without it each attempt is kept as a branch")
    return parser


def task_text(text: str) -> str:
    """The task argument: refused when blank (an empty task would run the model on nothing)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("the task is empty: say what to do, e.g. frogtui run \"fix the failing test\"")
    return text


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.max_steps is not None and args.max_steps < 1:
        print("frogtui: --max-steps must be at least 1", file=sys.stderr)
        return 2
    problem = attempts_usage(args)
    if problem:
        print(f"frogtui: {problem}", file=sys.stderr)
        return 2
    try:
        resume = followed(args)
        repo = repo_folder(args.repo or (resume.repo if resume is not None else "."))
        model_spec = args.model or (resume.model_spec if resume is not None else "") or None
        config = load_config(repo=repo, model_spec=model_spec, approve=args.approve,
                             project_instructions=False if args.no_project_instructions else None)
        if args.max_steps is not None:
            config = config.replace(limits=Limits(**{**config.limits.__dict__, "max_steps": args.max_steps}))
        from frogtui.models import load_model

        model = load_model(config.model_spec, config)
    except FrogtuiError as err:  # a model server's or a file's text may be in it
        print(f"frogtui: {err}", file=ControlFreeStream(sys.stderr))
        return 2
    if args.attempts is not None:  # best of N: frogtui.attempts
        from frogtui.attempts.running import run_attempts

        return run_attempts(args.task, config, model, attempts=args.attempts, check=args.check, pick=args.pick,
                            stderr=ControlFreeStream(sys.stderr), stdout=ControlFreeStream(sys.stdout))  # the model's text is in both
    return run_task(args.task, config, model, trajectory_path=args.trajectory, commit=args.commit, handoff=args.handoff,
                    output=args.output, resume=resume)


def followed(args: argparse.Namespace) -> Session | None:
    """The saved session ``--resume ID`` or ``--continue`` names (None for a new session); it must
    hold a conversation, and belong to ``--repo`` when that is given.

    Raises:
        FrogtuiError: there is none.
    """
    if args.resume is None and not args.follow_latest:
        return None
    flag = "--resume" if args.resume is not None else "--continue"
    session = Session.find(args.resume or "", repo_folder(args.repo or "."), flag=flag, conversation=True)
    if not session.has_conversation:
        raise FrogtuiError(f"session {session.id} holds no conversation to follow up (nothing was sent in it)")
    if args.repo is not None and os.path.realpath(session.repo) != os.path.realpath(repo_folder(args.repo)):
        raise FrogtuiError(f"session {session.id} belongs to {session.repo}, not {args.repo}")
    return session


def attempts_usage(args: argparse.Namespace) -> str:
    """Why ``--attempts``/``--check``/``--pick`` cannot go together as given ('' when they can)."""
    if args.attempts is None:
        return "--check and --pick go with --attempts N" if args.check is not None or args.pick is not None else ""
    if not 1 <= args.attempts <= 8:
        return "--attempts must be between 1 and 8"
    clash = [flag for flag, on in (("--commit", args.commit), ("--handoff", args.handoff), ("--trajectory", args.trajectory)) if on]
    if clash:
        return f"{', '.join(clash)} cannot go with --attempts (each attempt keeps its own trajectory in its session folder)"
    apart = [flag for flag, on in (("--resume", args.resume is not None), ("--continue", args.follow_latest),
                                   (f"--output {args.output}", args.output != "text")) if on]
    if apart:
        return f"{', '.join(apart)} cannot go with --attempts (the attempts end with their table; docs/ATTEMPTS.md)"
    if args.check is not None and not args.check.strip():
        return "--check is empty: give the command that checks an attempt, e.g. --check \"python -m pytest -q\""
    return ""


INTERRUPTING = {
    signal.SIGINT: "frogtui: interrupting (Ctrl+C again to stop at once)",
    signal.SIGTERM: "frogtui: SIGTERM: interrupting the run (a second signal stops at once)",
    signal.SIGHUP: "frogtui: SIGHUP: interrupting the run (a second signal stops at once)",
}
"""The one line each signal that interrupts a run prints (SIGTERM: ``timeout``, CI runners, ``kill``;
SIGHUP: the terminal closed)."""


def _interrupt_on_signals(core: SessionCore, stderr: TextIO) -> dict[int, Any]:
    """The first Ctrl+C, SIGTERM or SIGHUP interrupts the run cleanly (exit_reason ``cancelled``, the
    trajectory and the replay written); a second one stops at once. Returns the handlers replaced
    (none off the main thread, where Python cannot set any)."""
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, frame: Any) -> None:
        if core.interrupted:
            raise KeyboardInterrupt
        try:
            print(INTERRUPTING[signum], file=stderr, flush=True)
        except OSError:  # SIGHUP: the terminal may be gone already; the run still ends cleanly
            pass
        core.interrupt()

    return {signum: signal.signal(signum, handler) for signum in INTERRUPTING}


def run_task(
    task: str,
    config: Config,
    model: Model,
    *,
    trajectory_path: Path | None = None,
    stderr: TextIO | None = None,
    stdout: TextIO | None = None,
    commit: bool = False,
    handoff: bool = False,
    output: str = "text",
    resume: Session | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run ``task`` with ``model`` (closed at the end) and return the exit status; with ``handoff``,
    a run that ends with ``max_context_len`` goes on in a fresh conversation from the drafted
    hand-off, unedited. ``resume``: a saved session ``task`` follows up. ``output``: what stdout
    gets (``run_output.OUTPUTS``)."""
    started = clock()
    stderr = ControlFreeStream(stderr or sys.stderr)  # what the model and its commands wrote is in both
    stdout = ControlFreeStream(stdout or sys.stdout)
    sink = TraceSink(stderr, clock=clock)
    stream = JsonLines(stdout) if output == "stream-json" else None
    counted = CountingModel(model, sink.progress)  # tokens counted where they come from
    core = SessionCore(config, resume=resume, model=counted, handoff=handoff)

    def finished(exit_reason: str, final_message: str = "", error: str | None = None, status: int = 1) -> int:
        if output != "text":
            end = result_object(core, core.tally, exit_reason=exit_reason, final_message=final_message, error=error,
                                seconds=clock() - started, status=status)
            _say(stdout, line("result", **end))
        elif final_message:
            _say(stdout, final_message)
        return status

    if resume is not None and core.saved is None:
        print(f"frogtui: session {resume.id} holds no conversation that can be read back", file=stderr)
        core.close()
        return finished("error", error=f"session {resume.id} holds no conversation that can be read back", status=2)
    try:
        start_traced(core, stderr, sink, extra=stream)
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=stderr)
        core.close()
        return finished("error", error=str(err), status=2)
    if stream is not None:
        stream.write("start", **start_object(core, task, resumed=resume is not None))
    sink.progress.start()
    previous = _interrupt_on_signals(core, stderr)
    commit_failed = False
    try:
        result = core.send(task)
        for _ in range(config.limits.max_handoffs if handoff else 0):
            if result.exit_reason != "max_context_len" or not result.conversation.steps:
                break  # a conversation that could not take a single step would not get further
            result = core.hand_off(core.draft_handoff())
        if commit:  # before the model closes: it drafts the message
            commit_failed = not core.commit(model, exit_reason=result.exit_reason, out=stderr)
    except KeyboardInterrupt:
        print("frogtui: stopped", file=stderr)
        return finished("stopped", error="stopped at once by a second signal")
    finally:
        sink.progress.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        core.close()
    if trajectory_path is not None:
        write_json_atomic(trajectory_path, result.trajectory)
    status = 0 if result.exit_reason == "agent" and not commit_failed else 1
    return finished(result.exit_reason, result.final_message, result.error, status)


def _say(stdout: TextIO, text: str) -> None:
    try:
        print(text, file=stdout, flush=True)
    except OSError:  # nowhere to print it (the terminal closed); the trajectory holds it
        pass
