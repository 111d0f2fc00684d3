"""``frogtui eval TASKS …`` (run a task set), ``frogtui eval mine [REPO]`` (make tasks from a
repository's history), ``frogtui eval example DIR`` (the shipped task set). docs/EVAL.md."""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path

from frogtui.approval import APPROVAL_MODES
from frogtui.arguments import Parser
from frogtui.config import SETTINGS_HELP, Limits, load_config
from frogtui.errors import FrogtuiError
from frogtui.eval.attempt import GOLD, Settings
from frogtui.eval.check import TEST_TIMEOUT_S
from frogtui.eval.outputs import OutputFolder
from frogtui.eval.tasks import load_tasks, parse_shard, parse_slice, select
from frogtui.terminal_text import ControlFreeStream

MAX_ATTEMPTS = 16


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--shard ")) from None


def _slice(text: str) -> slice:
    try:
        return parse_slice(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--slice ")) from None


def _test_timeout(text: str) -> int:
    value = _positive(text)
    if value > TEST_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"at most {TEST_TIMEOUT_S} seconds")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="frogtui eval", description=(
        "Run the agent over a task set in SWE-bench's format (a .jsonl, .json or .parquet file) and say what it resolves. "
        "Also: frogtui eval mine [REPO] (tasks from a repository's history), frogtui eval summary OUT… (one summary of "
        "several output folders, e.g. the shards of one set), frogtui eval example DIR (a small task set). "
        "docs/EVAL.md"), epilog=SETTINGS_HELP)
    parser.add_argument("tasks", type=Path, help="the tasks file (SWE-bench's fields, plus repo_path and test_cmd)")
    parser.add_argument("--model", help="model spec: replay:FILE, PATH.gguf, hf:REPO[:QUANT], http(s)://HOST:PORT/v1[#MODEL] "
                        "(config key: model)")
    parser.add_argument("--model-name", help="model_name_or_path in preds.jsonl (default: the model spec)")
    parser.add_argument("--approve", choices=APPROVAL_MODES, default="all",
                        help="approval mode (default: all: each task runs in a throwaway clone; the sandbox, the floor and your deny "
                        "rules still hold; edits: edits in the clone run, Bash as your rules say; policy: what your rules would ask "
                        "about is denied; none: every change denied, a baseline)")
    parser.add_argument("--out", type=Path, help="the output folder (default: ./eval-NAME, NAME the tasks file's name without its suffix); "
                        "a rerun with the same folder continues")
    parser.add_argument("--repos", type=Path, help="a folder of clones named OWNER__NAME, for tasks without repo_path")
    parser.add_argument("--workers", type=_positive, default=1, help="attempts at once against an OpenAI-compatible server (default 1)")
    parser.add_argument("--attempts", type=_positive, default=1, metavar="K",
                        help=f"attempts per task (1-{MAX_ATTEMPTS}), each a fresh conversation with its own seed: pass@1 and pass@K")
    parser.add_argument("--shard", type=_shard, metavar="I/N", help="only the I-th of N stable shares of the ids (for N machines)")
    parser.add_argument("--ids", help="only these instance ids (comma-separated)")
    parser.add_argument("--filter", metavar="REGEX", help="only the instance ids this regular expression finds")
    parser.add_argument("--slice", type=_slice, metavar="START:STOP", help="only these tasks of the file (after --ids and --filter), "
                        "e.g. 0:10")
    parser.add_argument("--max-steps", type=_positive, help="step limit per attempt (default 100; config key: limits.max_steps)")
    parser.add_argument("--timeout", type=_positive, metavar="S", help="stop an attempt's run after S seconds (timed_out)")
    parser.add_argument("--test-cmd", default="", metavar="CMD",
                        help="the test command for tasks without test_cmd; {tests} is replaced by the test ids, e.g. "
                        "\"python -m pytest -q {tests}\" (without one such tasks are patch only)")
    parser.add_argument("--test-timeout", type=_test_timeout, default=TEST_TIMEOUT_S, metavar="S",
                        help=f"time limit of each test command (default and most {TEST_TIMEOUT_S})")
    parser.add_argument("--gold", action="store_true", help="check each task's own patch instead of running a model (validates a task set)")
    parser.add_argument("--redo-existing", action="store_true", help="run again the attempts the output folder already records")
    parser.add_argument("--keep-checkouts", action="store_true", help="keep each attempt's clone in OUT/checkouts")
    parser.add_argument("--no-project-instructions", action="store_true",
                        help="do not give a repository's AGENTS.md (or CLAUDE.md) to the model (config key: project_instructions)")
    return parser


