"""Programs that run another command: ``env``, ``sudo``, ``nohup``, ``time``, ``command``, ``exec``,
``xargs``, ``find -exec``, ``timeout``, ``nice``... and the shells that run a string (``bash -c``,
``eval``). ``unwrap`` says what runs inside. Pure functions over words."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from frogtui.approval.shell.effects import SHELLS, Target, program_name
from frogtui.approval.shell.words import FOUND_MARK, Word

TIME_WORD = "\x00time"
"""Stands for bash's ``time`` keyword, which the parser does not know (see ``shell._parse``)."""


@dataclass(frozen=True)
class Unwrapped:
    """One step of unwrapping.

    Attributes:
        label: The wrapper as shown in ``via`` (``sudo``, ``bash -c``, ``find -exec``...).
        inner: The words of the command it runs (empty when it runs none).
        script: A string the wrapper parses and runs as shell code (``bash -c``, ``eval``).
        outer: For ``find``: the wrapper's own command, which is decided too.
        writes: Files the wrapper itself writes (``time -o FILE``).
        opaque: Why what runs cannot be known statically.
        cwd_unknown: The wrapper changes the working folder (``env -C``).
        appends_input: The inner command gets more words at run time (``xargs``).
        assigns: Variables the wrapper sets for the inner command (``env X=1``).
        unknown: What it runs is shell code only known when it runs (``sh`` reading its standard
            input, ``. <(cmd)``): any program may run, so a Bash deny rule denies it.
    """

    label: str
    inner: tuple[Word, ...] = ()
    script: Word | None = None
    outer: tuple[Word, ...] = ()
    writes: tuple[Target, ...] = ()
    opaque: str | None = None
    cwd_unknown: bool = False
    appends_input: bool = False
    unknown: bool = False
    assigns: tuple[str, ...] = field(default_factory=tuple)


def _skip_options(words: list[Word], flags: set[str], with_value: set[str], *, stop_at_operand: bool = True) -> tuple[int, str | None]:
    """Index of the first operand after the options, or an error naming an unknown option."""
    n = 1
    while n < len(words):
        text = words[n].text
        if text == "--":
            return n + 1, None
        if not text.startswith("-") or text == "-":
            return n, None
        if text in with_value:
            n += 2
            continue
        if any(text.startswith(v) and len(text) > len(v) and not v.startswith("--") for v in with_value):
            n += 1
            continue
        if text.split("=", 1)[0] in with_value:
            n += 1
            continue
        if text in flags or (len(text) > 2 and not text.startswith("--") and all(f"-{c}" in flags for c in text[1:])):
            n += 1
            continue
        return n, f"unknown option {text!r} to {words[0].text}"
    return n, None


_SETARCH_FLAGS = {
    "-v", "--verbose", "-3", "--3gb", "-B", "--32bit", "-F", "--fdpic-funcptrs", "-I", "--short-inode", "-L", "--addr-compat-layout",
    "-R", "--addr-no-randomize", "-S", "--whole-seconds", "-T", "--sticky-timeouts", "-X", "--read-implies-exec", "-Z", "--mmap-page-zero",
    "--uname-2.6",
}
"""setarch's (and linux32/linux64's) options, which take no value."""

