"""Proposals on a real copy-on-write view (kernel overlayfs in a user namespace, bubblewrap on it):
what the upper layer is read as, what lands, and the red-team cases (whiteouts, opaque folders,
links pointing out, hard links, device files, xattrs, files changed under the proposal, huge
output, processes left behind)."""
from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from frogtui.approval import PolicyEngine, proposals
from frogtui.approval.proposals import judge, overall
from frogtui.approval.rules import RuleSet, SandboxSettings, parse_rules
from frogtui.approval.rules import combine as combine_rules
from frogtui.approval.sandbox import make_sandbox, make_view
from frogtui.tools.landing import land
from frogtui.tools.proposals import Proposal, ProposalRunner
from frogtui.tools.workspace import Workspace
from frogtui.vcs.in_place import TreeCapture
from frogtui.vcs.snapshot import open_repo
from tests.overlay import WAYS, needs_overlay
from tests.support import git, running

WAY_NAMES = ("overlay", "fuse", "undo")

pytestmark = needs_overlay


class Proposer:
    """Runs commands as proposals in ``root`` (a real git repository)."""

    def __init__(self, root: Path, tmp: Path, way: str = "overlay") -> None:
        self.workspace = Workspace(root, tmp_dir=tmp / "session-tmp")
        self.workspace.tmp_dir.mkdir(exist_ok=True)
        sandbox = make_sandbox(self.workspace, SandboxSettings())
        view, why = make_view(sandbox.wrap, self.workspace.root, way)
        assert view is not None and view.kind == way, why
        self.sandbox = sandbox

        def ignored(paths: list[str]) -> set[str]:
            done = subprocess.run(["git", "check-ignore", "-z", "--stdin"], cwd=root, input="\0".join(paths) + "\0",
                                  capture_output=True, text=True, check=False)
            return {p for p in done.stdout.split("\0") if p}

        repo = open_repo(root) if way == "undo" else None
        in_place = TreeCapture(repo) if repo is not None else None
        self.runner = ProposalRunner(view, self.workspace.root, tmp / "layers", ignored=ignored, in_place=in_place)
        self.in_place = in_place is not None
        self.way = way
        """The command runs on the tree and is put back (run then undo: what git does not see stays)."""

    def __call__(self, command: str) -> Proposal:
        env = self.sandbox.wrap.environment(os.environ)
        env["TMPDIR"] = str(self.workspace.tmp_dir)
        return self.runner.propose(command, env=env, timeout=20)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "d" / "sub").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "src" / "d" / "keep.txt").write_text("old keep\n")
    (root / "src" / "d" / "gone.txt").write_text("gone\n")
    (root / "src" / "d" / "sub" / "deep.txt").write_text("deep\n")
    (root / "docs").mkdir()
    (root / "docs" / "b.md").write_text("# b\n")
    (root / ".gitignore").write_text(".cache/\n.venv/\n__pycache__/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


@pytest.fixture(params=WAYS)
def propose(tree: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Proposer:
    """A proposer on each way a proposal runs (``tests.overlay.WAYS``)."""
    return Proposer(tree, tmp_path, request.param)


def lines(proposal: Proposal) -> list[str]:
    return [effect.describe() for effect in proposal.effects]


def test_the_upper_layer_is_read_as_changes_and_nothing_reaches_the_tree(tree: Path, propose: Proposer) -> None:
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts}
    proposal = propose(
        "sed -i s/1/2/ src/a.py; rm docs/b.md; rm -r src/d && mkdir src/d && echo new keep > src/d/keep.txt;"
        " printf 'a\\0b' > src/blob.bin; ln -s /etc/passwd src/out; mkfifo src/fifo; mv src/a.py src/a2.py; echo printed"
    )
    assert lines(proposal) == [
        "deleted docs/b.md",
        "deleted src/a.py",  # sed changed it, then mv took it away: its new content is not the tree's, no rename
        "added src/a2.py",
        "added src/blob.bin (binary, 3 bytes)",
        "deleted src/d/gone.txt",
        "modified src/d/keep.txt",
        "deleted src/d/sub/ (a folder with 1 file(s): deep.txt)",
        *([] if propose.in_place else ["src/fifo: a FIFO or socket (not carried over)"]),  # git's view has no FIFO: it stays
        "added src/out -> /etc/passwd",
    ]
    if not propose.in_place:  # git's view has no folder deleted and made again: its files, one by one
        assert [e.replaced for e in proposal.effects if e.path.startswith("src/d/")] == [True, True, True]
    assert "printed" in proposal.result.observation
    after = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before, "nothing of a proposal reaches the working tree"
    proposal.discard()
    assert not proposal.layers.folder.exists()
    deadline = time.monotonic() + 10
    while list(proposal.layers.folder.parent.glob("frogtui-proposal-*")):
        assert time.monotonic() < deadline, "the discarded layer folder is removed (on a thread of its own)"
        time.sleep(0.01)


def test_renames_are_paired_by_content_and_a_renamed_folder_is_one_effect(propose: Proposer) -> None:
    proposal = propose("mv src/d src/e && mv docs/b.md docs/c.md")
    assert lines(proposal) == ["renamed docs/b.md -> docs/c.md", "renamed src/d/ -> src/e/ (3 file(s))"]


def test_mode_changes_links_and_ignored_paths(tree: Path, propose: Proposer) -> None:
    proposal = propose("chmod +x src/a.py; mkdir -p .cache .venv/bin __pycache__; touch .cache/x .cache/y;"
                       " echo '#!/bin/sh' > .venv/bin/tool; touch .venv/pyvenv.cfg; echo b > __pycache__/m.cpython-311.pyc;"
                       " ln -s a.py src/link")
    found = {e.path: e for e in proposal.effects}
    assert found["src/a.py"].describe() == "mode of src/a.py: 644 -> 755"
    assert found["src/a.py"].runs_later == "executable"
    assert found[".venv/bin/tool"].runs_later.startswith("a program of the project's environment")
    assert found["__pycache__/m.cpython-311.pyc"].runs_later.startswith("Python bytecode")
    assert found["src/link"].describe() == "added src/link -> a.py"
    assert {".cache", ".venv", "__pycache__"} <= set(proposal.ignored)


def engine_for(root: Path, rules: str = "") -> PolicyEngine:
    ruleset = combine_rules(parse_rules(rules, "test"), None) if rules else RuleSet()
    return PolicyEngine(Workspace(root), ruleset)


def test_caches_land_without_asking_what_runs_later_never_lands_unseen(tree: Path, propose: Proposer) -> None:
    engine = engine_for(tree)
    caches = propose("mkdir -p .cache __pycache__ && echo data > .cache/x && echo b > __pycache__/m.cpython-311.pyc")
    judged = judge(engine, caches, "policy")
    assert [(j.effect.path, j.verdict, j.rule) for j in judged] == [
        (".cache", "allow", "ignored by git (a cache or build output)"),
        (".cache/x", "allow", "ignored by git (a cache or build output)"),
        ("__pycache__", "allow", "ignored by git (a cache or build output)"),
        ("__pycache__/m.cpython-311.pyc", "skip", "not carried over"),
    ]
    assert overall(judged) == "allow"
    program = propose("mkdir -p .venv/bin && touch .venv/pyvenv.cfg && echo '#!/bin/sh' > .venv/bin/python && chmod +x .venv/bin/python")
    assert overall(judge(engine, program, "policy")) == "ask", "a program in .venv/bin is never landed unseen"


def test_a_control_file_and_a_link_out_are_asked_even_where_a_rule_allows(tree: Path, propose: Proposer) -> None:
    engine = engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "**"\ndecision = "allow"\n')
    assert overall(judge(engine, propose("echo x > src/ok.py"), "policy")) == "allow"
    hooks = judge(engine, propose("echo 'repos: []' > .pre-commit-config.yaml"), "policy")
    assert [(j.verdict, j.rule) for j in hooks] == [("ask", "control file")]
    out = judge(engine, propose("ln -s ../../outside src/escape"), "policy")
    assert [(j.verdict, j.rule) for j in out] == [("ask", "link out of the repository")]
    assert overall(judge(engine, propose("rm -rf .git/objects"), "all")) == "allow", "the sandbox keeps .git read-only: no effect"


def test_what_lands_is_exactly_what_was_accepted(tree: Path, propose: Proposer) -> None:
    proposal = propose("echo y > src/a.py; echo new > src/new.py; rm docs/b.md")
    landed = land(proposal, accepted=("src/a.py", "docs/b.md"))
    assert landed.ok and set(landed.applied) == {"src/a.py", "docs/b.md"}
    assert (tree / "src" / "a.py").read_text() == "y\n"
    assert not (tree / "docs" / "b.md").exists() and not (tree / "src" / "new.py").exists()


# red team ---------------------------------------------------------------------------------------
def test_forged_overlay_xattrs_and_device_files_do_not_fake_effects(tree: Path, propose: Proposer) -> None:
    """A command cannot make a whiteout (no CAP_MKNOD) nor mark a folder opaque: an xattr it sets
    through the view is stored escaped, so the folder's files are not read as deleted."""
    proposal = propose(
        "python3 -c \"import os; os.setxattr('src/d', 'user.overlay.opaque', b'y');"
        " os.setxattr('src/a.py', 'user.overlay.whiteout', b'y')\";"
        " mknod src/d/keep.txt c 0 0; mknod src/dev c 1 3; echo done"
    )
    assert [e for e in proposal.effects if e.kind in ("deleted", "added", "modified", "special")] == []
    assert land(proposal).ok
    assert (tree / "src" / "d" / "keep.txt").read_text() == "old keep\n" and (tree / "src" / "d" / "gone.txt").exists()


def test_a_file_changed_under_the_proposal_is_stale_and_nothing_lands(tree: Path, propose: Proposer) -> None:
    changed_after = propose("echo command > src/a.py; echo other > docs/c.md")
    (tree / "src" / "a.py").write_text("person\n")
    landed = land(changed_after)
    assert landed.stale and "src/a.py" in landed.stale[0] and not landed.applied
    assert (tree / "src" / "a.py").read_text() == "person\n" and not (tree / "docs" / "c.md").exists()

    timer = threading.Timer(0.15, lambda: (tree / "docs" / "b.md").write_text("person's edit\n"))
    timer.start()
    during = propose("sleep 0.4; echo command >> docs/b.md")
    timer.join()
    if propose.in_place:  # run then undo: git cannot tell the person's edit from the command's (docs/APPROVALS.md)
        (effect,) = during.effects
        assert effect.path == "docs/b.md" and (tree / "docs" / "b.md").read_text() == "# b\n"
        assert land(during).ok and (tree / "docs" / "b.md").read_text() == "person's edit\ncommand\n"
        return
    assert land(during).stale, "changed while the command ran: the command's copy holds the old content"
    assert (tree / "docs" / "b.md").read_text() == "person's edit\n"


def test_a_link_put_in_the_tree_before_landing_carries_no_write_outside(tree: Path, tmp_path: Path, propose: Proposer) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    proposal = propose("mkdir -p src/new && echo x > src/new/f.txt")
    (tree / "src" / "new").symlink_to(outside)
    landed = land(proposal)
    assert not landed.ok and list(outside.iterdir()) == []


def test_hard_links_land_as_copies_and_a_link_in_the_tree_is_not_followed(tree: Path, tmp_path: Path, propose: Proposer) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (tree / "src" / "to_outside").symlink_to(outside)
    proposal = propose("ln src/a.py src/hard.py; echo pwned > src/to_outside; echo x >> src/hard.py")
    assert outside.read_text() == "outside\n"
    assert land(proposal).ok
    assert outside.read_text() == "outside\n"
    assert (tree / "src" / "hard.py").read_text() == "x = 1\nx\n"


def test_huge_output_is_bounded_and_no_process_outlives_the_proposal(tree: Path, propose: Proposer) -> None:
    marker = f"77.31{WAY_NAMES.index(propose.way)}"  # one of its own per way: the ways run at once on the test workers
    proposal = propose(f"(sleep {marker} &); head -c 5000000 /dev/zero | tr '\\0' x; echo $TMPDIR > tmp_was; echo t > $TMPDIR/t")
    assert len(proposal.result.observation) < 40_000
    time.sleep(0.1)
    assert not running(marker), "a process of the proposal outlived it"
    assert list(propose.workspace.tmp_dir.iterdir()) == [], "the proposal's temp folder is its own"


def test_a_deny_rule_for_a_file_deep_in_a_deleted_folder_stops_it(tree: Path, propose: Proposer) -> None:
    """A deleted folder is judged as its path and, for each file under it, every deny or ask
    Write rule: a rule that allows the folder cannot hide a file a stricter rule names."""
    (tree / "src" / "d" / "sub" / "server.pem").write_text("key\n")
    engine = engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n'
                              '[[rules]]\ntool = "Write"\nmatch = "*.pem"\ndecision = "deny"\n')
    judged = judge(engine, propose("rm -r src/d"), "all")
    assert [(j.effect.path, j.verdict, j.rule) for j in judged] == [("src/d", "deny", "Write: *.pem")]
    assert overall(judge(engine, propose("rm -r src/d/sub/deep.txt src/d/gone.txt"), "policy")) == "allow"


