"""Programs that run another command: ``env``, ``sudo``, ``nohup``, ``time``, ``command``, ``exec``,
``xargs``, ``find -exec``, ``timeout``, ``nice``... and the shells that run a string (``bash -c``,
``eval``). ``unwrap`` says what runs inside. Pure functions over words."""
from __future__ import annotations

from dataclasses import dataclass, field

from frogtui.approval.shell_effects import SHELLS, Target, program_name
from frogtui.approval.shell_words import FOUND_MARK, Word

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
    """

    label: str
    inner: tuple[Word, ...] = ()
    script: Word | None = None
    outer: tuple[Word, ...] = ()
    writes: tuple[Target, ...] = ()
    opaque: str | None = None
    cwd_unknown: bool = False
    appends_input: bool = False
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
}


def unwrap(words: tuple[Word, ...]) -> Unwrapped | None:
    """What a wrapper runs, or None when ``words`` is not a wrapper."""
    if not words or words[0].dynamic:
        return None
    name = program_name(words[0].text)
    items = list(words)
    if name in _SIMPLE:
        flags, with_value = _SIMPLE[name]
        start, error = _skip_options(items, flags, with_value)
        label = "time" if name == TIME_WORD else name
        if error:
            return Unwrapped(label, opaque=error)
        writes: tuple[Target, ...] = ()
        if name == "time":
            writes = tuple(Target(items[n + 1], "time -o") for n in range(1, start - 1) if items[n].text in ("-o", "--output"))
        if name == "sudo" and any(w.text in ("-s", "-i", "--shell", "--login") for w in items[1:start]):
            return Unwrapped(label, opaque="sudo starts a shell")
        return Unwrapped(label, inner=tuple(items[start:]), writes=writes)
    if name == "command":
        start, error = _skip_options(items, {"-p", "-v", "-V"}, set())
        if error or any(w.text in ("-v", "-V") for w in items[1:start]):
            return None  # ``command -v`` only looks a name up
        return Unwrapped("command", inner=tuple(items[start:]))
    if name == "timeout":
        start, error = _skip_options(items, {"-v", "--foreground", "--preserve-status", "--verbose"}, {"-s", "-k", "--signal", "--kill-after"})
        if error:
            return Unwrapped("timeout", opaque=error)
        return Unwrapped("timeout", inner=tuple(items[start + 1 :]))
    if name == "env":
        return _env(items)
    if name == "xargs":
        start, error = _skip_options(
            items,
            {"-0", "-r", "-t", "-p", "-x", "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty"},
            {"-I", "-i", "-n", "-P", "-L", "-l", "-s", "-d", "-E", "-e", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace", "--eof"},
        )
        if error:
            return Unwrapped("xargs", opaque=error)
        inner = tuple(items[start:]) or (Word("echo"),)
        return Unwrapped("xargs", inner=inner, appends_input=True)
    if name == "find":
        return _find(items)
    if name in SHELLS:
        return _shell(items, name)
    if name == "eval":
        if any(w.dynamic for w in items[1:]):
            return Unwrapped("eval", opaque="eval runs a string that is only known when it runs")
        return Unwrapped("eval", script=Word(" ".join(w.text for w in items[1:])))
    return None


def _env(items: list[Word]) -> Unwrapped:
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
        elif text in ("-S", "--split-string"):
            if n + 1 >= len(items) or items[n + 1].dynamic:
                return Unwrapped("env -S", opaque="env -S runs a string that is only known when it runs")
            rest = " ".join(w.text for w in items[n + 2 :])
            return Unwrapped("env -S", script=Word(f"{items[n + 1].text} {rest}".strip()), assigns=tuple(assigns))
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


def _find(items: list[Word]) -> Unwrapped | None:
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
        if not text.startswith("-"):
            return None  # ``bash script.sh``: the program is the script runner itself
    return None
