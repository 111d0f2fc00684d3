"""Red-team pass on issue 31's proposals (q4): a hostile model's commands run as proposals on the
real copy-on-write view (kernel overlayfs in a user namespace, bubblewrap on it), through the
runner and the judge, and headless through ``frogtui run`` with a replay model and a real git
repository. Outcomes are judged (what reached the tree, what landed unasked, whether the run
survived), not the wording. The attacks that held are pinned here too; the list with each result
is in docs/APPROVALS.md."""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import git as gitpython
import pytest

from frogtui.approval.proposals import judge, overall
from frogtui.cli import main
from frogtui.config import config_dir
from frogtui.tools.effects import Effect, Entry
from frogtui.tools.landing import land
from frogtui.tools.proposals import remove_tree
from frogtui.vcs.ignored import ignored_among
from tests.approval.test_proposals import Proposer, engine_for
from tests.overlay import WAYS, needs_overlay
from tests.support import git, turn, write_replay, xml_call

pytestmark = needs_overlay
SRC_ALLOWED = '[[rules]]\ntool = "Write"\nmatch = "src/**"\ndecision = "allow"\n'


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "d" / "sub").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "src" / "d" / "keep.txt").write_text("keep\n")
    (root / "src" / "d" / "link").symlink_to("keep.txt")
    (root / "src" / "d" / "sub" / "deep.txt").write_text("deep\n")
    (root / "docs").mkdir()
    (root / "docs" / "b.md").write_text("# b\n")
    (root / ".env").write_text("API_KEY=only-copy\n")
    (root / "data").mkdir()
    (root / "data" / "local.db").write_text("rows\n")
    (root / ".gitignore").write_text(".env\ndata/\n.cache/\n__pycache__/\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")
    return root


@pytest.fixture(params=WAYS)
def propose(tree: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Proposer:
    """The runner as a session makes it, on each way a proposal runs (``tests.overlay.WAYS``):
    git's own answer for the ignored paths (``vcs.ignored``)."""
    proposer = Proposer(tree, tmp_path, request.param)
    repo = gitpython.Repo(tree)
    proposer.runner.ignored = lambda paths: ignored_among(repo, list(paths))
    return proposer


def on_a_view(propose: Proposer) -> None:
    """Skip on the ``undo`` way: it runs the command on the tree itself and puts back what git
    sees (what it does not, an xattr, a FIFO, an empty folder, stays: docs/APPROVALS.md)."""
    if propose.in_place:
        pytest.skip("the undo way runs the command on the tree: what git does not see stays (by design)")


def run_headless(repo: Path, commands: list[str], mode: str = "policy") -> tuple[int, dict]:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "rules.toml").write_text(SRC_ALLOWED)
    turns = [turn(f"step {n}", xml_call("Bash", command=c)) for n, c in enumerate(commands)] + [turn("done", answer="done")]
    replay = write_replay(repo.parent / "replay.jsonl", turns)
    trajectory = repo.parent / "trajectory.json"
    code = main(["run", "go", "--repo", str(repo), "--model", f"replay:{replay}", "--approve", mode, "--trajectory", str(trajectory)])
    return code, json.loads(trajectory.read_text())


def verdicts(tree: Path, proposal, mode: str = "policy") -> dict[str, tuple[str, str]]:
    return {j.effect.path: (j.verdict, j.rule) for j in judge(engine_for(tree, SRC_ALLOWED), proposal, mode)}


# ignored paths ----------------------------------------------------------------------------------
def test_git_tells_a_proposal_which_paths_it_ignores(tree: Path) -> None:
    """``git check-ignore`` refuses every pathspec magic, ``literal`` too: with
    GIT_LITERAL_PATHSPECS it failed for every path, so a session never told a cache apart (every
    ``.cache`` write needed a person). A name that reads as magic (``:(exclude)``) is a name."""
    repo = gitpython.Repo(tree)
    names = [".env", "data/local.db", ".cache/x", "src/a.py", ":(exclude)x", ".cache/a\nb", ".cache/\udcffbad", "*"]
    assert ignored_among(repo, names) == {".env", "data/local.db", ".cache/x", ".cache/a\nb", ".cache/\udcffbad"}


