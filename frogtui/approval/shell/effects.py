"""What simple commands do to files, as tables: which programs write which of their arguments,
which programs download, and which run a script they are handed. Pure data and small functions."""
from __future__ import annotations

import fnmatch
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from frogtui.approval.shell.words import HOME_MARK, Word

DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "GET", "lynx"})
SCRIPT_RUNNERS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox", "perl", "ruby", "node",
     "nodejs", "php", "lua", "pwsh", "osascript", "source", ".", "eval", "deno", "bun", "python", "python2", "python3", "pypy3"}
)
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
SPECIAL_WRITE_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
"""Writing here changes no file."""


@dataclass(frozen=True)
class Target:
    """A path a command writes, deletes or overwrites.

    Attributes:
        word: The path as written.
        how: What writes it (``>``, ``tee``, ``rm``, ``find -delete``...).
        under: The command touches things *under* this path, not the path itself (``find``).
        beyond: See the field.
    """

    word: Word
    how: str
    under: bool = False
    beyond: bool = False
    """Not the program's own behaviour (``sort -o``, ``> f``, ``find -delete``): also decided
    against the Write rules (or, for a read, the Read rules), not only by the program's rule."""
    follows: bool = False
    """A folder read following the symlinks under it (``grep -R``, ``rg -L``)."""


def program_name(text: str) -> str:
    """``/usr/bin/env`` -> ``env``; look-alike characters folded (NFKC) for the strict checks."""
    return unicodedata.normalize("NFKC", text).rsplit("/", 1)[-1]


def is_script_runner(text: str) -> bool:
    name = program_name(text)
    return name in SCRIPT_RUNNERS or (name.startswith("python") and name[6:].replace(".", "").isdigit())


def abbreviates(text: str, option: str) -> bool:
    """Whether the word ``text`` (``--name`` or ``--name=value``) names the long ``option``: GNU
    ``getopt_long`` and git's option parser take any unique prefix (``--out=F`` is ``--output=F``).
    An ambiguous prefix is an error there, so taking every prefix only ever asks more."""
    name = text.split("=", 1)[0]
    return option.startswith("--") and name.startswith("--") and len(name) > 2 and option.startswith(name)


def _operands(args: Sequence[Word], with_value: frozenset[str] = frozenset()) -> list[Word]:
    """Non-option arguments (after ``--`` everything is an operand)."""
    out: list[Word] = []
    skip = False
    ended = False
    for word in args:
        if skip:
            skip = False
            continue
        if not ended and word.text == "--":
            ended = True
            continue
        if not ended and word.text.startswith("-") and word.text != "-":
            if word.text in with_value or ("=" not in word.text and any(abbreviates(word.text, o) for o in with_value)):
                skip = True
            continue
        out.append(word)
    return out


def _option_value(args: Sequence[Word], short: str, long: str) -> list[Word]:
    """Values of ``-o V``, ``-oV``, ``--long V`` and ``--long=V``."""
    values: list[Word] = []
    for n, word in enumerate(args):
        text = word.text
        if text in (short, long) and n + 1 < len(args):
            values.append(args[n + 1])
        elif long and text.startswith(long + "="):
            values.append(Word(text[len(long) + 1 :], word.dynamic))
        elif short and text.startswith(short) and len(text) > len(short) and not text.startswith("--"):
            values.append(Word(text[len(short) :], word.dynamic))
    return values


ALL_OPERANDS = frozenset({"rm", "rmdir", "unlink", "touch", "mkdir", "shred", "mv", "tee", "mkfifo", "truncate"})
LAST_OPERAND = frozenset({"cp", "ln", "install", "rsync", "scp"})
AFTER_FIRST_OPERAND = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})