def main(argv: list[str]) -> int:
    if argv and argv[0] == "mine":
        return mine_main(argv[1:])
    if argv and argv[0] == "summary":
        return summary_main(argv[1:])
    if argv and argv[0] == "example":
        from frogtui.eval.examples import main as example_main

        return example_main(argv[1:])
    args = build_parser().parse_args(argv)
    stderr = ControlFreeStream(sys.stderr)  # task text, repository names and the model's words reach it
    if args.attempts > MAX_ATTEMPTS:
        print(f"frogtui: --attempts must be between 1 and {MAX_ATTEMPTS}", file=stderr)
        return 2
    if args.gold and args.model:
        print("frogtui: --gold checks the tasks' own patches: it takes no --model", file=stderr)
        return 2
    try:
        tasks, problems = load_tasks(args.tasks)
        ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
        chosen, unknown = select(tasks, ids=ids, pattern=args.filter, part=args.slice, shard=args.shard)
    except (FrogtuiError, ValueError) as err:
        print(f"frogtui: {err}", file=stderr)
        return 2
    for line in problems:
        print(f"frogtui: {line}", file=stderr)
    if unknown:
        print(f"frogtui: --ids names no task: {', '.join(unknown[:10])}", file=stderr)
        return 2
    if not chosen:
        print("frogtui: no task left after --ids/--filter/--slice/--shard", file=stderr)
        return 2
    out_dir = (args.out or Path.cwd() / f"eval-{args.tasks.stem}").expanduser().resolve()
    try:
        config = load_config(approve=args.approve, model_spec=args.model,
                             project_instructions=False if args.no_project_instructions else None)
        if args.max_steps is not None:
            config = config.replace(limits=Limits(**{**config.limits.__dict__, "max_steps": args.max_steps}))
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=stderr)
        return 2
    out = OutputFolder(out_dir, args.attempts)
    try:
        out.open()
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=stderr)
        return 2
    model = None
    try:
        from frogtui.eval.batch import EvalRun

        name = args.model_name or (GOLD if args.gold else config.model_spec)
        settings = Settings(config=config, out=out, model_name=name, repos=args.repos.expanduser().resolve() if args.repos else None,
                            test_cmd=args.test_cmd, test_timeout=args.test_timeout, timeout=args.timeout, gold=args.gold,
                            keep_checkouts=args.keep_checkouts,
                            hidden=(os.path.realpath(args.tasks), *([os.path.realpath(args.repos)] if args.repos else []), *out.hidden()))
        run = EvalRun(chosen, settings, attempts=args.attempts, workers=args.workers, redo_existing=args.redo_existing, stderr=stderr)
        if run.pending() and not args.gold:  # nothing left: no model is loaded, no request made
            from frogtui.models import load_model

            model = load_model(config.model_spec, config)
            run.use_model(model)
        return run.run()
    except FrogtuiError as err:  # the model could not load (a server's text may be in it)
        print(f"frogtui: {err}", file=stderr)
        return 2
    except KeyboardInterrupt:
        print("frogtui: stopped at once (the attempts that finished are recorded)", file=stderr)
        return 130
    finally:
        if model is not None:
            model.close()
        out.close()


def build_mine_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="frogtui eval mine", description=(
        "Make tasks from a repository's own history: commits that changed source and tests, where a test fails before the "
        "source change and passes after it (pytest projects). Writes SWE-bench's JSONL."))
    parser.add_argument("repo", nargs="?", type=Path, default=Path("."), help="the repository (default: the current folder)")
    parser.add_argument("--last", type=_positive, default=50, metavar="N", help="look at the last N commits (default 50)")
    parser.add_argument("--output", "-o", type=Path, help="write the tasks here (default: stdout)")
    parser.add_argument("--test-cmd", metavar="CMD", help="the tasks' pytest command, {tests} replaced by the test ids (default: "
                        "python -m pytest -q -p no:cacheprovider {tests}); it runs with -rA to read each test's outcome")
    parser.add_argument("--test-timeout", type=_test_timeout, default=TEST_TIMEOUT_S, metavar="S",
                        help=f"time limit of each test run (default and most {TEST_TIMEOUT_S})")
    return parser


def mine_main(argv: list[str]) -> int:
    args = build_mine_parser().parse_args(argv)
    stderr = ControlFreeStream(sys.stderr)
    from frogtui.eval.mine import PYTEST, mine

    repo = args.repo.expanduser()
    if not repo.is_dir():
        print(f"frogtui: repository folder not found: {repo}", file=stderr)
        return 2
    cancel = threading.Event()
    try:
        config = load_config()
        tasks = mine(repo, config, last=args.last, timeout=args.test_timeout, cancel=cancel, test_cmd=args.test_cmd or PYTEST,
                     say=lambda line: print(f"frogtui: {line}", file=stderr, flush=True))
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=stderr)
        return 2
    except KeyboardInterrupt:
        cancel.set()
        print("frogtui: stopped", file=stderr)
        return 130
    text = "".join(json.dumps(task.as_record(), ensure_ascii=False) + "\n" for task in tasks)
    if args.output is not None:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as err:
            print(f"frogtui: cannot write {args.output}: {err.strerror or err}", file=stderr)
            return 2
    else:
        sys.stdout.write(text)
    print(f"frogtui: {len(tasks)} task(s) from the last {args.last} commit(s)", file=stderr)
    return 0 if tasks else 1


def summary_main(argv: list[str]) -> int:
    """``frogtui eval summary PATH…``: the summary of several output folders or ``results.jsonl``
    files together (the shards of one set): the lines on stderr, ``summary.json``'s content on stdout."""
    parser = Parser(prog="frogtui eval summary", description="One summary of the results of several runs (output folders or "
                    "results.jsonl files, e.g. the shards of one set run on several machines).")
    parser.add_argument("paths", nargs="+", type=Path, help="output folders or results.jsonl files")
    args = parser.parse_args(argv)
    stderr = ControlFreeStream(sys.stderr)
    from frogtui.eval.outputs import RESULTS, read_jsonl
    from frogtui.eval.summary import summarize, summary_lines

    latest: dict[tuple[str, int], dict[str, object]] = {}
    for path in args.paths:
        file = path / RESULTS if path.is_dir() else path
        if not file.is_file():
            print(f"frogtui: no results here: {file}", file=stderr)
            return 2
        for item in read_jsonl(file):
            if isinstance(item.get("instance_id"), str):
                attempt = item.get("attempt")
                latest[(str(item["instance_id"]), attempt if isinstance(attempt, int) else 1)] = item
    if not latest:
        print("frogtui: the results hold no finished attempt", file=stderr)
        return 1
    attempts = max(number for _, number in latest)
    summary = summarize(list(latest.values()), attempts)
    for line in summary_lines(summary):
        print(f"frogtui: {line}", file=stderr)
    print(json.dumps(summary, indent=2))
    return 0