def test_a_cache_lands_headless_without_a_question(tree: Path) -> None:
    code, trajectory = run_headless(tree, ["mkdir -p .cache && echo x > .cache/y"])
    assert code == 0
    assert (tree / ".cache" / "y").read_text() == "x\n"
    (approval,) = [a for s in trajectory["steps"] for a in s["approvals"]]
    assert approval["decision"] == "allow" and "ignored by git" in approval["rule"]


@pytest.mark.parametrize("command", ["rm .env", "echo API_KEY=attacker > .env", "rm -r data", "mv .env .env.bak",
                                     "echo x >> data/local.db"])
def test_an_ignored_file_no_checkpoint_holds_is_never_lost_unasked(tree: Path, propose: Proposer, command: str) -> None:
    """An ignored file that is not a cache (``.env``, a local database) is in no checkpoint: undo
    cannot bring it back. Deleting or changing it landed as "a cache or build output"."""
    proposal = propose(command)
    found = verdicts(tree, proposal)
    assert all(v != "allow" for v, _rule in found.values()), found
    if propose.in_place:  # the undo way deleted or changed it for real: said, never silent
        assert proposal.not_undone or found, "an ignored file lost on the undo way is named"
    else:
        assert found, "a view shows the change"


def test_an_ignored_cache_may_be_deleted_or_rewritten_unasked(tree: Path, propose: Proposer) -> None:
    (tree / "__pycache__").mkdir()
    (tree / "__pycache__" / "notes.txt").write_text("old\n")
    proposal = propose("rm -r __pycache__ && mkdir -p .cache && echo new > .cache/n && echo fresh > .env.new")
    found = verdicts(tree, proposal)
    assert found[".cache/n"][0] == "allow"
    if propose.in_place:  # the undo way: the cache is gone for real, named as not put back
        assert "__pycache__/notes.txt" in proposal.not_undone
    else:
        assert found["__pycache__"][0] == "allow"


def test_an_ignored_file_lost_headless_is_told_not_landed(tree: Path) -> None:
    code, trajectory = run_headless(tree, ["rm .env"])
    assert code == 0 and (tree / ".env").read_text() == "API_KEY=only-copy\n"
    (seen,) = [o["observation"] for s in trajectory["steps"] for o in s["observations"]]
    assert seen.startswith("PermissionError") and "deleted .env" in seen


# renames ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("change", ["ln -sfn /root/.ssh src/e/link", "chmod +x src/e/keep.txt", "ln -sfn ../../../etc src/e/link"])
def test_a_renamed_folder_hides_no_change_inside_it(tree: Path, propose: Proposer, change: str) -> None:
    """``mv src/d src/e`` then a link inside retargeted out of the repository, or a file made
    executable: the folder was paired into one "renamed" effect by names and file contents only,
    allowed by ``src/**``, and the link out or the program landed without a question."""
    proposal = propose(f"mv src/d src/e && {change}")
    found = verdicts(tree, proposal)
    described = [e.describe() for e in proposal.effects]
    assert not any(e.kind == "renamed" for e in proposal.effects), described
    if "chmod" in change:  # a program where ``src/**`` is allowed lands (the person's rule), named as one
        assert found["src/e/keep.txt"][0] == "allow" and "added src/e/keep.txt (mode 755)" in described
        assert next(e for e in proposal.effects if e.path == "src/e/keep.txt").runs_later == "executable"
    else:
        assert found["src/e/link"] == ("ask", "link out of the repository")


def test_a_renamed_file_that_changed_mode_is_not_a_plain_rename(tree: Path, propose: Proposer) -> None:
    proposal = propose("mv src/a.py src/b.py && chmod +x src/b.py")
    assert "755" in " ".join(e.describe() for e in proposal.effects)