def write_targets(words: Sequence[Word]) -> list[Target]:
    """The paths a simple command (program first, wrappers removed) writes, as far as known."""
    if not words:
        return []
    name = program_name(words[0].text)
    args = list(words[1:])
    targets: list[Target] = []
    if name in ALL_OPERANDS:
        with_value = frozenset({"-s", "--size", "-r", "--reference", "-m", "--mode", "-t", "-S"}) if name in ("truncate", "mkdir", "mv", "touch") else frozenset()
        targets += [Target(w, name) for w in _operands(args, with_value)]
    elif name in LAST_OPERAND:
        operands = _operands(args, frozenset({"-t", "-S", "--suffix", "-m", "-o", "-g", "-e"}))
        if operands:
            targets.append(Target(operands[-1], name))
    elif name in AFTER_FIRST_OPERAND:
        targets += [Target(w, name) for w in _operands(args)[1:]]
    elif name == "dd":
        targets += [Target(Word(w.text[3:], w.dynamic), "dd") for w in args if w.text.startswith("of=")]
    elif name in ("sed", "perl") and any(
        w.text.startswith(("-i", "-I", "--in-place")) or (w.text.startswith("-") and "i" in w.text[1:] and not w.text.startswith("--"))
        for w in args
    ):  # ``-I`` is BSD sed's in-place
        operands = _operands(args, frozenset({"-e", "-f"}))
        has_script_option = any(w.text in ("-e", "-f") for w in args)
        targets += [Target(w, f"{name} -i") for w in (operands if has_script_option else operands[1:])]
    elif name == "tar" and _tar_extracts(args):
        targets += [Target(w, "tar -x", under=True) for w in _option_value(args, "-C", "--directory")] or [Target(Word("."), "tar -x", under=True)]
    elif name in ("unzip", "7z", "7za", "bsdtar", "cpio"):
        folders = _option_value(args, "-d", "") if name == "unzip" else _option_value(args, "-o", "") if name.startswith("7z") else _option_value(args, "-C", "--directory") if name == "bsdtar" else _option_value(args, "-D", "--directory")
        targets += [Target(w, name, under=True) for w in folders] or [Target(Word("."), name, under=True)]
    elif name == "git":
        targets += _git_writes(args)
    elif name == "curl":
        targets += [Target(w, "curl -o") for w in _option_value(args, "-o", "--output")]
    elif name == "wget":
        targets += [Target(w, "wget -O") for w in _option_value(args, "-O", "--output-document") if w.text != "-"]
    if name == "ln" and targets and not _operands(args)[1:] and not _option_value(args, "-t", "--target-directory"):
        targets = []  # ``ln -s TARGET``: the link is made in the working folder, named like the target
    for flag, long in (("-t", "--target-directory"),):
        if name in ("cp", "mv", "ln", "install"):
            targets += [Target(w, name) for w in _option_value(args, flag, long)]
    return targets


FIND_SELECTORS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-newer", "-mtime", "-mmin", "-ctime", "-cmin", "-atime", "-amin", "-size", "-user", "-group", "-perm", "-empty", "-links", "-inum", "-samefile", "-prune", "-lname", "-ilname", "-used", "-uid", "-gid", "-nouser", "-nogroup", "-readable", "-writable", "-executable"})
"""``find`` tests that narrow what a later ``-delete`` removes (without one before it, everything
under the start goes: ``find . -delete -name x`` deletes everything)."""


def _tar_extracts(args: list[Word]) -> bool:
    for n, word in enumerate(args):
        text = word.text
        if text in ("--extract", "--get"):
            return True
        if text.startswith("--"):
            continue
        if (n == 0 or text.startswith("-")) and "x" in text.lstrip("-") and text.lstrip("-").isalpha():
            return True
    return False


