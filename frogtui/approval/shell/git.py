"""What a ``git`` command does beyond its own behaviour, as data: the subcommands that only read,
the options that run another program (``grep -O``, ``--upload-pack``, ``rebase --exec``...), the
folders it is pointed at (``-C``, ``--git-dir``, ``--work-tree``: the floor keeps them inside the
repository), the places it creates (``worktree add``, ``clone``, ``init``) and the network. Pure."""

from __future__ import annotations

from frogtui.approval.shell.effects import (
    Target,
    _operands,
    abbreviates,
    git_command_key,
    git_subcommand,
)
from frogtui.approval.shell.known import git_unknown_option
from frogtui.approval.shell.model import Effects
from frogtui.approval.shell.programs import has_flag, option_values
from frogtui.approval.shell.words import Word

READ_ONLY = frozenset(
    {
        "status",
        "diff",
        "log",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "blame",
        "grep",
        "shortlog",
        "describe",
        "cat-file",
        "whatchanged",
        "count-objects",
        "rev-list",
        "name-rev",
        "merge-base",
        "show-ref",
        "for-each-ref",
        "var",
        "version",
        "annotate",
        "show-branch",
        "diff-tree",
        "diff-files",
        "diff-index",
        "check-ignore",
        "check-attr",
        "ls-remote-local",
    }
)
"""Subcommands that only read the repository and print (with the options below, nothing else)."""
LISTS_ONLY = {
    "branch": frozenset(
        {
            "-a",
            "-r",
            "-v",
            "-vv",
            "--all",
            "--remotes",
            "--verbose",
            "--list",
            "-l",
            "--show-current",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--sort",
            "--format",
            "--color",
            "--no-color",
            "--points-at",
            "--column",
            "--no-column",
            "-i",
            "--ignore-case",
        }
    ),
    "tag": frozenset(
        {
            "-l",
            "--list",
            "-n",
            "--sort",
            "--contains",
            "--no-contains",
            "--points-at",
            "--merged",
            "--no-merged",
            "--format",
            "--column",
            "-i",
        }
    ),
    "remote": frozenset({"-v", "--verbose", "get-url"}),
    "stash": frozenset({"list", "show", "-p", "--stat"}),
    "config": frozenset(
        {
            "--get",
            "--get-all",
            "--get-regexp",
            "-l",
            "--list",
            "get",
            "list",
            "--show-origin",
            "--show-scope",
            "--name-only",
            "-z",
            "--null",
            "--local",
            "--global",
            "--system",
            "--includes",
            "--type",
            "--default",
        }
    ),
    "reflog": frozenset({"show"}),
    "worktree": frozenset({"list", "--porcelain", "-v"}),
}
"""Subcommands that only read when every option is one of these (``git branch -a``, ``git tag -l``)."""
NOT_READ_ONLY_OPTIONS = ("--output", "--ext-diff", "-O", "--open-files-in-pager")
"""Options that make a reading subcommand write a file or run a program."""
RUNS = {
    "grep": ("-O", "--open-files-in-pager"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack",),
    "fetch-pack": ("--upload-pack", "--exec"),
    "clone": ("--upload-pack", "-u"),
    "archive": ("--exec",),
    "push": ("--receive-pack", "--exec"),
    "send-pack": ("--receive-pack", "--exec"),
    "rebase": ("-x", "--exec"),
    "difftool": ("-x", "--extcmd"),
    "mergetool": ("--tool-cmd",),
    "filter-branch": (
        "--tree-filter",
        "--index-filter",
        "--msg-filter",
        "--env-filter",
        "--commit-filter",
        "--parent-filter",
        "--tag-name-filter",
    ),
}
"""Options whose value is a command git runs, per subcommand."""
PLACES = ("-C", "--git-dir", "--work-tree")


def git_effects(name: str, args: list[Word]) -> Effects:
    """The effects of ``git ARGS`` beyond what ``write_targets`` already names."""
    start, settings = git_subcommand(args)
    places = tuple(Target(v, f"git {o}") for o in PLACES for v in option_values(args[:start], o))
    places += tuple(Target(Word(v), "git -c core.worktree") for k, v in settings if k.strip().lower() == "core.worktree")
    runs_config = any(git_command_key(key) for key, _ in settings) or any(w.text.startswith("--config-env") for w in args[:start])
    sub = args[start].text if start < len(args) else ""
    rest = args[start + 1 :]
    runs: list[tuple[str, str]] = []
    opaque: str | None = None
    for option in RUNS.get(sub, ()):
        for value in option_values(rest, option):
            if value.dynamic:
                opaque = f"git {sub} {option} runs a program only known when it runs"
            else:
                runs.append((value.text, f"git {sub} {option}"))
        if any(w.text == option or abbreviates(w.text, option) for w in rest) and sub == "grep":
            opaque = "git grep -O runs the configured pager on the files found"
    if sub == "bisect" and rest[:1] and rest[0].text == "run":
        opaque = "git bisect run runs a command whose words are only known when it runs" if any(w.dynamic for w in rest[1:]) else None
        runs += [(" ".join(w.text for w in rest[1:]), "git bisect run")] if not opaque else []
    if sub == "submodule" and "foreach" in [w.text for w in rest]:
        words = rest[[w.text for w in rest].index("foreach") + 1 :]
        words = [w for w in words if w.text not in ("--recursive", "-q", "--quiet")]
        opaque = "git submodule foreach runs a command only known when it runs" if any(w.dynamic for w in words) else None
        runs += [(" ".join(w.text for w in words), "git submodule foreach")] if words and not opaque else []
    hidden = next((w for w in args if w.dynamic), None)
    if hidden is not None and (sub in RUNS or start >= len(args) or args.index(hidden) < start):
        opaque = opaque or f"git: {hidden.text} is only known when it runs and may be an option that runs a program"
    exec_path = next((w.text for w in args[:start] if w.text.startswith("--exec-path")), "")
    if exec_path and exec_path != "--exec-path":  # ``--exec-path`` alone prints the folder
        opaque = opaque or "git --exec-path=DIR runs its programs from DIR"
    reads = _no_index_reads(sub, rest) + _file_reads(sub, rest)
    writes = _creates(sub, rest)
    read_only = (
        not (runs or opaque or writes or runs_config or hidden or reads)
        and _only_reads(sub, rest)
        and all(w.text in QUIET_GLOBALS for w in args[:start])
    )
    return Effects(writes=writes, reads=reads, places=places, runs=tuple(runs), opaque=opaque, read_only=read_only)


QUIET_GLOBALS = frozenset({"--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
                           "--icase-pathspecs", "--no-replace-objects", "--version", "--help"})
"""git's options before the subcommand that the read-only default knows (not ``-C``, ``--git-dir``,
``--work-tree``, ``--exec-path``, ``-c``: another repository's config, or programs, would run)."""
FILE_READS = {
    "blame": ("--contents", "--ignore-revs-file", "-S"),
    "annotate": ("--contents", "--ignore-revs-file", "-S"),
    "config": ("-f", "--file"),
    "grep": ("-f",),
    "ls-files": ("-X", "--exclude-from"),
    "check-ignore": ("--stdin",),
}
"""Options whose value is a file a reading subcommand reads (any file: decided like a Read)."""


def _file_reads(sub: str, rest: list[Word]) -> tuple[Target, ...]:
    found = [Target(v, f"git {sub} {o}") for o in FILE_READS.get(sub, ()) if o != "--stdin" for v in option_values(rest, o)]
    found += [Target(v, f"git {sub} --pathspec-from-file") for v in option_values(rest, "--pathspec-from-file") if v.text != "-"]
    return tuple(found)


def _only_reads(sub: str, rest: list[Word]) -> bool:
    if sub in READ_ONLY:
        return git_unknown_option(sub, rest) is None and not any(
            w.text == o or abbreviates(w.text, o) or (o == "-O" and w.text.startswith("-O"))
            for w in rest
            for o in NOT_READ_ONLY_OPTIONS
        )
    allowed = LISTS_ONLY.get(sub)
    if allowed is None or (sub == "stash" and [w.text for w in rest[:1]] not in (["list"], ["show"])):
        return False  # a bare ``git stash`` (or ``git stash -p``) is ``git stash push``
    if sub == "config":
        return bool({w.text for w in rest} & {"--get", "--get-all", "--get-regexp", "-l", "--list", "get", "list"}) and not any(
            w.text
            in ("--unset", "--unset-all", "--add", "--replace-all", "-e", "--edit", "set", "unset", "--rename-section", "--remove-section")
            for w in rest
        )
    listing = {w.text.split("=", 1)[0] for w in rest}
    if sub in ("branch", "tag") and listing & {"-l", "--list"}:
        return all(w.text.split("=", 1)[0] in allowed or not w.text.startswith("-") for w in rest)
    return all(w.split("=", 1)[0] in allowed for w in listing)


def _creates(sub: str, rest: list[Word]) -> tuple[Target, ...]:
    """Places ``git worktree add``/``move``, ``clone``, ``init``, ``submodule add``, ``bundle create``
    and ``archive -o`` create (the floor keeps them inside the repository)."""
    values = frozenset(
        {
            "-b",
            "-B",
            "--reason",
            "--branch",
            "--origin",
            "-o",
            "--depth",
            "--reference",
            "--template",
            "--separate-git-dir",
            "-c",
            "--config",
            "--jobs",
            "-j",
            "--filter",
            "--name",
        }
    )
    operands = _operands(rest, values)
    made: list[Word] = []
    if sub == "worktree" and operands[:1] and operands[0].text == "add":
        made = operands[1:2]
    elif sub == "clone" and operands:
        made = operands[1:2] or [Word(operands[0].text.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or ".", operands[0].dynamic)]
    elif sub == "init":
        made = operands[:1]
    elif sub == "submodule" and operands[:1] and operands[0].text == "add":
        made = (
            operands[2:3] or [Word(operands[1].text.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"), operands[1].dynamic)]
            if len(operands) > 1
            else []
        )
    elif sub == "worktree" and operands[:1] and operands[0].text == "move":
        made = operands[2:3]
    elif sub == "bundle" and operands[:1] and operands[0].text == "create":
        made = operands[1:2]
    elif sub == "archive":
        made = option_values(rest, "-o") + option_values(rest, "--output")
    made += option_values(rest, "--separate-git-dir")
    return tuple(Target(w, f"git {sub}", under=True) for w in made)


def _no_index_reads(sub: str, rest: list[Word]) -> tuple[Target, ...]:
    """``git diff --no-index A B`` reads any two files, like ``diff``."""
    if sub != "diff" or not has_flag(rest, "--no-index"):
        return ()
    return tuple(Target(w, "git diff --no-index", under=True) for w in _operands(rest))