def test_an_unchanged_folder_rename_is_still_one_effect(tree: Path, propose: Proposer) -> None:
    proposal = propose("mv src/d src/e")
    assert [e.describe() for e in proposal.effects] == ["renamed src/d/ -> src/e/ (3 file(s))"]
    assert land(proposal).ok and os.readlink(tree / "src" / "e" / "link") == "keep.txt"


# names, sizes, depth ----------------------------------------------------------------------------
def test_a_long_name_lands(tree: Path, propose: Proposer) -> None:
    """The landing's temporary name was ``.NAME.frogtui-landing``: over NAME_MAX for a long name,
    the landing stopped part way (``File name too long``) after the effects before it."""
    name = "n" * 250  # fuse-overlayfs makes no name of 255 (its own limit: the command is told "File name too long")
    proposal = propose(f"rm docs/b.md; echo x > src/{name}")
    landed = land(proposal)
    assert landed.ok, landed.error
    assert (tree / "src" / name).read_text() == "x\n"


@pytest.mark.parametrize(("name", "depth"), [("a", 700), ("d" * 200, 20)], ids=["700-deep", "past-PATH_MAX"])
def test_a_deep_tree_is_too_large_to_review_not_a_crash(tree: Path, propose: Proposer, name: str, depth: int) -> None:
    """700 nested folders overflowed the reader's recursion (RecursionError: the run died); 20
    folders of 200 letters made a path longer than PATH_MAX (OSError out of the runner, its
    layer folder left behind). Removing the layer folder recursed too."""
    on_a_view(propose)
    path = "/".join([name] * depth)
    proposal = propose(f"mkdir -p src/{path} && echo made")
    assert "made" in proposal.result.observation
    assert not proposal.effects.complete and "nested deeper" in proposal.effects.why or "longer than" in proposal.effects.why
    assert overall(judge(engine_for(tree, SRC_ALLOWED), proposal, "all")) == "deny"
    proposal.discard()
    assert not (tree / "src" / "a").exists()


@pytest.fixture
def deep_tree(tree: Path) -> Iterator[Callable[[Path, int], None]]:
    """Makes ``top/a/a/…/f``, ``depth`` folders (through descriptors: past PATH_MAX too), as the
    Write tool or a person could leave it; removed after the test (pytest's own clean-up recurses)."""
    yield _deep_tree
    remove_tree(tree / "src" / "a")


def _deep_tree(top: Path, depth: int) -> None:
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("a", dir_fd=fd)
        inner = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    os.close(fd)


def test_a_deleted_tree_deeper_than_frogtui_lists_is_too_large_to_review(tree: Path, tmp_path: Path, deep_tree) -> None:
    """The upper layer of ``rm -rf src/a`` (a whiteout) against a tree 1,500 deep: listing its
    files (``os.walk``) overflowed Python's recursion; a proposal with no effect read was then
    "allowed: it changed nothing" (the deletion silently not applied)."""
    from frogtui.approval import Approver
    from frogtui.protocol import ApprovalRequest, ToolCall
    from frogtui.tools.bash import BashResult
    from frogtui.tools.effects import read_effects
    from frogtui.tools.proposals import Layers, Proposal

    deep_tree(tree / "src", 1500)
    layers = Layers.make(tmp_path / "layers", tree)
    (layers.upper / "src").mkdir()
    os.mknod(layers.upper / "src" / "a", 0o600 | 0o020000, 0)  # what the kernel leaves for a deletion
    effects = read_effects(layers.upper, tree)
    assert not effects.complete and "src/a/" in effects.why
    proposal = Proposal("rm -rf src/a", BashResult("Exit code: 0\n", 0), effects, layers, 0)
    call = ToolCall(id="c", name="Bash", arguments={"command": "rm -rf src/a"})
    verdict = Approver(engine_for(tree), mode="all").judge_proposal(ApprovalRequest(call=call, step=1, root=str(tree), proposable=True),
                                                                    proposal)
    assert verdict.decision == "deny" and "more than frogtui reads to review" in verdict.reason and "src/a/" in verdict.reason