_SIMPLE = {
    # name: (flags, options with a value)
    "nohup": (set(), set()),
    "nice": ({"-N"}, {"-n", "--adjustment"}),
    "stdbuf": (set(), {"-i", "-o", "-e", "--input", "--output", "--error"}),
    "ionice": ({"-t"}, {"-c", "-n", "--class", "--classdata"}),
    "setsid": ({"-f", "-w", "-c", "--fork", "--wait", "--ctty"}, set()),
    "chronic": ({"-e", "-v"}, set()),
    "builtin": (set(), set()),
    TIME_WORD: ({"-p"}, set()),
    "time": ({"-p", "-a", "-v", "--verbose", "--append", "--portability"}, {"-f", "-o", "--format", "--output"}),
    "exec": ({"-c", "-l"}, {"-a"}),
    "sudo": (
        {"-E", "-H", "-n", "-S", "-k", "-K", "-b", "-P", "-A", "-B", "--preserve-env", "--non-interactive", "--stdin", "--background"},
        {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group", "--host", "--prompt", "--chdir"},
    ),
    "doas": ({"-n", "-s"}, {"-u", "-C"}),
    "pkexec": ({"--disable-internal-agent", "--keep-cwd"}, {"--user"}),
    "runuser": ({"-l", "-m", "-p", "--login", "--preserve-environment", "-f", "--fast"}, {"-u", "-g", "-G", "--user", "--group", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"}),
    "busybox": (set(), set()),
    "unshare": (
        {"-m", "-u", "-i", "-n", "-p", "-U", "-C", "-T", "-r", "-f", "-c", "--fork", "--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time", "--map-root-user", "--map-current-user", "--kill-child", "--mount-proc", "--map-auto"},
        {"--propagation", "--setgroups", "-S", "-G", "--setuid", "--setgid"},
    ),
    "strace": (
        {"-f", "-ff", "-c", "-C", "-d", "-D", "-i", "-q", "-qq", "-r", "-t", "-tt", "-ttt", "-T", "-v", "-x", "-xx", "-y", "-yy", "-z", "-Z", "-k", "-w", "-F"},
        {"-o", "-e", "-s", "-u", "-E", "-P", "-I", "-X", "-a", "-b", "-O", "-S", "-U", "--output", "--trace", "--string-limit"},
    ),
    "ltrace": ({"-f", "-c", "-C", "-i", "-r", "-S", "-t", "-tt", "-ttt", "-T"}, {"-o", "-e", "-s", "-u", "-n", "-l", "-a", "-A", "-D", "-F", "--output"}),
    "taskset": ({"-a", "-c", "--all-tasks", "--cpu-list"}, set()),
    "chrt": ({"-a", "-b", "-d", "-f", "-i", "-o", "-r", "-R", "-v", "--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--reset-on-fork", "--verbose"}, {"-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"}),
    "fakeroot": ({"-u", "--unknown-is-real"}, {"-l", "--lib", "--faked", "-s", "-i", "-b"}),
    "xvfb-run": ({"-a", "--auto-servernum"}, {"-n", "-s", "-e", "-f", "-p", "-w", "--server-num", "--server-args", "--error-file", "--auth-file"}),
    "dbus-run-session": (set(), {"--config-file", "--dbus-daemon"}),
    "proxychains": ({"-q"}, {"-f"}),
    "proxychains4": ({"-q"}, {"-f"}),
    "torsocks": ({"-q", "-i", "--isolate", "--quiet"}, {"-u", "-p", "-a", "-P"}),
    "catchsegv": (set(), set()),
    "nocache": (set(), set()),
    # run their operands as a command too (red team, issue 30): an option missing here makes the
    # wrapper opaque, and an opaque wrapper's program is unknown (denied while a deny rule exists)
    "ssh-agent": ({"-c", "-s", "-D", "-d"}, {"-a", "-E", "-O", "-P", "-t"}),
    "prlimit": (  # a resource's limit only as a separate option (--nofile=64, -n64 are opaque)
        {"--noheadings", "--raw", "--verbose", *(f"-{c}" for c in "cdefilmnqrstuvxy"), "--core", "--data", "--nice", "--fsize",
         "--sigpending", "--memlock", "--rss", "--nofile", "--msgqueue", "--rtprio", "--stack", "--cpu", "--nproc", "--as",
         "--locks", "--rttime"},
        {"-p", "--pid", "-o", "--output"},
    ),
    "setpriv": (
        {"-d", "--dump", "--nnp", "--no-new-privs", "--clear-groups", "--keep-groups", "--init-groups", "--reset-env"},
        {"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set",
         "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule"},
    ),
    "setarch": (_SETARCH_FLAGS, set()),
    **dict.fromkeys(("linux32", "linux64", "i386", "x86_64"), (_SETARCH_FLAGS, set())),
    "logsave": ({"-a", "-s", "-v"}, set()),
}
AS_ANOTHER_USER = frozenset({"sudo", "doas", "pkexec", "runuser", "su", "sg"})
"""Wrappers that run a command as another user (always asked)."""
_FIRST_OPERAND_IS_ARGUMENT = frozenset({"taskset", "chrt", "logsave"})
"""Wrappers whose first operand is a value (a CPU mask, a priority) before the command."""


def unwrap(words: tuple[Word, ...]) -> Unwrapped | None:
    """What a wrapper runs, or None when ``words`` is not a wrapper."""
    if not words or words[0].dynamic:
        return None
    name = program_name(words[0].text)
    handler = _WRAPPERS.get(name)
    return handler(list(words), name) if handler is not None else None


def _simple(items: list[Word], name: str) -> Unwrapped:
    """A wrapper of ``_SIMPLE``: options, then the command it runs."""
    flags, with_value = _SIMPLE[name]
    if name == "setarch" and len(items) > 1 and not items[1].text.startswith("-"):
        items = [items[0], *items[2:]]  # the architecture comes before the options
    if name == "nice":
        items = [items[0], *(Word("-N") if re.fullmatch(r"-\d+", w.text) else w for w in items[1:2]), *items[2:]]
    start, error = _skip_options(items, flags, with_value)
    label = "time" if name == TIME_WORD else name
    if error:
        return Unwrapped(label, opaque=error)
    writes: tuple[Target, ...] = ()
    if name == "logsave" and start < len(items):
        writes = (Target(items[start], "logsave"),)
    if name in ("time", "strace", "ltrace"):
        writes = tuple(Target(items[n + 1], f"{name} -o") for n in range(1, start - 1) if items[n].text in ("-o", "--output"))
    if name in _FIRST_OPERAND_IS_ARGUMENT and not any(w.text in ("-p", "--pid") for w in items[1:start]):
        start += 1
    if name == "sudo" and any(w.text in ("-s", "-i", "--shell", "--login") for w in items[1:start]):
        return Unwrapped(label, opaque="sudo starts a shell")
    return Unwrapped(label, inner=tuple(items[start:]), writes=writes)


def _command(items: list[Word], name: str) -> Unwrapped | None:
    start, error = _skip_options(items, {"-p", "-v", "-V"}, set())
    if error or any(w.text in ("-v", "-V") for w in items[1:start]):
        return None  # ``command -v`` only looks a name up
    return Unwrapped(name, inner=tuple(items[start:]))


def _timeout(items: list[Word], name: str) -> Unwrapped:
    start, error = _skip_options(items, {"-v", "--foreground", "--preserve-status", "--verbose"}, {"-s", "-k", "--signal", "--kill-after"})
    if error:
        return Unwrapped(name, opaque=error)
    return Unwrapped(name, inner=tuple(items[start + 1 :]))


def _xargs(items: list[Word], name: str) -> Unwrapped:
    start, error = _skip_options(
        items,
        {"-0", "-r", "-t", "-p", "-x", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty"},
        {"-I", "-i", "-n", "-P", "-L", "-l", "-s", "-d", "-E", "-e", "-a"}
        | {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace", "--eof"},
    )
    if error:
        return Unwrapped(name, opaque=error)
    inner = tuple(items[start:]) or (Word("echo"),)
    return Unwrapped(name, inner=inner, appends_input=True)


def _eval(items: list[Word], name: str) -> Unwrapped:
    if any(w.dynamic for w in items[1:]):
        return Unwrapped(name, opaque="eval runs a string that is only known when it runs")
    return Unwrapped(name, script=Word(" ".join(w.text for w in items[1:])))


def _env(items: list[Word], name: str = "env") -> Unwrapped:
    n, assigns, cwd_unknown = 1, [], False
    while n < len(items):
        text = items[n].text
        if text in ("-i", "-0", "--ignore-environment", "--null", "-"):
            n += 1
        elif text in ("-u", "--unset"):
            n += 2
        elif text in ("-C", "--chdir") or text.startswith("--chdir="):
            cwd_unknown = True
            n += 1 if "=" in text else 2
        elif text in ("-S", "--split-string") or text.startswith(("--split-string=", "-S")):
            attached = text.split("=", 1)[1] if text.startswith("--split-string=") else text[2:] if text.startswith("-S") and len(text) > 2 else None
            first = Word(attached, items[n].dynamic) if attached is not None else items[n + 1] if n + 1 < len(items) else None
            if first is None or first.dynamic:
                return Unwrapped("env -S", opaque="env -S runs a string that is only known when it runs")
            rest = " ".join(w.text for w in items[n + (1 if attached is not None else 2) :])
            return Unwrapped("env -S", script=Word(f"{first.text} {rest}".strip()), assigns=tuple(assigns))
        elif text == "--":
            n += 1
            break
        elif "=" in text and not text.startswith("-") and not text.startswith("="):
            assigns.append(text.split("=", 1)[0])
            n += 1
        elif text.startswith("-"):
            return Unwrapped("env", opaque=f"unknown option {text!r} to env")
        else:
            break
    return Unwrapped("env", inner=tuple(items[n:]), cwd_unknown=cwd_unknown, assigns=tuple(assigns))


def _find(items: list[Word], name: str = "find") -> Unwrapped | None:
    for n, word in enumerate(items):
        if word.text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = n + 1
            while end < len(items) and items[end].text not in (";", "+"):
                end += 1
            inner = tuple(items[n + 1 : end])
            rest = tuple(items[end + 1 :])
            starts = [w for w in items[1:n] if not w.text.startswith(("-", "(", "!"))][:1] or [Word(".")]
            found = Word(starts[0].text.rstrip("/") + "/" + FOUND_MARK, starts[0].dynamic)
            inner = tuple(found if w.text == "{}" else w for w in inner)
            outer = (*items[:n], *rest)
            return Unwrapped(f"find {word.text}", inner=inner, outer=outer)
    return None


def _shell(items: list[Word], name: str) -> Unwrapped | None:
    for n, word in enumerate(items[1:], start=1):
        text = word.text
        if text == "-c" or (text.startswith("-") and not text.startswith("--") and "c" in text[1:]):
            if n + 1 >= len(items):
                return Unwrapped(f"{name} -c", opaque=f"{name} -c without a command")
            script = items[n + 1]
            if script.dynamic:
                return Unwrapped(f"{name} -c", opaque=f"{name} -c runs a string that is only known when it runs")
            return Unwrapped(f"{name} -c", script=script)
        if not text.startswith("-") or text == "-":
            reads_stdin = any(w.text.startswith("-") and not w.text.startswith("--") and "s" in w.text[1:] for w in items[1:n])
            if text == "-" or reads_stdin or run_time_file(word):  # ``sh -s arg``: arg is $1, the script is stdin
                return Unwrapped(name, opaque=f"{name} runs a script only known when it runs ({text})", unknown=True)
            return None  # ``bash script.sh``: the program is the script runner itself
    # no script operand (or ``-s``): the shell runs what it reads on its standard input
    return Unwrapped(name, opaque=f"{name} runs the script it reads on its standard input, only known when it runs", unknown=True)


RUN_TIME_FILES = ("<(", "/dev/stdin", "/dev/fd/", "/proc/")
"""Files whose content only exists when the command runs (a process substitution, a pipe)."""


def run_time_file(word: Word) -> bool:
    """Whether ``word`` names a file whose content is only known when the command runs."""
    return word.dynamic or word.text.startswith(RUN_TIME_FILES)


def _source(items: list[Word], name: str) -> Unwrapped | None:
    """``source FILE``/``. FILE``: a file of the tree is a script like ``bash FILE`` (asked about);
    code from a process substitution or a pipe is only known when it runs."""
    operands = [w for w in items[1:] if w.text != "--"]
    if operands and run_time_file(operands[0]):
        return Unwrapped(name, opaque=f"{name} runs code only known when it runs ({operands[0].text})", unknown=True)
    return None


def _trap(items: list[Word], name: str) -> Unwrapped | None:
    """``trap CODE SIGNAL...`` runs CODE later in this shell: CODE is decided as ``eval`` decides it."""
    operands = items[2:] if len(items) > 1 and items[1].text == "--" else items[1:]
    if not operands or operands[0].text.startswith("-") or len(operands) < 2 or not operands[0].text:
        return None  # ``trap``, ``trap -p``, ``trap - EXIT``, ``trap '' INT``: no code
    return Unwrapped(name, script=operands[0])


def _alias(items: list[Word], name: str) -> Unwrapped | None:
    """``alias NAME=VALUE``: VALUE runs wherever NAME is later a command (``shopt -s expand_aliases``)."""
    values = [w.text.split("=", 1)[1] for w in items[1:] if "=" in w.text and not w.text.startswith("-")]
    return Unwrapped(name, script=Word("\n".join(values))) if values else None


def _flock(items: list[Word], name: str) -> Unwrapped:
    start, error = _skip_options(
        items,
        {"-s", "-x", "-e", "-n", "-u", "-o", "-F", "--shared", "--exclusive", "--nonblock", "--nb", "--unlock", "--close", "--verbose", "--no-fork"},
        {"-w", "-E", "--timeout", "--wait", "--conflict-exit-code"},
    )
    if error:
        return Unwrapped(name, opaque=error)
    if start >= len(items) or items[start].text.isdigit():
        return Unwrapped(name)
    lock = (Target(items[start], "flock"),)
    rest = items[start + 1 :]
    if rest and rest[0].text in ("-c", "--command"):
        if len(rest) < 2 or rest[1].dynamic:
            return Unwrapped(name, opaque="flock -c runs a string that is only known when it runs", writes=lock)
        return Unwrapped("flock -c", script=rest[1], writes=lock)
    return Unwrapped(name, inner=tuple(rest), writes=lock)


def _chroot(items: list[Word], name: str) -> Unwrapped:
    start, error = _skip_options(items, {"--skip-chdir"}, {"--userspec", "--groups"})
    if error:
        return Unwrapped(name, opaque=error)
    if start >= len(items) or items[start].text.rstrip("/") != "" or items[start].dynamic:
        return Unwrapped(name, opaque="chroot runs the command in another root folder, where paths mean something else")
    if start + 1 >= len(items):
        return Unwrapped(name, opaque="chroot without a command starts a shell")
    return Unwrapped(name, inner=tuple(items[start + 1 :]))


def _watch(items: list[Word], name: str) -> Unwrapped:
    start, error = _skip_options(
        items,
        {"-d", "-t", "-b", "-e", "-g", "-c", "-x", "-p", "-w", "-r", "--differences", "--no-title", "--beep", "--errexit", "--chgexit", "--color", "--exec", "--precise", "--no-wrap", "--no-rerun"},
        {"-n", "--interval", "-q", "--equexit"},
    )
    if error:
        return Unwrapped(name, opaque=error)
    inner = tuple(items[start:])
    if any(w.text in ("-x", "--exec") for w in items[1:start]) or not inner:
        return Unwrapped(name, inner=inner)
    if any(w.dynamic for w in inner):
        return Unwrapped(name, opaque="watch runs a string that is only known when it runs")
    return Unwrapped("watch", script=Word(" ".join(w.text for w in inner)))


def _shell_as_user(items: list[Word], name: str) -> Unwrapped:
    """``su [-] [user] -c CMD``, ``script -c CMD [file]``, ``sg group -c CMD``: a string run by a shell."""
    for n, word in enumerate(items[1:], start=1):
        text = word.text
        value = None
        if text in ("-c", "--command") and n + 1 < len(items):
            value = items[n + 1]
        elif text.startswith("--command="):
            value = Word(text.split("=", 1)[1], word.dynamic)
        if value is not None:
            if value.dynamic:
                return Unwrapped(name, opaque=f"{name} -c runs a string that is only known when it runs")
            writes = ()
            if name == "script":
                after = [w for w in items[n + 2 :] if not w.text.startswith("-")]
                writes = tuple(Target(w, "script") for w in after[-1:]) or (Target(Word("typescript"), "script"),)
            return Unwrapped(name, script=value, writes=writes)
    if name == "sg" and len(items) > 2:
        return Unwrapped(name, script=Word(" ".join(w.text for w in items[2:])), opaque=None if not any(w.dynamic for w in items[2:]) else "sg runs a string only known when it runs")
    return Unwrapped(name, opaque=f"{name} starts an interactive shell")


def _parallel(items: list[Word], name: str) -> Unwrapped:
    return Unwrapped(name, opaque=f"{name} builds the commands it runs when it runs")


_RUNNER_VALUES = frozenset(
    {"--with", "--python", "-p", "--env-file", "--project", "--extra", "--group", "--package", "--index", "--index-url"}
    | {"-e", "--env", "-n", "--name"}
)
"""Options of ``uv run``, ``poetry run``, ``conda run``... that take a value."""


def _env_runner(items: list[Word], name: str) -> Unwrapped | None:
    """``uv run CMD``, ``poetry run CMD``, ``pipenv run``, ``pdm run``, ``hatch run``, ``conda run``:
    the command runs in the project's environment; ``--directory`` makes its folder unknown."""
    if len(items) < 2 or items[1].text != "run":
        return None
    n, cwd_unknown = 2, False
    while n < len(items) and items[n].text.startswith("-") and items[n].text != "--":
        text = items[n].text
        cwd_unknown = cwd_unknown or text.split("=", 1)[0] in ("--directory", "--cwd", "--chdir", "-C")
        n += 2 if text in _RUNNER_VALUES or text in ("--directory", "--cwd", "--chdir", "-C") else 1
    n += n < len(items) and items[n].text == "--"
    return Unwrapped(f"{name} run", inner=tuple(items[n:]), cwd_unknown=cwd_unknown) if n < len(items) else None


Handler = Callable[[list[Word], str], "Unwrapped | None"]
_WRAPPERS: dict[str, Handler] = {
    **dict.fromkeys(_SIMPLE, _simple),
    **dict.fromkeys(SHELLS, _shell),
    "command": _command, "timeout": _timeout, "env": _env, "xargs": _xargs, "find": _find, "eval": _eval,
    "source": _source, ".": _source, "trap": _trap, "alias": _alias,
    "flock": _flock, "chroot": _chroot, "watch": _watch, "su": _shell_as_user, "script": _shell_as_user, "sg": _shell_as_user,
    "parallel": _parallel,
    **dict.fromkeys(("uv", "poetry", "pipenv", "pdm", "hatch", "conda", "mamba", "micromamba", "rye"), _env_runner),
}
"""Every wrapper, by program name: what it runs (one table, one dispatch)."""
