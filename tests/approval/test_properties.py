"""Property tests: a denied action never changes a byte; the floor holds for any path under
``--approve all``; the analyser never crashes; a file changed after its preview is asked again."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from frogtui.agent.loop import Agent
from frogtui.approval import PolicyApprover, PolicyEngine, decide, gather
from frogtui.approval.facts import Places
from frogtui.approval.rules import RuleSet
from frogtui.approval.shell import analyze
from frogtui.models.replay import ReplayModel
from frogtui.protocol import Approval, ApprovalRequest, ToolCall
from frogtui.tools import ToolRunner
from frogtui.tools.workspace import Workspace
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
        approver = PolicyApprover(PolicyEngine(workspace, RuleSet()), "none")
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
        approver = PolicyApprover(PolicyEngine(workspace, RuleSet()), "all")
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