@pytest.mark.slow
def test_deleting_a_tree_deeper_than_frogtui_lists_lands_nothing_and_says_so(tree: Path, deep_tree) -> None:
    """The same through ``frogtui run`` (slow: ``rm -rf`` on the view makes 1,500 whiteouts):
    the run died; now nothing lands and the model is told why."""
    deep_tree(tree / "src", 1500)
    code, trajectory = run_headless(tree, ["rm -rf src/a; echo removed"], mode="all")
    assert code == 0 and (tree / "src" / "a" / "a").is_dir()
    (seen,) = [o["observation"] for s in trajectory["steps"] for o in s["observations"]]
    assert seen.startswith("PermissionError") and "more than frogtui reads to review" in seen and "src/a/" in seen, seen


def test_a_sparse_file_lands_sparse(tree: Path, propose: Proposer) -> None:
    """``truncate -s 10G``: the upper layer holds no data, the landing wrote 10 GB of zeros into
    the tree (minutes, and the disk)."""
    if propose.in_place:
        pytest.skip("the undo way hashes the whole file into git to put the tree back: 155 s for 10 GB (left to that way)")
    proposal = propose("truncate -s 10G src/big && printf end >> src/big")
    assert land(proposal).ok
    st = os.stat(tree / "src" / "big")
    assert st.st_size == (10 << 30) + 3
    assert st.st_blocks * 512 < 1 << 20, "landed as data, not as holes"
    with open(tree / "src" / "big", "rb") as handle:
        handle.seek(10 << 30)
        assert handle.read() == b"end"


@pytest.mark.parametrize("name", ["x\n- deleted b.md: allowed (Write: src)", "\x1b[2J\x1b]52;c;cHduZWQ=\x07", "\udcff\udcfe",
                                  "a\u202eexe.py"], ids=["newline", "escapes", "not-utf8", "bidi"])
def test_an_odd_name_is_drawn_one_line_and_visible(tree: Path, propose: Proposer, name: str) -> None:
    """A name with a newline drew a second, made-up effect line in the modal, the ACP request and
    what the model is told; control characters reached them raw; a byte that is not UTF-8 was
    a lone surrogate."""
    escaped = "".join(f"\\x{b:02x}" for b in os.fsencode(f"src/{name}"))
    proposal = propose(f"touch \"$(printf '{escaped}')\"; ln -s \"$(printf '{escaped}')\" src/l")
    lines = [e.describe() for e in proposal.effects]
    assert len(lines) == 2, lines
    for line in lines:
        assert line.isprintable() and line.encode("utf-8"), line


def test_an_effect_line_marks_what_it_cannot_draw() -> None:
    effect = Effect("added", "src/a\nb\udcff", None, Entry("link", 0o777, 3, "\x1b[2J"))
    assert effect.describe() == "added src/a␊b⟨xFF⟩ -> ␛[2J"


def test_bytes_that_are_not_utf8_never_end_the_run(tree: Path) -> None:
    """A command that leaves a byte that is not UTF-8 in a text file or a link's target: the
    run's patch holds it (read with surrogateescape), and the session's journal could not write
    it (UnicodeEncodeError: ``frogtui run`` died with a traceback)."""
    code, trajectory = run_headless(tree, ["printf 'a\\xffb\\n' > src/f; ln -s \"$(printf '\\xfe')\" src/l"], mode="all")
    assert code == 0
    assert (tree / "src" / "f").read_bytes() == b"a\xffb\n"
    patch = trajectory["output_patch"]
    assert "+a\udcffb" in patch, "the patch keeps the byte (surrogateescape), as git apply needs it"
    (journal,) = Path(os.environ["XDG_STATE_HOME"]).glob("frogtui/sessions/*/trajectory.jsonl")
    from frogtui.agent.journal import rebuild

    rebuilt = rebuild(journal)
    assert rebuilt is not None and rebuilt["output_patch"] == patch, "the journal gives the same patch back"


