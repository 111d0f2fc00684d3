"""Property tests: a denied action never changes a byte; the floor holds for any path under
``--approve all``; the analyser never crashes; a file changed after its preview is asked again."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from frogtui.agent.loop import Agent
from frogtui.approval import Approver, PolicyEngine, decide, gather
from frogtui.approval.facts import Places
from frogtui.approval.rules import RuleSet
from frogtui.approval.shell import analyze
from frogtui.approval.shell.programs import PROGRAMS
from frogtui.models.replay import ReplayModel
from frogtui.protocol import Approval, ApprovalRequest, ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.workspace import Workspace
from tests.approval.conftest import make_engine as make_table_engine
from tests.approval.conftest import make_home
from tests.approval.conftest import make_repo as make_table_repo
from tests.support import turn, write_replay, xml_call

NAMES = st.sampled_from(["a.txt", "b.py", "sub/c.md", "new.txt", "sub/new.py"])
TEXT = st.text(alphabet="abcxyz \n=()", max_size=40)
COMMANDS = st.sampled_from(
    ["rm -f a.txt", "echo hi > b.py", "mv a.txt moved.txt", "rm -rf sub", "touch z.txt", "sed -i s/a/b/ a.txt", "cp b.py c.py"]
)
CALLS = st.one_of(
    st.builds(lambda p, c: xml_call("Write", file_path=p, content=c), NAMES, TEXT),
    st.builds(lambda p, o, n: xml_call("Edit", file_path=p, old_string=o, new_string=n), NAMES, st.sampled_from(["a", "x", "def"]), TEXT),
    st.builds(lambda c: xml_call("Bash", command=c), COMMANDS),
)
FILES = st.dictionaries(NAMES, TEXT.map(lambda t: t + "a x\n"), min_size=1, max_size=4)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def make_repo(base: Path, files: dict[str, str]) -> Path:
    root = base / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


class Silent:
    def emit(self, event: object) -> None:
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=FILES, calls=st.lists(CALLS, min_size=1, max_size=4))
def test_a_denied_action_never_changes_a_file(files: dict[str, str], calls: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        root = make_repo(base, files)
        before = snapshot(root)
        replay = write_replay(base / "replay.jsonl", [turn("try", *calls), turn("done", answer="ok")])
        workspace = Workspace(root, tmp_dir=base / "tmp")
        approver = Approver(PolicyEngine(workspace, RuleSet()), mode="none")
        result = Agent(ReplayModel(replay), ToolRunner(workspace), approver, Silent()).run("change things")
        approvals = [a for step in result.trajectory["steps"] for a in step["approvals"]]
        assert all(a["decision"] == "deny" for a in approvals if a["tool"] != "Read")
        assert snapshot(root) == before


SEGMENTS = st.sampled_from(["..", ".", "sub", "link_out", "~", "/tmp", ".git", "x.txt", "/proc/self/root", "hooks", "/etc"])


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(SEGMENTS, min_size=1, max_size=5))
def test_the_floor_holds_for_any_path_under_approve_all(parts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        root = make_repo(base, {"sub/x.txt": "x\n"})
        (root / ".git" / "hooks").mkdir(parents=True)
        (base / "outside").mkdir()
        os.symlink(base / "outside", root / "link_out")
        path = os.path.join(*parts)
        workspace = Workspace(root, tmp_dir=base / "tmp")
        approver = Approver(PolicyEngine(workspace, RuleSet()), mode="all")
        for tool in ("Write", "Edit"):
            call = ToolCall("t", tool, {"file_path": path, "content": "x", "old_string": "x", "new_string": "y"})
            approval = approver.approve(ApprovalRequest(call=call, step=1, root=str(root)))
            real = os.path.realpath(os.path.normpath(os.path.join(root, os.path.expanduser(path))))  # as the Write tool does
            escapes = not (real == str(root) or real.startswith(str(root) + "/")) or path.startswith("/proc")
            touches_git = real == str(root / ".git") or real.startswith(str(root / ".git") + "/") or real == str(root)
            if escapes or touches_git:
                assert (approval.decision, approval.by) == ("deny", "floor"), (path, approval)


@settings(max_examples=300, deadline=None)
@example(command="!;")
@given(
    command=st.lists(
        st.sampled_from(
            list("ab $`'\"\\;|&<>(){}\n~/.*-=c#!")
            + ["rm", "curl", "sh", "bash -c ", "eval ", "sudo ", "xargs ", "find . -exec ", "\uff53", "\u200b"]
        ),
        max_size=30,
    ).map("".join)
)
def test_any_command_gets_a_decision(command: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        places = Places.of(Path(folder), Path(folder))
        analysis = analyze(command)
        only_comments = all(line.lstrip().startswith("#") for line in command.splitlines() if line.strip())
        assert analysis.error or analysis.commands or only_comments
        decision = decide(gather(ToolCall("t", "Bash", {"command": command}), places), RuleSet())
        assert decision.kind in ("allow", "ask", "deny") and decision.rule


class ChangesFileOnFirstApproval:
    """An approver (the person) who says yes, while someone edits the file right after the diff
    was shown for the first time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.requests: list[ApprovalRequest] = []

    def approve(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        if len(self.requests) == 1:
            self.path.write_text("def add(a, b):\n    return a - b  # changed meanwhile\n")
        return Approval("allow", by="person")


def test_a_file_changed_after_its_preview_is_asked_again(py_repo: Path) -> None:
    calc = py_repo / "calc.py"
    replay = write_replay(
        py_repo.parent / "replay.jsonl",
        [turn("fix", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")), turn("done", answer="fixed")],
    )
    approver = ChangesFileOnFirstApproval(calc)
    workspace = Workspace(py_repo, tmp_dir=py_repo.parent / "tmp")
    result = Agent(ReplayModel(replay), ToolRunner(workspace), approver, Silent()).run("fix add")
    assert len(approver.requests) == 2, "the changed file was shown again"
    first, second = (r.preview for r in approver.requests)
    assert first is not None and second is not None and first.before_hash != second.before_hash
    assert "# changed meanwhile" in second.before
    assert calc.read_text() == "def add(a, b):\n    return a + b  # changed meanwhile\n"
    assert len(result.trajectory["steps"][0]["approvals"]) == 2


# issue 10: an allow rule allows exactly what it says ---------------------------------------------
def _effect_fragments() -> list[str]:
    """Commands built from the effect table, each with an effect beyond its program's own
    behaviour (a write, another program, code only known when it runs, a delete)."""
    out: list[str] = []
    for name, program in sorted(PROGRAMS.items()):
        out += [f"{name} {option} out.txt calc.py" for option in sorted(program.writes)]
        out += [f"{name} {option} ./tool calc.py" for option in sorted(program.runs)]
        out += [f"{name} {option} x calc.py" for option in sorted(program.opaque)]
        out += [f"{name} {option} x.zip calc.py" for option in sorted(program.deletes)]
        out += [f"{name} calc.py out.txt"] if program.writes_second else []
    return out + [
        "sed -n '1w out.txt' calc.py", "sed -n '1e ./tool' calc.py", "sed 's/a/b/e' calc.py", "awk 'BEGIN{system(\"x\")}'",
        "awk '{print > \"out.txt\"}' calc.py", "find . -delete", "find . -fprint out.txt", "git grep -O./tool add", "git -C .. status",
        "git fetch --upload-pack=./tool .", "pytest --junitxml=out.xml", "pytest --basetemp=tmp", "ls > out.txt", "cat calc.py >> out.txt",
        "cat ~/.ssh/id_rsa", "grep -r x ~", "printf -v PATH %s bin", "python3 -c 'x'", "tar cf out.tar --to-command=./tool calc.py",
        "cat ../outside/secret.txt", "echo ${x@P}",
    ]


EFFECTS = _effect_fragments()
SAFE = ["cat calc.py", "ls -la", "grep -n x calc.py", "sed -n 1p calc.py", "sort calc.py", "uniq calc.py", "git status", "head calc.py",
        "base64 calc.py", "tree", "awk '{print $1}' calc.py", "find . -name x", "git log --oneline", "rg x", "diff calc.py calc.py"]


_ENGINES: dict[str, PolicyEngine] = {}


def _allow_everything_engine(tmp_path_factory: pytest.TempPathFactory) -> PolicyEngine:
    """An engine whose rules allow every program the fragments use (``PROG *``), made once, in a
    folder of pytest's (nothing left in /tmp)."""
    if "engine" not in _ENGINES:
        base = tmp_path_factory.mktemp("effects")
        home = make_home(base)
        programs = sorted({f.split()[0] for f in (*EFFECTS, *SAFE)})  # not ./tool: running it is an effect to decide
        text = "".join(f'[[rules]]\ntool = "Bash"\nmatch = "{p} *"\ndecision = "allow"\n' for p in programs)
        _ENGINES["engine"] = make_table_engine(make_table_repo(base, home), base, home, text)
    return _ENGINES["engine"]


@settings(max_examples=200, deadline=None)
@given(
    parts=st.lists(st.tuples(st.booleans(), st.integers(min_value=0, max_value=10_000)), min_size=1, max_size=4),
    separators=st.lists(st.sampled_from([" ; ", " && ", " || ", " | ", "\n"]), min_size=3, max_size=3),
)
def test_an_allow_rule_never_allows_an_effect_beyond_it(tmp_path_factory: pytest.TempPathFactory, parts: list[tuple[bool, int]],
                                                       separators: list[str]) -> None:
    fragments = [(EFFECTS[n % len(EFFECTS)] if effect else SAFE[n % len(SAFE)]) for effect, n in parts]
    command = fragments[0] + "".join(sep + f for sep, f in zip(separators, fragments[1:], strict=False))
    decision = _allow_everything_engine(tmp_path_factory).evaluate(ToolCall("t", "Bash", {"command": command}))
    if any(effect for effect, _ in parts):
        assert decision.kind != "allow", (command, decision)
    else:
        assert decision.kind == "allow", (command, decision)


def test_every_effect_fragment_alone_is_not_allowed(tmp_path_factory: pytest.TempPathFactory) -> None:
    engine = _allow_everything_engine(tmp_path_factory)
    allowed = [f for f in EFFECTS if engine.evaluate(ToolCall("t", "Bash", {"command": f})).kind == "allow"]
    assert allowed == []
