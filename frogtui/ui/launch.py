"""``frogtui [--repo DIR] [--model SPEC] [--theme NAME] [--resume [ID]] [--approve MODE]``: open the app."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from frogtui.arguments import SUBCOMMAND_HELP, Parser
from frogtui.config import APPROVAL_MODES, SETTINGS_HELP, Config, load_config, repo_folder
from frogtui.errors import FrogtuiError
from frogtui.session import Session

if TYPE_CHECKING:
    from frogtui.ui.app import FrogApp


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="frogtui",
        description="A terminal coding assistant: FrogNano-4B with a gate on every action. "
        f"Other commands: {', '.join(SUBCOMMAND_HELP.values())}.",
        epilog=SETTINGS_HELP,
    )
    parser.add_argument("--repo", help="repository root (default: current folder; with --resume ID, the session's)")
    parser.add_argument("--model", help="model spec: replay:FILE, PATH.gguf, hf:REPO[:QUANT], http(s)://HOST:PORT/v1[#MODEL] "
                        "(config key: model; a resumed session keeps its own unless this is given)")
    parser.add_argument("--theme", help="theme name, e.g. frog-dark or frog-light (config key: theme; "
                        "the theme last chosen with F3 is remembered and used when this is not given)")
    parser.add_argument("--resume", nargs="?", const="", metavar="ID",
                        help="reopen a session: the latest of this repository, or the one with this id (printed on quit)")
    parser.add_argument("--approve", choices=APPROVAL_MODES, help="starting approval mode (default: policy; F2 cycles)")
    return parser


def find_resumed(resume: str, repo: str | None) -> Session:
    """The session ``--resume [ID]`` names (``Session.find``).

    Raises:
        FrogtuiError: there is no such session.
    """
    return Session.find(resume, repo_folder(repo or "."))


def quit_lines(session: Session) -> list[str]:
    """What is printed when the app quits: the session id, where it is saved, how to resume it
    (from any folder: the session knows its repository)."""
    from frogtui.attempts.record import last_attempts

    if not session.trajectory_path.is_file() and last_attempts(session) is None:  # a resume reopens an attempts table
        return [f"frogtui: session {session.id}: nothing was sent, nothing to resume"]
    home = Path.home()
    folder = f"~/{session.folder.relative_to(home)}" if session.folder.is_relative_to(home) else str(session.folder)
    return [f"frogtui: session {session.id} saved in {folder}", f"  resume it: frogtui --resume {session.id}"]


def prepare(argv: list[str]) -> tuple[Config, Session | None]:
    """The app's configuration and the session to resume (None: a new one) for ``argv``. A resumed
    session keeps its repository and its model unless ``--repo`` / ``--model`` say otherwise. The
    theme: ``--theme``, else the one last chosen in the app, else the config file's.

    Raises:
        FrogtuiError: a bad folder, config file, session id or theme (one line).
    """
    args = build_parser().parse_args(argv)
    from frogtui.ui.themes import check_theme, load_themes, remembered_theme

    catalog = load_themes()
    if args.theme is not None:
        check_theme(args.theme, catalog)
    resume = find_resumed(args.resume, args.repo) if args.resume is not None else None
    repo = repo_folder(args.repo or (resume.repo if resume is not None else "."))
    model_spec = args.model or (resume.model_spec if resume is not None else "") or None
    theme = args.theme or remembered_theme(catalog)
    return load_config(repo=repo, model_spec=model_spec, theme=theme, approve=args.approve), resume


def make_app(argv: list[str], prompt: str = "", note: str = "") -> FrogApp:
    """The app for ``argv`` (``prompt`` put in its prompt, not sent; ``note`` shown first in the chat).

    Raises:
        FrogtuiError: see ``prepare``.
    """
    config, resume = prepare(argv)
    from frogtui.ui.app import FrogApp

    return FrogApp(config, resume=resume, prompt=prompt, note=note)


def main(argv: list[str], prompt: str = "", note: str = "") -> int:
    """Parse the command line, open the app (``prompt`` put in its prompt, not sent; ``note``
    shown in the chat), and return its exit status (2 for bad input)."""
    try:
        app = make_app(argv, prompt, note)
    except FrogtuiError as err:
        print(f"frogtui: {err}", file=sys.stderr)
        return 2
    result = app.run()
    for line in quit_lines(app.session):
        print(line)
    return int(result or 0)