# attacks that held -------------------------------------------------------------------------------
def test_processes_that_detach_never_write_after_the_effects_were_read(tree: Path, propose: Proposer) -> None:
    proposal = propose("setsid nohup sh -c 'sleep 0.3; echo late > src/late' >/dev/null 2>&1 & "
                       "(sh -c 'sleep 0.3; echo late2 > src/late2' &) ; disown -a; echo gone")
    assert "gone" in proposal.result.observation
    import time

    time.sleep(0.5)
    assert not (proposal.upper / "src" / "late").exists() and not (proposal.upper / "src" / "late2").exists()
    assert not (tree / "src" / "late").exists()


def test_no_way_from_the_view_to_the_tree_under_it(tree: Path, propose: Proposer) -> None:
    """No inherited descriptor of the tree (``/proc/self/fd``), no new user namespace to unmount
    the overlay in, no ``.git`` write (hooks, config, index), no forged overlay xattr, no file
    capability; the tree stays as it was."""
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    proposal = propose(
        "ls -l /proc/self/fd; for fd in /proc/self/fd/*; do echo pwned > $fd/../src/a.py; done 2>/dev/null;"
        " unshare -rm sh -c 'umount -l \"$PWD\" && echo pwned > src/a.py';"
        " echo x > .git/hooks/pre-commit; echo '[core]' >> .git/config; echo x > .git/index; ln .git/config src/cfg;"
        " python3 -c \"import os\nfor n in ('user.overlay.redirect', 'user.overlay.metacopy', 'trusted.overlay.opaque',"
        " 'security.capability'):\n  try: os.setxattr('src/d', n, b'/docs')\n  except OSError: pass\";"
        " echo done"
    )
    assert "done" in proposal.result.observation
    assert [e.describe() for e in proposal.effects] == [], "nothing but what a command may do through the view"
    assert land(proposal).ok
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before


def test_xattrs_are_never_carried_over(tree: Path, propose: Proposer) -> None:
    on_a_view(propose)
    proposal = propose("python3 -c \"import os; open('src/n.py', 'w').write('n'); os.setxattr('src/n.py', 'user.mime_type', b'x');"
                       " os.setxattr('src/a.py', 'user.x', b'y')\"")
    assert [e.describe() for e in proposal.effects] == ["added src/n.py"], "an xattr alone is no change"
    assert land(proposal).ok
    assert os.listxattr(tree / "src" / "n.py") == [] and os.listxattr(tree / "src" / "a.py") == []


def test_a_whiteout_or_device_the_command_makes_is_refused(tree: Path, propose: Proposer) -> None:
    on_a_view(propose)
    proposal = propose("python3 -c \"import os; os.mknod('src/wh', 0o20644, 0)\"; mknod src/null c 1 3; mkfifo src/p; echo done")
    assert "done" in proposal.result.observation
    assert [e.describe() for e in proposal.effects] == ["src/p: a FIFO or socket (not carried over)"]
    assert land(proposal).ok and not (tree / "src" / "p").exists()


def test_a_link_out_landed_by_all_is_never_followed_later(tree: Path, tmp_path: Path) -> None:
    """``--approve all`` lands a link out of the repository (asked otherwise); a later command
    writing through it writes nothing outside, and a later Write through it is judged where it
    lands."""
    outside = tmp_path / "outside"
    outside.mkdir()
    code, trajectory = run_headless(tree, [f"ln -s {outside} src/out && ln -s ../.. src/up",
                                           "echo x > src/out/f; echo x > src/up/escape; echo tried"], mode="all")
    assert code == 0 and os.readlink(tree / "src" / "out") == str(outside)
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape").exists()


def test_a_folder_replaced_by_a_link_out_is_asked(tree: Path, tmp_path: Path, propose: Proposer) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    proposal = propose(f"rm -r src/d && ln -s {outside} src/d")
    assert [e.describe() for e in proposal.effects] == [
        f"modified src/d -> {outside} (was a folder with 3 file(s): keep.txt, link, sub/deep.txt)"]
    assert verdicts(tree, proposal)["src/d"] == ("ask", "link out of the repository")


