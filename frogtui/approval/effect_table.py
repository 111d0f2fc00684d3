"""The effect model as a Markdown table, rendered from the data (``PROGRAMS``, the special
analysers' rows, ``SCHEDULERS``), and the table of commands that rebind what a name runs
(``REBINDS``): docs/APPROVALS.md holds their output, and tests keep them equal.

    python -m frogtui.approval.effect_table      # prints the tables
"""

from __future__ import annotations

from frogtui.approval.policy import RISKY_VARIABLES
from frogtui.approval.shell.programs import ALWAYS, PROGRAMS, SCHEDULERS, Program
from frogtui.approval.shell.rebinds import REBINDING_VARIABLES, REBINDS
from frogtui.approval.shell.special import SPECIAL, Special

HEADER = (
    "| program | reads | runs another program (or code known only when it runs) | writes or deletes beyond its own behaviour | "
    "read-only when |\n|---|---|---|---|---|"
)


def _codes(options: frozenset[str] | dict[str, str]) -> str:
    return ", ".join(f"`{o}`" for o in sorted(options))


def _row(names: list[str], program: Program) -> str:
    reads = {"all": "operands", "after-first": "operands after the first", "first": "the first operand", "none": "names only"}[
        program.reads
    ]
    reads = "—" if reads == "names only" and not program.read_only else reads
    if ALWAYS in program.recursive:
        reads += ", recursively"
    elif program.recursive:
        reads += f" (recursively with {_codes(program.recursive)})"
    if program.reads_options:
        reads += f"; {_codes(program.reads_options)}"
    runs = ", ".join(x for x in (_codes(program.runs), _codes(program.opaque)) if x) or "—"
    writes = [
        _codes(program.writes),
        "its second operand" if program.writes_second else "",
        _codes(program.deletes) + " deletes" if program.deletes else "",
    ]
    if program.assigns:
        writes.append(f"{_codes(program.assigns)} sets a variable")
    read_only = "without those" if program.read_only else "never"
    return f"| {', '.join(f'`{n}`' for n in names)} | {reads} | {runs} | {'; '.join(w for w in writes if w) or '—'} | {read_only} |"


def effect_table() -> str:
    """The effect table in Markdown, one row per group of programs that share an entry."""
    groups: dict[int, tuple[Program, list[str]]] = {}
    for name, program in PROGRAMS.items():
        if name not in SPECIAL:
            groups.setdefault(id(program), (program, []))[1].append(name)
    rows = [_row(names, program) for program, names in groups.values()]
    specials: dict[int, tuple[Special, list[str]]] = {}
    for name, special in SPECIAL.items():
        specials.setdefault(id(special), (special, []))[1].append(name)
    rows += [
        f"| {', '.join(f'`{n}`' for n in names)} | {' | '.join(c.replace('|', '&#124;') for c in special.doc)} |"
        for special, names in specials.values()
    ]
    risky = ", ".join(f"`{v}`" for v in RISKY_VARIABLES)
    rows.append(
        f"| `NAME=value cmd`, `env NAME=`, `export`, `declare`, `read`, `printf -v`... | — | setting {risky} changes what runs: "
        "asked, never allowed by a rule | — | without those |"
    )
    schedulers = ", ".join(f"`{n}`" for n in SCHEDULERS)
    later = "code later, outside frogtui: **the floor denies** (except listing: `crontab -l`...)"
    rows.append(f"| {schedulers} | — | {later} | — | never |")
    return HEADER + "\n" + "\n".join(rows) + "\n"


def rebinds_table() -> str:
    """The commands that rebind what a name runs, in Markdown: one row per group sharing a row."""
    groups: dict[str, list[str]] = {}
    for name, entry in REBINDS.items():
        groups.setdefault(entry.doc, []).append(name)
    rows = [f"| {', '.join(f'`{n}`' for n in names)} | {doc} |" for doc, names in groups.items()]
    variables = ", ".join(f"`{v}`" for v in REBINDING_VARIABLES)
    rows.append(f"| any word or assignment | names {variables} (`BASH_CMDS[ls]=/usr/bin/rm`, `${{BASH_CMDS[ls]:=…}}`) |")
    return "| program | rebinds when |\n|---|---|\n" + "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(effect_table(), end="")
    print()
    print(rebinds_table(), end="")
