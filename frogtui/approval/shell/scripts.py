"""Effects of programs whose arguments are small programs: ``sed`` scripts (``w``, ``r``, ``e``),
``awk`` programs (``system()``, pipes, ``>``), ``find`` expressions (actions in evaluation order),
and the options of ``zip``, ``tar``, ``pytest`` and the interpreters' inline code. Pure."""

from __future__ import annotations

import re
from dataclasses import replace

from frogtui.approval.shell.effects import FIND_SELECTORS, Target, _operands, abbreviates
from frogtui.approval.shell.model import Effects
from frogtui.approval.shell.programs import (
    PROGRAMS,
    has_flag,
    may_be_option,
    option_values,
    table_effects,
)
from frogtui.approval.shell.words import Word

# sed -----------------------------------------------------------------------------------------
_SED_VALUE_OPTIONS = frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"})
_SED_PLAIN = set("=dDgGhHlnNpPxzF")
_ONE_ADDRESS = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*)"
_ADDRESS = re.compile(r"\s*(?:" + _ONE_ADDRESS + r"(?:\s*,\s*(?:" + _ONE_ADDRESS + r"|[+~]\d+))?)?\s*(?:!\s*)*")


class _SedUnknown(ValueError):
    """The script uses something the scanner does not follow."""


def sed_script_effects(script: str) -> Effects:
    """What a ``sed`` script does beyond printing: ``w``/``W`` and ``s///w`` write files, ``r``/``R``
    read them, ``e`` and ``s///e`` run commands."""
    writes: list[Target] = []
    reads: list[Target] = []
    runs: list[tuple[str, str]] = []
    opaque: str | None = None
    n = 0
    try:
        while n < len(script):
            if script[n] in " \t\n;}":
                n += 1
                continue
            n = _ADDRESS.match(script, n).end()  # type: ignore[union-attr]
            if n >= len(script):
                break
            cmd = script[n]
            n += 1
            if cmd in _SED_PLAIN or cmd == "{":
                continue
            if cmd in "#:btTv":
                n = _line_end(script, n, stop=";" if cmd in ":btTv" else "")  # GNU sed ends a label at ';' too
            elif cmd in "aic":
                n = _line_end(script, n, continued=True)
            elif cmd in "qQLl":
                n = re.compile(r"\s*\d*").match(script, n).end()  # type: ignore[union-attr]
            elif cmd in "rRwWe":
                end = _line_end(script, n)
                argument = script[n:end].strip()
                n = end
                if cmd in "rR":
                    reads.append(Target(Word(argument), f"sed {cmd}"))
                elif cmd in "wW":
                    writes.append(Target(Word(argument), f"sed {cmd}", beyond=True))
                elif argument:
                    runs.append((argument, "sed e"))
                else:
                    opaque = "sed e runs the text being edited as a command"
            elif cmd in "sy":
                n, flags = _substitution(script, n, cmd)
                if cmd == "s" and "e" in flags.split("w", 1)[0]:
                    opaque = "sed s///e runs the text being edited as a command"
                if cmd == "s" and "w" in flags:
                    writes.append(Target(Word(flags.split("w", 1)[1].strip()), "sed s///w", beyond=True))
            else:
                raise _SedUnknown(cmd)
    except _SedUnknown:
        return Effects(opaque="the sed script uses commands the analyser does not follow")
    read_only = not (writes or runs or opaque)
    return Effects(writes=tuple(writes), reads=tuple(reads), runs=tuple(runs), opaque=opaque, read_only=read_only)


def _line_end(script: str, n: int, *, stop: str = "", continued: bool = False) -> int:
    while n < len(script) and script[n] != "\n" and script[n] not in stop:
        n += 2 if continued and script[n] == "\\" else 1
    return n