def test_an_ask_rule_someone_wrote_is_asked_before_the_command_runs(tree: Path) -> None:
    """A command the rules ask about only by default runs as a proposal; one an ask rule names
    (its output may be what the rule guards) is asked about by its text, before it runs."""
    from frogtui.approval import Approver, PersonAnswer
    from frogtui.protocol import ApprovalRequest, ToolCall

    asked = []
    engine = engine_for(tree, '[[rules]]\ntool = "Bash"\nmatch = "git log *"\ndecision = "ask"\n')
    gate = Approver(engine, ask=lambda question: asked.append(question) or PersonAnswer("deny"))

    def approve(command: str):
        call = ToolCall(id="c", name="Bash", arguments={"command": command})
        return gate.approve(ApprovalRequest(call=call, step=1, root=str(tree), proposable=True))

    assert approve("sed -i s/1/2/ src/a.py").proposal and asked == []
    assert not approve("git log -1").proposal and len(asked) == 1
    assert not approve("sed -i s/1/2/ src/a.py && git log -1").proposal and len(asked) == 2


def test_landing_never_writes_through_a_hard_link_of_the_tree(tree: Path, tmp_path: Path, propose: Proposer) -> None:
    """A tree file with another name (a hard link outside the repository) is replaced, not written
    through: the other name keeps its bytes."""
    other = tmp_path / "other-name.py"
    os.link(tree / "src" / "a.py", other)
    proposal = propose("echo changed > src/a.py")
    assert land(proposal).ok
    if propose.in_place:  # run then undo: the command itself wrote through the link, as a direct run does (docs/APPROVALS.md)
        assert (tree / "src" / "a.py").read_text() == "changed\n" and other.read_text() == "changed\n"
        return
    assert (tree / "src" / "a.py").read_text() == "changed\n" and other.read_text() == "x = 1\n"


