"""The programs whose effects need an analyser of their own beyond the table (``programs.PROGRAMS``):
their arguments are small programs (``sed`` scripts, ``awk`` programs, ``find`` expressions) or
their options are too many for a row (``git``, ``tar``, ``pytest``). One explicit table,
``SPECIAL``: program name -> ``Special`` (the analyser, its row of the documented effect table, and
its examples). A new analyser is added here and nowhere else. Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from frogtui.approval.shell.git import git_effects
from frogtui.approval.shell.model import Effects
from frogtui.approval.shell.programs import Examples
from frogtui.approval.shell.scripts import (
    INLINE_OPTIONS,
    awk_effects,
    find_effects,
    interpreter_effects,
    jq_effects,
    pager_effects,
    pytest_effects,
    sed_effects,
    tar_effects,
    zip_effects,
)
from frogtui.approval.shell.words import Word

Analyser = Callable[[str, list[Word]], Effects]
"""``analyser(name, args)``: the effects of the program ``name`` (as called) given ``args``."""


@dataclass(frozen=True, kw_only=True)
class Special:
    """A program (or a group of them) with an analyser of its own.

    Attributes:
        analyse: Its effects from its arguments.
        doc: Its row of the effect table in docs/APPROVALS.md: what it reads, what it runs, what
            it writes or deletes beyond its own behaviour, and when it only reads.
        examples: Commands the read-only default must allow or must not (``test_program_examples``).
    """

    analyse: Analyser
    doc: tuple[str, str, str, str]
    examples: Examples = Examples()


SPECIAL: dict[str, Special] = {
    "git": Special(
        analyse=git_effects,
        doc=(
            "`diff --no-index` operands",
            "`-c` command settings, `grep -O`, `--upload-pack`, `--receive-pack`, `--exec`, `rebase -x`, `bisect run`, "
            "`submodule foreach`, `filter-branch` filters, `difftool -x`",
            "`--output`, `config` of a command setting; `-C`/`--git-dir`/`--work-tree`, `worktree add`, `clone`, `init` must stay inside",
            "`status`, `diff`, `log`, `show`, `grep`, `blame`, `ls-files`, `rev-parse`...; `branch`/`tag`/`remote`/`stash`/`config` listing only",
        ),
        examples=Examples(
            read_only=("git status -sb", "git log -L 1,2:calc.py"),
            not_read_only=(
                ("git --exec-path=DIR status", "git runs DIR/git-status"),
                ("git log --show-signature", "an option git's table does not know (it runs gpg)"),
                ("git diff -Oorder.txt", "an option git's table does not know (it reads a file)"),
            ),
        ),
    ),
    "sed": Special(
        analyse=sed_effects,
        doc=(
            "operands after the script; `r`/`R FILE`", "`e CMD` (analysed), `e`, `s///e`", "`w`/`W FILE`, `s///w FILE` (`-i`: its own)",
            "no `w`, `e`, `-f` (or `--sandbox`)",
        ),
        examples=Examples(read_only=("sed -n '/def/p' calc.py",), not_read_only=(("sed -I.bak s/x/y/ calc.py", "BSD sed's in-place"),)),
    ),
    **dict.fromkeys(
        ("awk", "gawk", "mawk", "nawk", "busybox-awk"),
        Special(
            analyse=awk_effects,
            doc=(
                "operands after the program (`ARGV`/`ARGC` in the program: unknown)", "`system()`, `|`, `getline`, `@f()`, `-f`, `-W exec`",
                "`print > FILE`, `-o`/`-p`/`-d` (`--profile`...)", "the program has none of those and no `>`, `|` or `@` at all",
            ),
            examples=Examples(
                read_only=("awk -F: '{print $1, $NF}' calc.py", "awk '{s += $1} END {print s}' calc.py", "awk 'NR==1' calc.py"),
                not_read_only=(
                    ("awk -o out '{print}' calc.py", "awk -o writes a file"),
                    ("awk -p out '{print}' calc.py", "awk -p writes a profile"),
                    ("awk -d out '{print}' calc.py", "awk -d dumps variables"),
                    ("awk --profile=out '{print}' calc.py", "awk --profile writes a file"),
                ),
            ),
        ),
    ),
    "find": Special(
        analyse=find_effects,
        doc=(
            "names only", "`-exec`, `-execdir`, `-ok` (looked through)",
            "`-delete` (everything, `.git` too, unless a test comes before it), `-fprint`, `-fls`", "no action but printing",
        ),
        examples=Examples(
            read_only=("find . -type f -name '*.py' -not -path './.git/*'",),
            not_read_only=(('find . "$EXPR"', "find's expression only known at run time"),),
        ),
    ),
    **dict.fromkeys(
        ("less", "more"),
        Special(
            analyse=pager_effects,
            doc=(
                "operands", "`+CMD` (`+!` runs a shell), `-k`/`--lesskey-*` (a key file can set `LESSOPEN`)", "`-o`/`-O`/`--log-file`",
                "no `+CMD`, key or log file",
            ),
        ),
    ),
    "jq": Special(
        analyse=jq_effects,
        doc=(
            "operands after the first; `--from-file`, `--rawfile`, `--slurpfile`, `-f`",
            "—", "—", "the program has no `import`/`include` (they read any `.json`/`.jq` file it names)",
        ),
        examples=Examples(read_only=("jq . a",)),
    ),
    **dict.fromkeys(
        ("tar", "bsdtar"),
        Special(
            analyse=tar_effects,
            doc=(
                "operands, recursively (creating)",
                "`--to-command`, `-I`, `--checkpoint-action=exec=`, `-F`, `--rsh-command`, `--rmt-command`, an archive `HOST:FILE` (rsh/ssh)",
                "`--remove-files`, `--index-file`; `-f`, `-x` (its own)", "`-t` (listing)",
            ),
            examples=Examples(
                read_only=("tar -tf x.tar", "tar tvf x.tar"),
                not_read_only=(
                    ("tar tIf 'sh -c \"touch m\"' /dev/null", "an old-style bundle: -I runs a program"),
                    ("tar -tf x.tar.lz", "tar runs the decompressor found on PATH"),
                    ("tar -tzf x.tar.gz", "tar -z runs gzip found on PATH"),
                ),
            ),
        ),
    ),
    "zip": Special(
        analyse=zip_effects,
        doc=(
            "operands after the archive (`-r`: recursively)", "`-TT`, `--unzip-command`", "`-m` deletes what it archives; the archive (its own)",
            "never",
        ),
    ),
    **dict.fromkeys(
        ("pytest", "py.test"),
        Special(
            analyse=pytest_effects,
            doc=(
                "—", "the repository's tests (its own)",
                "`--junitxml`, `--basetemp` (emptied), `--result-log`, `--log-file`, `--report-log`, `--debug`, `-o cache_dir=`, `--cov-report=K:PATH`; "
                "options from `@FILE`, `-c FILE`, `-o addopts=` are asked",
                "never",
            ),
        ),
    ),
    **dict.fromkeys(
        INLINE_OPTIONS,
        Special(
            analyse=interpreter_effects,
            doc=("—", "inline code: `python -c`, `node -e`/`-p`, `perl -e`/`-E`, `ruby -e`, `php -r`, `lua -e`, `bun -e`", "—", "never"),
        ),
    ),
}  # fmt: skip
"""Every program with an analyser of its own, by name. Programs that share an analyser share one
``Special`` (one row of the effect table)."""


def special_for(name: str) -> Special | None:
    """The entry for the program ``name`` (``python3.12`` is ``python``), or None."""
    return SPECIAL.get("python" if name.startswith("python") and name[6:].replace(".", "").isdigit() else name)