def _substitution(script: str, n: int, cmd: str) -> tuple[int, str]:
    """Skip ``s/regex/replacement/flags`` (or ``y/a/b/``) from its delimiter; (end, flags)."""
    if n >= len(script) or script[n] in "\n\\":
        raise _SedUnknown(cmd)
    delimiter = script[n]
    n += 1
    for _ in range(2):
        while n < len(script) and script[n] != delimiter:
            n += 2 if script[n] == "\\" else 1
        if n >= len(script):
            raise _SedUnknown(cmd)
        n += 1
    end = n
    while end < len(script) and script[end] not in ";\n}":
        if script[end] == "w":
            end = _line_end(script, end)
            break
        end += 1
    return end, script[n:end] if cmd == "s" else ""


def sed_effects(name: str, args: list[Word]) -> Effects:
    scripts = option_values(args, "-e") + option_values(args, "--expression")
    operands = _operands(args, _SED_VALUE_OPTIONS)
    if not scripts and operands:
        scripts, operands = [operands[0]], operands[1:]
    if option_values(args, "-f") or option_values(args, "--file"):
        return Effects(opaque="sed -f runs a script file")
    if any(w.dynamic for w in scripts):
        return Effects(opaque="the sed script is only known when it runs")
    found = [sed_script_effects(w.text) for w in scripts]
    sandboxed = has_flag(args, "--sandbox")
    in_place = any(
        abbreviates(w.text, "--in-place") or (w.text.startswith("-") and not w.text.startswith("--") and "i" in w.text[1:])
        for w in args
    )
    reads = tuple(Target(w, "sed") for w in operands if w.text != "-")
    merged = Effects(
        writes=tuple(t for f in found for t in f.writes),
        reads=(*reads, *(t for f in found for t in f.reads)),
        runs=tuple(r for f in found for r in f.runs),
        opaque=next((f.opaque for f in found if f.opaque), None),
        read_only=all(f.read_only for f in found) and not in_place,
    )
    return Effects(reads=reads, read_only=not in_place) if sandboxed else merged


# awk -----------------------------------------------------------------------------------------
_AWK_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_AWK_ACTS = re.compile(r"\bsystem\s*\(|\|\|?|\bgetline\b|\bprintf?\b[^;{}\n]*>|@load|@include|\bclose\s*\(")
_AWK_WRITES = re.compile(r"\bprintf?\b.*?(?<![<>=!])>(?!=)|>\s*[\"A-Za-z_($]", re.S)
"""A ``>`` after ``print``/``printf`` anywhere later in the program, or before a file name: a regex
literal holding ``{`` or ``"`` (``/{/ > "Makefile"``) cannot hide it."""
_AWK_RAW = re.compile(r"@|\bsystem\b|\bgetline\b|\bclose\b|(?<!\|)\|(?!\|)|\bARG[VC]\b|\bENVIRON\b|\bPROCINFO\b")
_AWK_GREATER = re.compile(r"(?<![<>=!])>(?!=)")
"""For the read-only default, in the raw program text: an indirect call (``@f()``), a command, a
pipe, ``ARGV``, and a ``>`` anywhere in a program with an action (``{``): it does not try to tell
strings and regex literals apart, so it fails closed. A program that is only a pattern
(``NR>1``, ``$3 > 100``) prints what matches and cannot redirect."""
_AWK_PIPE = re.compile(r"(?<!\|)\|(?!\|)")
_AWK_FILES = ("-f", "--file", "-l", "--load", "-i", "--include", "-E", "--exec")
_AWK_WRITE_OPTIONS = ("-o", "-p", "-d", "--pretty-print", "--profile", "--dump-variables", "-D", "--debug")
"""gawk options that write a file (``awkprof.out``, ``awkvars.out`` by default) or start its debugger."""