def test_a_session_folder_with_a_comma_or_colon_still_gets_its_view(tree: Path, tmp_path: Path, propose: Proposer) -> None:
    """The overlay's options hold the layer folder's path, where ``,`` ends an option and ``:`` a
    layer: such a folder is made in the system's temp folder instead, and the command runs."""
    propose.runner.layers_parent = tmp_path / "state, with: odd=chars"
    proposal = propose("echo y > src/a.py")
    assert not proposal.failed and [e.describe() for e in proposal.effects] == ["modified src/a.py"]
    assert str(proposal.layers.folder).startswith(tempfile.gettempdir())
    proposal.discard()


def test_a_new_ignored_tree_is_one_judgement_and_one_group_line(tree: Path, propose: Proposer) -> None:
    """``npm install``-like: thousands of new files in an ignored folder take the folder's verdict
    (what runs later, and what a stricter rule names, are still judged one by one), and the
    modal shows them as one line per folder with counts."""
    from frogtui.approval import Question
    from frogtui.protocol import ApprovalRequest, ToolCall
    from frogtui.ui.asking import proposal_view

    engine = engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "*.key"\ndecision = "deny"\n')
    proposal = propose("mkdir -p .cache/pkg/lib && for i in $(seq 1 1500); do echo $i > .cache/pkg/lib/m$i.js; done;"
                       " printf '#!/bin/sh\\n' > .cache/pkg/run.sh; echo y > src/a.py")
    judged = judge(engine, proposal, "policy")
    verdicts = {j.effect.path: (j.verdict, j.rule) for j in judged}
    assert verdicts[".cache/pkg/lib/m777.js"] == ("allow", "ignored by git (a cache or build output)")
    assert verdicts[".cache/pkg/run.sh"] == ("ask", "Write: ask (default)"), "a script is judged on its own"
    assert verdicts["src/a.py"] == ("ask", "Write: ask (default)")
    call = ToolCall(id="c", name="Bash", arguments={"command": "x"})
    question = Question(ApprovalRequest(call=call, step=1, root=str(tree)), proposals.question_decision(judged),
                        proposal=proposal, judged=tuple(judged))
    effects, _output, unlisted = proposal_view(question)
    lines = [line for _path, line, _diff in effects]
    assert lines == [
        "added .cache/pkg/run.sh: needs a person (Write: ask (default))",
        "modified src/a.py: needs a person (Write: ask (default))",
        ".cache/: 1503 ignored path(s) changed (1503 allow)",
    ]
    assert len(unlisted) == len(judged) - 2
    strict = engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "m7*.js"\ndecision = "deny"\n')
    assert overall(judge(strict, proposal, "all")) == "deny", "a stricter rule still names a file in the new tree"


