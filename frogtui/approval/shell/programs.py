"""The effect model's table: for each program frogtui knows, which options and operands read a file,
write one, delete, run another program or use the network, as data in one place (``PROGRAMS``),
and ``table_effects`` that applies a row to one command's arguments (``command_effects`` chooses
between this table and the programs with an analyser of their own, ``special.SPECIAL``).

A rule for a program allows that program's own behaviour (``rm`` deleting its operands, ``cat``
printing files); every effect beyond it (a written file, another program, a read outside the
repository) is decided on its own by the policy. Pure: no file is looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from frogtui.approval.shell.effects import (
    Target,
    _operands,
    abbreviates,
)
from frogtui.approval.shell.model import Effects
from frogtui.approval.shell.words import Word

ALWAYS = "*"
"""In ``Program.recursive``: the program always reads folders recursively (``rg``)."""


@dataclass(frozen=True, kw_only=True)
class Examples:
    """Commands that show what an entry of the effect model means, kept beside it and swept by one
    test (tests/approval/test_program_examples.py): with no rule, in a repository, each command in
    ``read_only`` is allowed by the read-only default, and none in ``not_read_only`` is.

    Attributes:
        read_only: Commands the analysis must prove only read (allowed without asking).
        not_read_only: ``(command, why)``: commands the read-only default must not allow.
    """

    read_only: tuple[str, ...] = ()
    not_read_only: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Program:
    """What one program does beyond printing.

    Attributes:
        read_only: Its own behaviour is reading files and printing (the read-only default may allow it).
        reads: Which operands it reads: ``all``, ``after-first`` (the first is a pattern or a script),
            ``first`` or ``none`` (it lists names, it does not read contents).
        pattern_options: Options that give the pattern, so that every operand is a file (``grep -e``).
        recursive: Options that make it read whole folders (``ALWAYS``: it always does).
        default_operand: What it reads when no operand is given (``rg`` searches ``.``).
        value_options: Options that take a value (so that values are not taken for operands).
        writes: Options whose value is a file it writes (beyond its own behaviour).
        reads_options: Options whose value is a file it reads.
        runs: Options whose value is a command it runs.
        opaque: Options that make it run something not known statically, with why.
        deletes: Options that make it delete the files it reads (``zip -m``).
        assigns: Options whose value names a variable it sets (``printf -v``).
        network: It uses the network.
        writes_second: Its second operand is a file it writes (``uniq IN OUT``).
        follows: Options that make it follow the symlinks in the folders it reads (``grep -R``).
    """

    read_only: bool = True
    reads: str = "all"
    pattern_options: frozenset[str] = frozenset()
    recursive: frozenset[str] = frozenset()
    default_operand: str = ""
    value_options: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    reads_options: frozenset[str] = frozenset()
    runs: frozenset[str] = frozenset()
    opaque: dict[str, str] = field(default_factory=dict)
    deletes: frozenset[str] = frozenset()
    assigns: frozenset[str] = frozenset()
    network: bool = False
    writes_second: bool = False
    follows: frozenset[str] = frozenset()
    response_files: bool = False
    """An operand ``@FILE`` gives more options from FILE (binutils' ``strings``)."""
    examples: Examples = Examples()
    """What the entry means, as commands (``<OUT>``: a folder outside the repository)."""


def _opts(text: str) -> frozenset[str]:
    return frozenset(text.split())


_LISTS = Program(reads="none")
_PRINTS = Program(value_options=_opts("-n -c --lines --bytes -d -f -b -s -w -t -k -N -j -o -A -e -x -v"))
_SEARCH = Program(
    reads="after-first",
    pattern_options=_opts("-e -f --regexp --file"),
    recursive=_opts("-r -R --recursive -d --directories --dereference-recursive"),
    follows=_opts("-R --dereference-recursive"),
    value_options=_opts("-e -f -m -A -B -C -d -D --regexp --file --max-count --include --exclude --exclude-dir --label --context"),
    reads_options=_opts("-f --file"),
)
_ASSIGNS = Program(reads="none", read_only=True)

PROGRAMS: dict[str, Program] = {
    **dict.fromkeys(
        (
            "ls",
            "pwd",
            "echo",
            "true",
            "false",
            "which",
            "type",
            "whoami",
            "id",
            "uname",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "stat",
            "du",
            "df",
            "printenv",
            "seq",
            "test",
            "[",
            "nproc",
            "expr",
            "tr",
            "uptime",
            "locale",
            "groups",
            "tty",
            "cal",
            "sleep",
            "cd",
            "pushd",
            "popd",
            "dirs",
            "command",
        ),
        _LISTS,
    ),
    "printf": replace(_LISTS, assigns=_opts("-v")),
    "tree": replace(_LISTS, value_options=_opts("-L -P -I -o -H -T --filelimit --charset"), writes=_opts("-o"),
                    opaque={"-R": "with -H it writes 00Tree.html in every folder",
                            "--fromfile": "tree --fromfile lists the lines of the files it names (any file)"},
                    examples=Examples(not_read_only=(("tree --fromfile <OUT>/notes.json", "tree --fromfile lists a file's lines"),))),
    "date": replace(_LISTS, value_options=_opts("-d -f -r -I --date --file --reference"), reads_options=_opts("-f --file -r --reference"),
                    opaque={"-s": "it sets the system clock", "--set": "it sets the system clock"}),
    "iconv": replace(_PRINTS, value_options=_opts("-f -t -o --from-code --to-code --output"), writes=_opts("-o --output")),
    "file": replace(_PRINTS, value_options=_opts("-m -f -F -e -P --magic-file --files-from --separator --exclude --parameter"),
                    reads_options=_opts("-m -f --magic-file --files-from"),
                    opaque={"-C": "it compiles a magic file, writing NAME.mgc", "--compile": "it compiles a magic file, writing NAME.mgc",
                            **dict.fromkeys(("-z", "-Z", "--uncompress", "--uncompress-noreport"),
                                            "file -z runs decompression programs found on PATH")},
                    examples=Examples(not_read_only=(("file -z calc.py", "file -z runs decompressors"),))),
    **dict.fromkeys(
        (
            "cat",
            "head",
            "tail",
            "wc",
            "nl",
            "tac",
            "od",
            "hexdump",
            "strings",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "b2sum",
            "cksum",
            "cut",
            "paste",
            "join",
            "comm",
            "fold",
            "fmt",
            "column",
            "rev",
            "expand",
            "unexpand",
            "cmp",
        ),
        _PRINTS,
    ),
    "hexdump": replace(_PRINTS, value_options=_opts("-e -f -n -s --format-file"), reads_options=_opts("-f --format-file"),
                       examples=Examples(not_read_only=(("hexdump -f <OUT>/notes.json calc.py", "hexdump -f reads a format file"),))),
    "strings": replace(_PRINTS, value_options=_opts("-n -t -e -T -s --bytes --radix --encoding --target --output-separator"),
                       response_files=True,
                       examples=Examples(not_read_only=(("strings @<OUT>/notes.json", "strings @FILE reads options from a file"),))),
    **dict.fromkeys(("md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum"), replace(
        _PRINTS, opaque=dict.fromkeys(("-c", "--check"), "it reads the files a checksum list names (any file)"),
        examples=Examples(not_read_only=(("md5sum -c <OUT>/notes.json", "md5sum -c reads the files a list names"),)))),
    **dict.fromkeys(("grep", "egrep", "fgrep"), _SEARCH),
    "rg": replace(
        _SEARCH,
        recursive=frozenset({ALWAYS}),
        default_operand=".",
        value_options=_SEARCH.value_options
        | _opts("-g --glob -t -T --type --type-not -j --threads -M --max-columns --sort --sortr -r --replace")
        | _opts("--pre --pre-glob --hostname-bin --iglob --max-depth --type-add"),
        runs=_opts("--pre --hostname-bin"),
        follows=_opts("-L --follow"),
        opaque={"-z": "rg -z runs decompression programs found on PATH", "--search-zip": "rg -z runs decompression programs found on PATH"},
    ),
    "diff": replace(
        _PRINTS,
        recursive=_opts("-r --recursive"),
        value_options=_opts("-x -X -U -C -L --exclude --exclude-from --label"),
        reads_options=_opts("--from-file --to-file"),
    ),
    "sort": replace(
        _PRINTS,
        value_options=_opts("-k -t -T -S -o --output --key --field-separator --buffer-size --parallel --compress-program --files0-from"),
        writes=_opts("-o --output"),
        runs=_opts("--compress-program"),
        reads_options=_opts("--files0-from"),
        examples=Examples(read_only=("sort -u calc.py",)),
    ),
    "uniq": replace(_PRINTS, value_options=_opts("-f -s -w"), writes_second=True,
                    examples=Examples(not_read_only=(("uniq a b", "uniq overwrites its second operand"),))),
    "xxd": replace(_PRINTS, value_options=_opts("-c -g -l -s -o -C -n"), writes_second=True),
    **dict.fromkeys(
        ("base64", "base32", "basenc"),
        replace(
            _PRINTS, value_options=_opts("-w -o -i --wrap --output --input"), writes=_opts("-o --output"), reads_options=_opts("-i --input")
        ),
    ),
    "jq": Program(reads="after-first", pattern_options=_opts("-f --from-file"), reads_options=_opts("-f --from-file --slurpfile --rawfile"),
                  value_options=_opts("--arg --argjson --slurpfile --rawfile --indent -L --from-file -f")),
    **dict.fromkeys(("export", "readonly", "read", "unset"), _ASSIGNS),
    **dict.fromkeys(("declare", "typeset", "local"), replace(_ASSIGNS, opaque={
        "-i": "an integer variable's value is evaluated as arithmetic, which runs the commands a value holds (a[$(cmd)])"})),
    **dict.fromkeys(("mapfile", "readarray"), replace(_ASSIGNS, value_options=_opts("-C -c -d -n -O -s -u"), opaque={
        "-C": "the callback (-C) is code that runs for each line read"})),
    "zip": Program(read_only=False, reads="after-first", recursive=_opts("-r -R --recurse-paths"), runs=_opts("-TT --unzip-command"),
                   deletes=_opts("-m --move"), value_options=_opts("-TT --unzip-command -O --output-file -b -t -tt -x -i -n -P")),
    **dict.fromkeys(("cp", "scp", "rsync"), Program(read_only=False, recursive=_opts("-r -R -a --recursive --archive"),
                                                   value_options=_opts("-t -S -T --suffix --target-directory -e -P"))),
    "make": Program(read_only=False, reads="none", value_options=_opts("-f -C -j -l -o -W -I --file --directory --eval"),
                    opaque={"--eval": "make --eval runs a recipe given inline"}),
}
"""The effect table. Programs not listed have no known effect beyond their own (their words are
still checked against the floor, and their writes by ``write_targets``)."""

SCHEDULERS = {
    "crontab": frozenset({"-l", "--list"}),
    "at": frozenset({"-l", "-q", "-c", "-r", "-d"}),
    "batch": frozenset(),
    "systemd-run": frozenset(),
    "launchctl": frozenset({"list", "print", "help", "version"}),
    "systemctl": frozenset({"status", "show", "cat", "list-units", "list-unit-files", "list-timers", "list-jobs", "list-sockets",
                            "list-dependencies", "is-active", "is-enabled", "is-failed", "help", "--version", "-h", "--help"}),
}
VERB_SCHEDULERS = frozenset({"launchctl", "systemctl"})
"""Schedulers whose first operand is the verb (``launchctl load list`` loads a file named ``list``)."""
"""Programs that schedule code to run later, outside frogtui and the sandbox (the floor denies
them), with the options that only look (``crontab -l``)."""


def table_effects(name: str, program: Program, args: list[Word]) -> Effects:
    """The effects ``PROGRAMS`` gives ``name`` for its arguments ``args``."""
    writes: list[Target] = []
    reads: list[Target] = []
    runs: list[tuple[str, str]] = []
    opaque: str | None = None
    assigns: list[str] = []
    for option in sorted(program.writes):
        writes += [Target(w, f"{name} {option}", beyond=True) for w in option_values(args, option)]
    for option in sorted(program.reads_options):
        reads += [Target(w, f"{name} {option}") for w in option_values(args, option)]
    for option in sorted(program.runs):
        for value in option_values(args, option):
            if value.dynamic:
                opaque = f"{name} {option} runs a program only known when it runs"
            else:
                runs.append((value.text, f"{name} {option}"))
    for option in sorted(program.assigns):
        assigns += [w.text for w in option_values(args, option)]
    for option, why in sorted(program.opaque.items()):
        if has_flag(args, option):
            opaque = opaque or f"{name} {option}: {why}"
    if program.runs or program.opaque or program.writes or program.reads_options:
        hidden = may_be_option(args, program.value_options)
        if hidden is not None:
            opaque = opaque or f"{name}: {hidden.text} is only known when it runs and may be an option that runs, writes or reads files"
    for word in args if program.response_files else ():
        if word.text.startswith("@"):
            reads.append(Target(Word(word.text[1:], word.dynamic), f"{name} @FILE (options read from a file)"))
            opaque = opaque or f"{name} {word.text}: takes more options from a file"
    if name in ("export", "declare", "typeset", "local", "readonly", "read", "mapfile", "readarray", "unset"):
        assigns += [w.text.split("=", 1)[0] for w in _operands(args, program.value_options)] if name != "unset" else []
        names = [w.text for w in args if name == "unset" and not w.text.startswith("-")]
        if any("[" in n for n in names):
            opaque = opaque or f"{name}: a variable name with a subscript is evaluated as arithmetic, which may run a command"
    names = assigns + [w.text for w in option_values(args, "-v") if name in ("test", "[")]
    if any("[" in n for n in names):  # ``a[$(cmd)]``: bash evaluates a subscript as arithmetic, which runs $(...)
        opaque = opaque or f"{name}: a variable name with a subscript is evaluated as arithmetic, which may run a command"
    operands = _operands(args, program.value_options)
    recursive = ALWAYS in program.recursive or any(has_flag(args, o) for o in program.recursive)
    if program.reads == "after-first" and not any(has_flag(args, o) for o in program.pattern_options):
        operands = operands[1:]
    elif program.reads == "first":
        operands = operands[:1]
    if program.writes_second and len(operands) > 1:
        writes.append(Target(operands[1], f"{name} (its second operand)", beyond=True))
        operands = operands[:1]
    if program.reads != "none":
        if not operands and program.default_operand:
            operands = [Word(program.default_operand)]
        follows = recursive and any(has_flag(args, o) for o in program.follows)
        reads += [Target(w, name, under=recursive, follows=follows) for w in operands if w.text != "-"]
    if any(has_flag(args, o) for o in program.deletes):
        writes += [
            Target(w, f"{name} {sorted(program.deletes)[0]} (deletes what it reads)", under=recursive, beyond=True) for w in operands
        ]
    read_only = program.read_only and not (writes or runs or opaque or program.network)
    return Effects(writes=tuple(writes), reads=tuple(reads), runs=tuple(runs), opaque=opaque, assigns=tuple(assigns), read_only=read_only)


def may_be_option(args: Sequence[Word], value_options: frozenset[str] = frozenset()) -> Word | None:
    """The first word only known when it runs that stands where an option may be (before ``--``,
    not the value of an option): unquoted, ``$(printf -- --pre=rm)`` is the option ``--pre=rm``."""
    skip = False
    for word in args:
        if skip:
            skip = False
            continue
        if word.text == "--":
            return None
        if word.dynamic:
            return word
        skip = word.text in value_options
    return None


def option_values(args: Sequence[Word], option: str) -> list[Word]:
    """The values given to ``option``: ``-o V``, ``-oV``, ``--long V``, ``--long=V``, also with the
    long name abbreviated (``--out=V``), before ``--``."""
    values: list[Word] = []
    for n, word in enumerate(args):
        text = word.text
        if text == "--":
            break
        if (text == option or ("=" not in text and abbreviates(text, option))) and n + 1 < len(args):
            values.append(args[n + 1])
        elif "=" in text and abbreviates(text, option):
            values.append(Word(text.split("=", 1)[1], word.dynamic))
        elif not option.startswith("--") and len(option) == 2 and text.startswith("-") and not text.startswith("--"):
            at = text.find(option[1], 1)  # also bundled: ``sort -uo FILE``, ``-uoFILE``
            if at > 0:
                rest = text[at + 1 :]
                values += [Word(rest, word.dynamic)] if rest else args[n + 1 : n + 2]
    return values


def has_flag(args: Sequence[Word], option: str) -> bool:
    """Whether ``option`` is given, alone, with a value (``--x=v``), or bundled (``-rn`` has ``-r``)."""
    for word in args:
        text = word.text
        if text == "--":
            return False
        if text == option or text.startswith(option + "=") or abbreviates(text, option):
            return True
        if len(option) == 2 and text.startswith("-") and not text.startswith("--") and option[1] in text[1:]:
            return True
    return False