def awk_effects(name: str, args: list[Word]) -> Effects:
    if any(option_values(args, o) for o in _AWK_FILES) or any(v.text.startswith("e") for v in option_values(args, "-W")):
        return Effects(opaque=f"{name} runs a program from a file")
    if any(has_flag(args, o) for o in ("-W", *_AWK_WRITE_OPTIONS)):
        return Effects(opaque=f"{name}: -W, -o, -p, -d and --profile write files or change what runs")
    sources = [*option_values(args, "-e"), *option_values(args, "--source")]
    operands = _operands(args, frozenset({"-F", "-v", "-e", "--source", "--field-separator", "--assign"}))
    programs, files = (sources, operands) if sources else (operands[:1], operands[1:])
    reads = tuple(Target(w, name) for w in files if "=" not in w.text and w.text != "-")
    if any(p.dynamic for p in programs) or may_be_option(args, frozenset({"-F", "-v", "-e", "--source"})) is not None:
        return Effects(reads=reads, opaque=f"the {name} program is only known when it runs")
    stripped = [_AWK_STRING.sub('""', p.text).replace("||", " ") for p in programs]
    confusable = [p.text for p in programs if "/" in p.text and '"' in p.text]  # a quote in a regex literal fools the stripping
    if (
        any(_AWK_ACTS.search(p) for p in stripped)
        or any(_AWK_WRITES.search(p.text) or "@" in p.text for p in programs)
        or any(_AWK_PIPE.search(text) for text in confusable)
    ):
        return Effects(reads=reads, opaque=f"the {name} program runs commands or writes files (system, |, getline, >, @f())")
    if any(re.search(r"\bARG[VC]\b", p.text) for p in programs):
        return Effects(reads=reads, opaque=f"the {name} program changes ARGV/ARGC: the files it reads are only known when it runs")
    quiet = all(not _AWK_RAW.search(p.text) and ("{" not in p.text or not _AWK_GREATER.search(p.text)) for p in programs)
    return Effects(reads=reads, read_only=quiet)


# find ----------------------------------------------------------------------------------------
_FIND_LOOKS = frozenset(
    {"-print", "-print0", "-printf", "-ls", "-prune", "-quit", "-true", "-false", "-not", "-a", "-o", "-and", "-or", "!", "(", ")", ","}
)


def find_effects(name: str, args: list[Word]) -> Effects:
    """find lists names; ``-delete`` deletes what the tests *before* it selected (evaluation order:
    ``find . -delete -name x`` deletes everything)."""
    starts = [w for w in args[: next((n for n, w in enumerate(args) if w.text.startswith(("-", "(", "!"))), len(args))]] or [Word(".")]
    writes: list[Target] = []
    acts = False
    hidden = may_be_option(args)
    if hidden is not None:
        return Effects(opaque=f"find: {hidden.text} is only known when it runs and may be -exec, -delete or -fprint")
    for n, word in enumerate(args):
        text = word.text
        if text in ("-fprint", "-fprint0", "-fls", "-fprintf") and n + 1 < len(args):
            writes.append(Target(args[n + 1], f"find {text}", beyond=True))
        elif text == "-delete":
            writes += [Target(w, "find -delete", under=True, beyond=True) for w in starts]
            if not any(w.text in FIND_SELECTORS for w in args[:n]):
                # nothing before it narrows it: every file under each start goes, .git included
                writes += [Target(Word(w.text.rstrip("/") + "/.git", w.dynamic), "find -delete", beyond=True) for w in starts]
        elif text.startswith("-") and text not in _FIND_LOOKS and text not in FIND_SELECTORS and text not in _FIND_TESTS:
            acts = True
    return Effects(writes=tuple(writes), read_only=not writes and not acts)


_FIND_TESTS = frozenset(
    {
        "-type",
        "-xtype",
        "-maxdepth",
        "-mindepth",
        "-depth",
        "-follow",
        "-xdev",
        "-mount",
        "-noleaf",
        "-daystart",
        "-regextype",
        "-L",
        "-P",
        "-H",
        "-O",
        "-D",
        "-fstype",
    }
)



_LESS_FILES = ("-k", "--lesskey-file", "--lesskey-src", "--lesskey-content", "-o", "-O", "--log-file", "--LOG-FILE")
"""less options that read a key file (which can set ``LESSOPEN``, a command) or write a log file."""


def pager_effects(name: str, args: list[Word]) -> Effects:
    if any(w.text.startswith("+") or w.dynamic and not w.text for w in args):
        return Effects(opaque=f"{name} +CMD runs {name} commands when it starts (+! runs a shell)")
    if any(has_flag(args, o) for o in _LESS_FILES):
        return Effects(opaque=f"{name} reads a key file (which can set a command to run) or writes a log file")
    return replace(table_effects(name, PROGRAMS["cat"], args), read_only=True)