def test_under_approve_edits_a_commands_effects_are_judged_as_under_policy(tree: Path, propose: Proposer) -> None:
    """``edits`` lets a Write or Edit the default would ask about run; Bash stays as under
    ``policy``: a command's effects on files no rule allows do not land headless."""
    from frogtui.approval import Approver
    from frogtui.protocol import ApprovalRequest, ToolCall

    call = ToolCall(id="c", name="Bash", arguments={"command": "sed -i s/1/2/ src/a.py"})
    request = ApprovalRequest(call=call, step=1, root=str(tree), proposable=True)
    verdict = Approver(engine_for(tree), mode="edits").judge_proposal(request, propose("sed -i s/1/2/ src/a.py"))
    assert (verdict.decision, verdict.by) == ("deny", "mode") and "--approve edits" in verdict.reason


def test_layers_a_killed_session_left_are_removed_when_its_proposals_start_again(tree: Path, tmp_path: Path) -> None:
    left = tmp_path / "layers" / "frogtui-proposal-abc" / "upper"
    left.mkdir(parents=True)
    (left / "copy-of-a-file").write_text("x")
    Proposer(tree, tmp_path)
    assert not left.parent.exists()


def test_a_write_through_a_link_is_judged_where_it_lands(tree: Path, propose: Proposer) -> None:
    """``src/docs-link -> ../docs``: a command that writes ``src/docs-link/new.md`` wrote
    ``docs/new.md``, and that is the path the Write rules judge (``src/**`` does not allow it)."""
    (tree / "src" / "docs-link").symlink_to("../docs")
    engine = engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n')
    judged = judge(engine, propose("echo x > src/docs-link/new.md"), "policy")
    assert [(j.effect.describe(), j.verdict) for j in judged] == [("added docs/new.md", "ask")]