GIT_COMMAND_KEYS = ("alias.*", "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.hookspath", "core.askpass", "diff.external", "diff.*.textconv", "diff.*.command", "filter.*", "merge.*.driver", "sequence.editor", "credential.helper", "credential.*.helper", "pager.*", "gpg.program", "gpg.*.program", "uploadpack.packobjectshook", "include.path", "includeif.*", "web.browser", "browser.*.cmd", "man.*.cmd", "difftool.*.cmd", "mergetool.*.cmd", "sendemail.*", "remote.*.receivepack", "remote.*.uploadpack", "protocol.*.allow", "ssh.variant", "core.gitproxy", "http.proxy", "core.alternaterefscommand", "interactive.difffilter")
"""git settings whose value is a command git runs (or a file it reads settings from)."""


def git_command_key(key: str) -> bool:
    """True when setting git config ``key`` decides a command git will run."""
    return any(fnmatch.fnmatchcase(key.lower(), pattern) for pattern in GIT_COMMAND_KEYS)


def git_subcommand(args: Sequence[Word]) -> tuple[int, list[tuple[str, str]]]:
    """Index in ``args`` of git's subcommand, and the ``-c key=value`` settings before it."""
    settings: list[tuple[str, str]] = []
    n = 0
    while n < len(args):
        text = args[n].text
        if text == "-c" and n + 1 < len(args):
            key, _, value = args[n + 1].text.partition("=")
            settings.append((key, value))
            n += 2
        elif text in ("-C", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix") and n + 1 < len(args):
            n += 2
        elif text.startswith("-"):
            n += 1
        else:
            break
    return n, settings


def _git_writes(args: list[Word]) -> list[Target]:
    start, _ = git_subcommand(args)
    sub = args[start].text if start < len(args) else ""
    rest = args[start + 1 :]
    targets = [Target(w, f"git {sub} --output") for w in _option_value(rest, "", "--output")]
    if sub == "format-patch":
        targets += [Target(w, "git format-patch -o", under=True) for w in _option_value(rest, "-o", "--output-directory")]
    if sub == "config":
        names = {w.text for w in rest}
        reading = names & {"--get", "--get-all", "--get-regexp", "-l", "--list", "--get-urlmatch", "--get-color", "--get-colorbool", "get", "list"}
        operands = _operands(rest, frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}))
        if not reading and (len(operands) >= 2 or names & {"--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit", "set", "unset"}):
            if "--global" in names:
                targets.append(Target(Word(HOME_MARK + "/.gitconfig"), "git config --global"))
            elif "--system" in names:
                targets.append(Target(Word("/etc/gitconfig"), "git config --system"))
            elif _option_value(rest, "-f", "--file"):
                targets += [Target(w, "git config --file") for w in _option_value(rest, "-f", "--file")]
            elif any(git_command_key(w.text) for w in operands[:2]):
                targets.append(Target(Word(".git/config"), "git config (a command git runs)"))
    return targets


def symlinks_made(words: Sequence[Word]) -> list[tuple[Word, Word]]:
    """``(link, target)`` for each symbolic link ``ln -s`` makes (``ln -s TARGET LINK``,
    ``ln -s TARGET`` in the working folder, ``ln -s T1 T2 DIR``)."""
    if not words or program_name(words[0].text) != "ln":
        return []
    args = list(words[1:])
    symbolic = any(w.text in ("--symbolic",) or (w.text.startswith("-") and not w.text.startswith("--") and "s" in w.text[1:]) for w in args)
    if not symbolic:
        return []
    folder = _option_value(args, "-t", "--target-directory")
    operands = _operands(args, frozenset({"-t", "-S", "--suffix"}))
    if folder:
        return [(Word(folder[0].text.rstrip("/") + "/", folder[0].dynamic), t) for t in operands]
    if len(operands) == 1:
        return [(Word(operands[0].text.rstrip("/").rsplit("/", 1)[-1] or "/", operands[0].dynamic), operands[0])]
    if len(operands) > 2:
        return [(Word(operands[-1].text.rstrip("/") + "/", operands[-1].dynamic), t) for t in operands[:-1]]
    return [(operands[1], operands[0])] if len(operands) == 2 else []