_JQ_LOADS = re.compile(r"\b(import|include)\b")


def jq_effects(name: str, args: list[Word]) -> Effects:
    found = table_effects(name, PROGRAMS["jq"], args)
    files = [args[n + 2] for n, w in enumerate(args[:-2]) if w.text in ("--rawfile", "--slurpfile")]  # NAME FILE
    found = replace(found, reads=(*(t for t in found.reads if t.how not in ("jq --rawfile", "jq --slurpfile")),
                                  *(Target(f, "jq --rawfile/--slurpfile") for f in files)))
    operands = _operands(args, PROGRAMS["jq"].value_options)
    programs = [] if option_values(args, "-f") or option_values(args, "--from-file") else operands[:1]
    if any(w.dynamic or _JQ_LOADS.search(w.text) for w in programs):
        return replace(found, opaque="a jq program's import/include reads the files it names (../../x/.docker/config)", read_only=False)
    return found


# tar, zip, pytest, interpreters --------------------------------------------------------------
_TAR_RUNS = ("--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script", "--rsh-command", "--rmt-command")


def tar_effects(name: str, args: list[Word]) -> Effects:
    args = _tar_bundle(args)
    runs = tuple((v.text, f"tar {o}") for o in _TAR_RUNS for v in option_values(args, o))
    runs += tuple(
        (v.text.split("=", 1)[1], "tar --checkpoint-action")
        for v in option_values(args, "--checkpoint-action")
        if v.text.startswith("exec=")
    )
    opaque = "tar runs a program only known when it runs" if any(a.dynamic for a in args if a.text.startswith(_TAR_RUNS)) else None
    operands = _operands(args, frozenset({"-f", "--file", "-C", "--directory", "-I", "-F", "-T", "-X", "-b", "-H", "-K", "-L", "-N", "-V"}))
    first = args[0].text if args else ""
    creates = (
        any(c in first.lstrip("-") for c in "cru") and first.lstrip("-").isalpha() or has_flag(args, "--create") or has_flag(args, "-c")
    )
    reads = tuple(Target(w, "tar", under=True) for w in operands) if creates else ()
    writes = tuple(Target(w, "tar -f") for w in option_values(args, "-f") + option_values(args, "--file") if creates and w.text != "-")
    writes += tuple(Target(w, "tar --remove-files", under=True, beyond=True) for w in operands if has_flag(args, "--remove-files"))
    writes += tuple(Target(w, "tar --index-file", beyond=True) for w in option_values(args, "--index-file"))
    archives = option_values(args, "-f") + option_values(args, "--file") + (args[1:2] if "f" in first and first.isalpha() else [])
    if not has_flag(args, "--force-local") and any(":" in a.text.split("/", 1)[0] for a in archives):
        opaque = opaque or "tar reaches an archive HOST:FILE on another machine through rsh/ssh"
    lists = has_flag(args, "-t") or has_flag(args, "--list") or ("t" in first.lstrip("-") and first.lstrip("-").isalpha())
    if may_be_option(args) is not None:
        opaque = opaque or "tar: a word only known when it runs may be an option that runs a program"
    plain = all(_tar_plain(w) for w in args) and all(_TAR_PLAIN_ARCHIVE.search(a.text) for a in archives)
    return Effects(writes=writes, reads=reads, runs=runs, opaque=opaque, read_only=lists and plain and not runs and not creates and not opaque and not writes)


_TAR_VALUE_LETTERS = "bCfFgHIKLNTVX"
"""Letters of an old-style bundle (``tar tIf CMD ARCHIVE``) that take the next words as values, in order."""
_TAR_PLAIN_ARCHIVE = re.compile(r"(\.tar|^-)$")
"""An archive tar lists without running a decompression program found on PATH (``x.tar.lz`` runs lzip)."""


