"""Every program's examples, kept beside its entry in the effect model (``Program.examples`` in
``shell/programs.py``, ``Special.examples`` in ``shell/special.py``), swept here: with no rule, in
a real repository, the read-only default allows each ``read_only`` example and none of the
``not_read_only`` ones. Each example must run a program of the entry it is kept beside."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine
from frogtui.approval.rules import RuleSet
from frogtui.approval.shell import analyze, program_name
from frogtui.approval.shell.programs import PROGRAMS, Examples
from frogtui.approval.shell.special import SPECIAL, special_for
from frogtui.protocol import ToolCall
from frogtui.tools.workspace import Workspace
from tests.approval.conftest import make_home, make_repo


def entries() -> list[tuple[tuple[str, ...], Examples, object]]:
    """(the names sharing an entry, its examples, the entry), once per entry."""
    groups: dict[int, tuple[list[str], object]] = {}
    for table in (SPECIAL, {n: p for n, p in PROGRAMS.items() if n not in SPECIAL}):
        for name, entry in table.items():
            groups.setdefault(id(entry), ([], entry))[0].append(name)
    return [(tuple(names), entry.examples, entry) for names, entry in groups.values()]  # type: ignore[attr-defined]


READ_ONLY = [(names, command) for names, examples, _ in entries() for command in examples.read_only]
NOT_READ_ONLY = [(names, command, why) for names, examples, _ in entries() for command, why in examples.not_read_only]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    base = tmp_path_factory.mktemp("examples")
    home = make_home(base)
    repo = make_repo(base, home)
    (repo / "a").write_text("a\n")
    (repo / "b").write_text("b\n")
    (base / "outside").mkdir(exist_ok=True)
    (base / "outside" / "notes.json").write_text("{}\n")
    tmp_dir = base / "session-tmp"
    tmp_dir.mkdir()
    return repo, tmp_dir, home


def decide(places: tuple[Path, Path, Path], command: str) -> object:
    repo, tmp_dir, home = places
    engine = PolicyEngine(Workspace(repo, tmp_dir=tmp_dir), RuleSet(), home=str(home))
    return engine.evaluate(ToolCall("t", "Bash", {"command": command.replace("<OUT>", str(repo.parent / "outside"))}))


def runs_one_of(names: tuple[str, ...], command: str) -> bool:
    """Whether ``command`` runs a program of the entry ``names`` share (``python3.12`` is ``python``)."""
    programs = {program_name(c.program) for c in analyze(command).commands if c.words}
    entry = special_for(names[0]) or PROGRAMS.get(names[0])
    return any(p in names or (special_for(p) or PROGRAMS.get(p)) is entry for p in programs)


@pytest.mark.parametrize(("names", "command"), READ_ONLY, ids=[c for _, c in READ_ONLY])
def test_the_read_only_default_allows_it(places: tuple[Path, Path, Path], names: tuple[str, ...], command: str) -> None:
    assert runs_one_of(names, command), f"{command!r} is kept beside {names} but runs none of them"
    decision = decide(places, command)
    assert (decision.kind, decision.rule, decision.read_only) == ("allow", "read-only", True), f"{command!r}: {decision}"


@pytest.mark.parametrize(("names", "command", "why"), NOT_READ_ONLY, ids=[c for _, c, _ in NOT_READ_ONLY])
def test_the_read_only_default_does_not_allow_it(places: tuple[Path, Path, Path], names: tuple[str, ...], command: str, why: str) -> None:
    assert runs_one_of(names, command), f"{command!r} is kept beside {names} but runs none of them"
    decision = decide(places, command)
    assert decision.kind != "allow" and not decision.read_only, f"{command!r} ({why}): {decision}"


def test_the_programs_with_an_analyser_of_their_own_show_what_they_mean() -> None:
    for names in (("git",), ("sed",), ("awk",), ("find",), ("tar",)):
        special = SPECIAL[names[0]]
        assert special.examples.read_only and special.examples.not_read_only, f"{names}: no examples beside it"
    assert len(READ_ONLY) >= 10 and len(NOT_READ_ONLY) >= 15