@pytest.mark.parametrize("replacement", ["echo x > src/d", "ln -s ../docs src/d"])
def test_a_folder_replaced_by_a_file_is_one_effect_with_its_files_named(tree: Path, propose: Proposer, replacement: str) -> None:
    """A folder replaced by a file or a link was two effects on one path (``deleted src/d/`` and
    ``added src/d``): the modal ticks effects by path, so a person who unticked the deletion
    still had it land with the addition."""
    proposal = propose(f"rm -r src/d && {replacement}")
    paths = [e.path for e in proposal.effects]
    assert paths == ["src/d"], [e.describe() for e in proposal.effects]
    assert "was a folder with 3 file(s): keep.txt, link, sub/deep.txt" in proposal.effects.items[0].describe()
    (tree / "src" / "d" / "new.txt").write_text("the person's\n")
    assert land(proposal).stale, "a file put in the folder meanwhile is never deleted unseen"
    (tree / "src" / "d" / "new.txt").unlink()
    assert land(proposal).ok
    assert (tree / "src" / "d").is_symlink() if "ln" in replacement else (tree / "src" / "d").read_text() == "x\n"


def test_a_file_ticked_in_a_new_folder_left_unticked_lands_with_the_folder(tree: Path, propose: Proposer) -> None:
    """A person unticks ``added src/new/`` and keeps the file in it: the landing deleted what came
    first, then stopped part way (``a folder above it is not a folder of the tree``)."""
    proposal = propose("rm docs/b.md; mkdir -p src/new/deeper; echo f > src/new/deeper/f; echo z > src/z.py")
    landed = land(proposal, accepted=("docs/b.md", "src/new/deeper/f", "src/z.py"))
    assert landed.ok, landed.error
    assert (tree / "src" / "new" / "deeper" / "f").read_text() == "f\n" and (tree / "src" / "z.py").exists()


def test_a_hard_link_out_of_the_view_is_refused(tree: Path, tmp_path: Path, propose: Proposer) -> None:
    proposal = propose("ln /etc/hostname src/h; ln /etc/passwd src/p; echo done")
    assert "done" in proposal.result.observation and list(proposal.effects) == []


def test_the_modal_and_the_acp_request_draw_an_odd_name_safely(tree: Path, propose: Proposer) -> None:
    """The modal's diff header (``FileDiff.path``) held the raw name: a byte that is not UTF-8
    as a lone surrogate, which no terminal can be written."""
    from frogtui.acp.updates import proposal_content
    from frogtui.approval import Question, proposals
    from frogtui.protocol import ApprovalRequest, ToolCall
    from frogtui.ui.asking import proposal_view
    from frogtui.ui.diffmodel import FileDiff

    Path(os.fsdecode(bytes(tree / "src") + b"/old\xff\nname")).write_text("old text\n")  # a deletion: drawn as a FileDiff
    proposal = propose("printf 'text\\n' > \"src/$(printf 'bad\\xff\\nname')\"; rm src/old*")
    judged = judge(engine_for(tree), proposal, "policy")
    call = ToolCall(id="c", name="Bash", arguments={"command": "x"})
    question = Question(ApprovalRequest(call=call, step=1, root=str(tree)), proposals.question_decision(judged),
                        proposal=proposal, judged=tuple(judged))
    effects, _output, _unlisted = proposal_view(question)
    assert len(effects) == 2
    for _path, line, diff in effects:
        assert diff is not None and line.isprintable() and "␊" in line
        if isinstance(diff, FileDiff):  # a change taken as hunks (``ProposalHunks``) draws no name: its rows are the review's
            assert diff.header.isprintable() and "⟨xFF⟩" in diff.header
    assert any(isinstance(diff, FileDiff) for _path, _line, diff in effects)
    items, _complete = proposal_content(proposal, judged)
    texts = [item.content.text for item in items if getattr(item, "type", "") == "content"]
    assert len(texts) == 3 and all(text.isprintable() for text in texts), texts