def _tar_bundle(args: list[Word]) -> list[Word]:
    """An old-style first word (``tIf``: no dash) as the options it stands for, each with its
    value: ``-t -I CMD -f ARCHIVE``."""
    if not args or args[0].dynamic or args[0].text.startswith("-") or not args[0].text.isalpha():
        return args
    out: list[Word] = []
    rest = list(args[1:])
    for letter in args[0].text:
        out.append(Word(f"-{letter}"))
        if letter in _TAR_VALUE_LETTERS and rest:
            out.append(rest.pop(0))
    return [*out, *rest]


def _tar_plain(word: Word) -> bool:
    """A word of a listing the read-only default knows: ``-t``, ``-v``, ``-f`` (bundled too), ``--list``..."""
    text = word.text
    if not text.startswith("-") or text == "-":
        return True
    if text.startswith("--"):
        return text.split("=", 1)[0] in ("--list", "--verbose", "--file")
    return all(c in "tvf" for c in text[1:])


def zip_effects(name: str, args: list[Word]) -> Effects:
    found = table_effects("zip", PROGRAMS["zip"], args)
    archive = _operands(args, PROGRAMS["zip"].value_options)[:1]
    return replace(found, writes=(*(Target(w, "zip") for w in archive), *found.writes), read_only=False)


_PYTEST_WRITES = ("--junitxml", "--junit-xml", "--result-log", "--resultlog", "--log-file", "--report-log", "--debug")


def pytest_effects(name: str, args: list[Word]) -> Effects:
    """pytest runs the repository's tests (its own behaviour); the files its options name are beyond it."""
    writes = [Target(v, f"pytest {o}", beyond=True) for o in _PYTEST_WRITES for v in option_values(args, o)]
    writes += [Target(v, "pytest --basetemp (emptied first)", under=True, beyond=True) for v in option_values(args, "--basetemp")]
    for value in option_values(args, "-o") + option_values(args, "--override-ini"):
        key, _, path = value.text.partition("=")
        if key.strip() in ("cache_dir", "junit_xml", "log_file"):
            writes.append(Target(Word(path, value.dynamic), f"pytest -o {key.strip()}", under=True, beyond=True))
    for value in option_values(args, "--cov-report"):
        if ":" in value.text:
            writes.append(Target(Word(value.text.split(":", 1)[1], value.dynamic), "pytest --cov-report", under=True, beyond=True))
    overrides = [v.text.partition("=")[0].strip() for v in option_values(args, "-o") + option_values(args, "--override-ini")]
    if any(w.text.startswith("@") for w in args) or "addopts" in overrides or option_values(args, "-c") + option_values(args, "--config-file"):
        return Effects(writes=tuple(writes), opaque="pytest takes more options from a file or -o addopts= (--basetemp=.git...)")
    return Effects(writes=tuple(writes))


INLINE_OPTIONS = {
    "python": "c",
    "python2": "c",
    "python3": "c",
    "pypy3": "c",
    "node": "ep",
    "nodejs": "ep",
    "perl": "eE",
    "ruby": "e",
    "php": "rB",
    "lua": "e",
    "bun": "e",
}
"""Interpreters and the short options that give them code inline (``python -c``, ``perl -ne``)."""


def interpreter_effects(name: str, args: list[Word]) -> Effects:
    """``python -c CODE``, ``node -e``, ``perl -ne``: code only known when it runs (never allowed by
    a rule); a script file or a module is the interpreter's own behaviour."""
    letters = INLINE_OPTIONS.get("python" if name.startswith("python") else name, "")
    for n, word in enumerate(args):
        text = word.text
        if text in ("--eval", "--print", "--command") or text.startswith(("--eval=", "--print=")):
            return Effects(opaque=f"{name} {text.split('=', 1)[0]} runs code given inline, which is only known when it runs")
        if not text.startswith("-") or text == "-":
            break  # the script: what follows is its own arguments
        if not text.startswith("--") and any(c in letters for c in text[1:]):
            return Effects(opaque=f"{name} {text} runs code given inline, which is only known when it runs")
        if text == "-m" and args[n + 1 : n + 2] and args[n + 1].text == "pytest":
            return pytest_effects("pytest", args[n + 2 :])
        if text in ("-m", "-W", "-X"):
            break
    return Effects()