def test_a_file_that_became_a_folder_and_a_folder_that_became_a_link_land(tree: Path, propose: Proposer) -> None:
    """A change of kind is one effect on its path (the old entry replaced: a folder's files named),
    and a new file in a new folder another; landing both is not stale: the folder above the new
    file is a file in the tree only until the first lands."""
    proposal = propose("rm docs/b.md && mkdir docs/b.md && echo x > docs/b.md/inner && rm -r src/d && ln -s a.py src/d")
    assert "added docs/b.md/inner" in lines(proposal)
    assert "modified src/d -> a.py (was a folder with 3 file(s): gone.txt, keep.txt, sub/deep.txt)" in lines(proposal)
    landed = land(proposal)
    assert landed.ok, landed
    assert (tree / "docs" / "b.md" / "inner").read_text() == "x\n" and (tree / "src" / "d").readlink() == Path("a.py")


VERDICT_COMMAND = (
    "mkdir -p src/new/inner && echo x > src/new/inner/f.py && echo k > src/new/k.pem && printf '#!/bin/sh\\n' > src/new/run.sh;"
    " echo 'repos: []' > .pre-commit-config.yaml; ln -s ../../outside src/escape; ln -s a.py src/inlink;"
    " mkdir -p .cache && echo d > .cache/x; mkdir -p .venv/bin && touch .venv/pyvenv.cfg && echo '#!/bin/sh' > .venv/bin/tool;"
    " chmod +x src/a.py; rm docs/b.md; echo y > docs/new.md; mkfifo src/fifo; echo z > src/d/keep.txt;"
    " mkdir -p __pycache__ && echo b > __pycache__/m.cpython-311.pyc; echo q > src/docs-link/via.md"
)
VERDICT_RULES = ('[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n'
                 '[[rules]]\ntool = "Write"\nmatch = "*.pem"\ndecision = "deny"\n'
                 '[[rules]]\ntool = "Write"\nmatch = "docs/*.md"\ndecision = "ask"\n')


def test_verdicts_for_each_kind_of_effect_are_pinned(tree: Path, propose: Proposer) -> None:
    """Every verdict and rule for one command that makes each kind of effect (a new folder with a
    file a deny rule names and a script in it, a control file, links out and in, ignored paths with
    a program among them, a mode change, a deletion, a FIFO, bytecode, a write through a link),
    under two rule sets: what any speed-up of the judgement must leave as it is."""
    (tree / "src" / "docs-link").symlink_to("../docs")
    proposal = propose(VERDICT_COMMAND)
    mixed = judge(engine_for(tree, VERDICT_RULES), proposal, "policy")
    fifo = [] if propose.in_place else [("src/fifo", "skip", "not carried over")]  # run then undo: git does not see a FIFO
    assert [(j.effect.path, j.verdict, j.rule) for j in mixed] == [
        (".cache", "allow", "ignored by git (a cache or build output)"),
        (".cache/x", "allow", "ignored by git (a cache or build output)"),
        (".pre-commit-config.yaml", "ask", "Write: ask (default)"),
        (".venv", "allow", "ignored by git (a cache or build output)"),
        (".venv/bin", "allow", "ignored by git (a cache or build output)"),
        (".venv/bin/tool", "ask", "Write: ask (default)"),
        (".venv/pyvenv.cfg", "allow", "ignored by git (a cache or build output)"),
        ("__pycache__", "allow", "ignored by git (a cache or build output)"),
        ("__pycache__/m.cpython-311.pyc", "skip", "not carried over"),
        ("docs/b.md", "ask", "Write: docs/*.md"),
        ("docs/new.md", "ask", "Write: docs/*.md"),
        ("docs/via.md", "ask", "Write: docs/*.md"),
        ("src/a.py", "allow", "Write: src/**"),
        ("src/d/keep.txt", "allow", "Write: src/**"),
        ("src/escape", "ask", "link out of the repository"),
        *fifo,
        ("src/inlink", "allow", "Write: src/**"),
        ("src/new", "allow", "Write: src/**"),
        ("src/new/inner", "allow", "Write: src/**"),
        ("src/new/inner/f.py", "allow", "Write: src/**"),
        ("src/new/k.pem", "deny", "Write: *.pem"),
        ("src/new/run.sh", "allow", "Write: src/**"),
    ]
    everything = judge(engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "**"\ndecision = "allow"\n'), proposal, "policy")
    asked = [(j.effect.path, j.verdict, j.rule) for j in everything if j.verdict != "allow"]
    assert asked == [
        (".pre-commit-config.yaml", "ask", "control file"),
        ("__pycache__/m.cpython-311.pyc", "skip", "not carried over"),
        ("src/escape", "ask", "link out of the repository"),
        *fifo,
    ]
    runs_later = {j.effect.path: j.effect.runs_later for j in everything if j.effect.runs_later}
    assert set(runs_later) == {".pre-commit-config.yaml", ".venv/bin/tool", "__pycache__/m.cpython-311.pyc", "src/a.py", "src/new/run.sh"}
    assert [j.verdict for j in judge(engine_for(tree), proposal, "all")].count("allow") == 20


def test_an_upper_layer_past_the_entry_cap_is_incomplete_and_nothing_of_it_lands(tree: Path, propose: Proposer) -> None:
    """The reader reads at most ``max_entries`` upper-layer entries (here a handful, in place of
    500,000): exactly that many is complete; one more and the effects are incomplete, every one
    is denied, and the gate denies the proposal under every mode, also when not one effect was
    read before the cap (the upper layer's first entries were folders the tree has)."""
    from frogtui.approval import Approver
    from frogtui.protocol import ApprovalRequest, ToolCall

    command = "touch src/n1 src/n2 src/n3 && echo y > src/a.py"  # upper: src, src/a.py, src/n1, src/n2, src/n3
    propose.runner.max_entries = 5
    exact = propose(command)
    assert exact.effects.complete and len(exact.effects) == 4
    propose.runner.max_entries = 4
    cut = propose(command)
    assert not cut.effects.complete and cut.effects.limit == 4 and len(cut.effects) == 3
    engine = engine_for(tree, '[[rules]]\ntool = "Write"\nmatch = "**"\ndecision = "allow"\n')
    assert {(j.verdict, j.rule) for j in judge(engine, cut, "all")} == {("deny", "too large to review")}
    propose.runner.max_entries = 1
    empty = propose(command)
    assert not empty.effects.complete and empty.effects.items == ()
    request = ApprovalRequest(call=ToolCall(id="c", name="Bash", arguments={"command": command}), step=1, root=str(tree),
                              proposable=True)
    for mode in ("policy", "all"):
        for proposal in (cut, empty):
            verdict = Approver(engine, mode=mode).judge_proposal(request, proposal)
            assert (verdict.decision, verdict.rule, verdict.accepted) == ("deny", "too large to review", None)
            assert f"more than {proposal.effects.limit:,} files and folders" in verdict.reason
    assert (tree / "src" / "a.py").read_text() == "x = 1\n" and not (tree / "src" / "n1").exists()


def test_a_layer_folder_that_cannot_be_removed_is_left_quietly_for_the_next_sweep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer folder is removed on a thread of its own; a file there that cannot be removed
    (``chattr +i``, a full disk, an I/O error) raised on that thread: a traceback on stderr, over the
    app's screen. It is left as ``…-discarded``, which the next ``ProposalRunner`` sweeps."""
    from frogtui.tools.proposals import Layers

    if subprocess.run(["chattr", "-V"], capture_output=True, check=False).returncode not in (0, 1):
        pytest.skip("no chattr")
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    tree = tmp_path / "tree"
    tree.mkdir()
    layers = Layers.make(tmp_path / "layers", tree)
    stuck = layers.upper / "stuck"
    stuck.write_text("x")
    if subprocess.run(["chattr", "+i", str(stuck)], capture_output=True, check=False).returncode != 0:
        pytest.skip("this file system has no immutable flag")
    try:
        layers.remove()
        for thread in threading.enumerate():
            if thread.name == "frogtui-discard-layers":
                thread.join(10)
        assert died == [], [f"{d.exc_type.__name__}: {d.exc_value}" for d in died]
        (left,) = (tmp_path / "layers").iterdir()
        assert left.name.endswith("-discarded")
    finally:
        for found in (tmp_path / "layers").rglob("stuck"):
            subprocess.run(["chattr", "-i", str(found)], check=False)
