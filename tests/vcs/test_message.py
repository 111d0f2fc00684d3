"""Commit messages drafted by a (replay) model, shaped to git's conventions, with a fallback;
and headless ``frogtui run --commit``."""
from __future__ import annotations

import io
from pathlib import Path

from frogtui.config import Config
from frogtui.headless import build_parser, run_task
from frogtui.models.replay import ReplayModel
from frogtui.vcs.message import SUBJECT_MAX, draft_commit_message, shape_message, strip_reasoning, summary_message
from tests.support import SlowModel, turn, write_replay, xml_call
from tests.vcs.cases import git

DIFF = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
)


class FailingModel:
    name = "failing"
    context_size = None
    opens_reasoning = False

    def stream_turn(self, messages, tools, *, max_tokens, cancel):
        from frogtui.errors import ModelError

        raise ModelError("server went away")
        yield  # pragma: no cover

    def close(self) -> None:
        pass


def test_draft_strips_reasoning_and_keeps_subject_and_body(tmp_path: Path) -> None:
    model = ReplayModel(
        write_replay(
            tmp_path / "m.jsonl", ["The diff flips a sign.\n</think>\n\nFix add to return the sum\n\nadd subtracted its arguments."]
        )
    )
    message = draft_commit_message(model, DIFF)
    assert message == "Fix add to return the sum\n\nadd subtracted its arguments."


def test_long_subject_is_cut_and_kept_in_the_body() -> None:
    long = "Make the adder return the sum of both of its arguments instead of their difference everywhere"
    shaped = shape_message(f"```\nSubject: {long}.\n```")
    subject, blank, body = shaped.split("\n", 2)
    assert len(subject) <= SUBJECT_MAX and long.startswith(subject) and blank == "" and body == long


def test_subject_alone_gets_a_body_and_failures_fall_back(tmp_path: Path) -> None:
    model = ReplayModel(write_replay(tmp_path / "m.jsonl", ["ok\n</think>\nFix add"]))
    assert draft_commit_message(model, DIFF) == "Fix add\n\n- calc.py: +1 -1"
    assert draft_commit_message(FailingModel(), DIFF) == summary_message(DIFF) == "Update calc.py\n\n- calc.py: +1 -1"
    unfinished = ReplayModel(write_replay(tmp_path / "u.jsonl", ["still thinking about it"]))
    assert draft_commit_message(unfinished, DIFF) == summary_message(DIFF)
    assert strip_reasoning("<think>hmm</think>Answer", opens_reasoning=False) == "Answer"


def test_headless_commit(py_repo: Path, tmp_path: Path) -> None:
    (py_repo / "mine.txt").write_text("the person's own untracked file\n")
    replay = write_replay(
        tmp_path / "run.jsonl",
        [
            turn("fix it", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
            turn("done", answer="Fixed."),
            "Commit message now.\n</think>\nFix the sign in add\n\nadd now returns a + b.",
        ],
    )
    args = build_parser().parse_args(["fix", "--commit", "--approve", "all"])
    assert args.commit
    err = io.StringIO()
    code = run_task("fix add", Config(repo=py_repo, approve="all"), ReplayModel(replay), stderr=err, stdout=io.StringIO(), commit=True)
    assert code == 0, err.getvalue()
    assert "Committed" in err.getvalue()
    log = git(py_repo, "log", "-1", "--format=%B")
    assert log.startswith("Fix the sign in add\n\nadd now returns a + b.") and "Assisted-by: replay:run.jsonl via frogtui" in log
    assert git(py_repo, "show", "--name-only", "--format=", "HEAD").split() == ["calc.py"]
    assert "?? mine.txt" in git(py_repo, "status", "--porcelain")


class ToolCallingModel:
    """Answers the drafting request with a structured tool call (an OpenAI-compatible server)."""

    name = "server"
    context_size = None
    opens_reasoning = False

    def stream_turn(self, messages, tools, *, max_tokens, cancel):
        from frogtui.protocol import ToolCall, TurnEnd, Usage

        yield "Let me look first."
        yield ToolCall(id="c1", name="Glob", arguments={"pattern": "**/*.py"})
        yield TurnEnd("stop", Usage())

    def close(self) -> None:
        pass


def test_tool_call_markup_reasoning_or_an_empty_subject_fall_back_to_the_summary(tmp_path: Path) -> None:
    answers = [
        "I should look at the files.\n</think>\n" + xml_call("Glob", pattern="**/*.py"),
        "hm\n</think>\nFix add\n\n<tool_call>\n<function=Read>\n<parameter=file_path>\ncalc.py\n</parameter>\n</function>\n</tool_call>",
        "hm\n</think>\n<function=Glob>\n<parameter=pattern>\n*\n</parameter>\n</function>",
        "hm\n</think>\nOkay, the user wants a commit message. Let me read the diff.\n\nThe diff flips a sign.",
        "hm\n</think>\n<think>\nstill reasoning about it\n",
        "hm\n</think>\nSubject:\n\nadd returns the sum.",
        "hm\n</think>\n---\n\nadd returns the sum.",
        "hm\n</think>\n",
    ]
    model = ReplayModel(write_replay(tmp_path / "m.jsonl", answers))
    for answer in answers:
        assert draft_commit_message(model, DIFF) == summary_message(DIFF), answer
    assert draft_commit_message(ToolCallingModel(), DIFF) == summary_message(DIFF)


def test_reasoning_before_a_bare_think_close_is_dropped_without_an_opened_prompt() -> None:
    assert strip_reasoning("The diff flips a sign.\n</think>\nFix add", opens_reasoning=False).strip() == "Fix add"
    assert shape_message("Fix add\n\nUse `<tool_call>` markup in docs") == ""


def test_a_subject_that_is_diff_or_markup_text_falls_back_to_the_summary(tmp_path: Path) -> None:
    """Seen with a slow model: the subject ``diff --git a/NOTES.md b/NOTES.md``."""
    answers = [
        "ok\n</think>\ndiff --git a/NOTES.md b/NOTES.md\nindex 1111111..2222222 100644\n--- a/NOTES.md\n+++ b/NOTES.md\n",
        "ok\n</think>\n```diff\ndiff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n```",
        "ok\n</think>\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@",
        "ok\n</think>\n@@ -1,2 +1,2 @@ def add(a, b):",
        "ok\n</think>\nFix add ```python",
        "ok\n</think>\n<think>",
        "ok\n</think>\n<commit>Fix add</commit>",
        "ok\n</think>\n+    return a + b",
    ]
    model = ReplayModel(write_replay(tmp_path / "m.jsonl", answers))
    for answer in answers:
        assert draft_commit_message(model, DIFF) == summary_message(DIFF), answer


def test_the_summary_names_paths_from_the_repository_root() -> None:
    diff = "".join(
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x\n"
        for path in ("build/out.txt", "src/app/main.py")
    )
    subject, body = summary_message(diff).split("\n\n")
    assert subject == "Update 2 files: build/out.txt, src/app/main.py"
    assert [line.split(":")[0] for line in body.splitlines()] == ["- build/out.txt", "- src/app/main.py"]


def test_drafting_reports_progress_and_stops_when_cancelled() -> None:
    import threading
    import time

    pieces = ["Fix", " add", "\n\n", "add", " returned", " a - b."]
    seen: list[int] = []
    assert draft_commit_message(SlowModel(pieces, 0.0), DIFF, progress=seen.append) == "Fix add\n\nadd returned a - b."
    assert seen == [1, 2, 3, 4, 5, 6]
    cancel = threading.Event()
    slow = SlowModel(["Fix"] * 1000, 0.05)
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    assert draft_commit_message(slow, DIFF, cancel=cancel) == summary_message(DIFF)
    assert time.monotonic() - started < 2


def test_a_draft_is_kept_for_the_same_diff() -> None:
    from frogtui.vcs.message import Drafts

    drafts = Drafts()
    model = SlowModel(["Fix add"], 0.0)
    assert drafts.get(model, DIFF) is None
    drafts.put(model, DIFF, "Fix add")
    assert drafts.get(model, DIFF) == "Fix add"
    assert drafts.get(model, DIFF.replace("a + b", "b + a")) is None
    other = SlowModel([], 0.0)
    other.name = "another model"
    assert drafts.get(other, DIFF) is None


def test_the_trailer_names_the_model_that_ran() -> None:
    from frogtui.vcs.message import trailer_for

    assert trailer_for("Assisted-by: {model} via frogtui", SlowModel([], 0)) == "Assisted-by: slow via frogtui"

    class Gguf:
        name = "microsoft_FrogNano-4B-2609-Q4_K_M.gguf"

    class Server:
        name = "qwen3.5-4b @ http://127.0.0.1:8080/v1"

    assert trailer_for("Assisted-by: {model} via frogtui", Gguf()) == "Assisted-by: microsoft_FrogNano-4B-2609-Q4_K_M via frogtui"
    assert trailer_for("Assisted-by: {model} via frogtui", Server()) == "Assisted-by: qwen3.5-4b via frogtui"
    spec = "hf:o/FrogNano-GGUF:Q4_K_M"
    assert trailer_for("Assisted-by: {model} via frogtui", None, spec=spec) == f"Assisted-by: {spec} via frogtui"
    assert trailer_for("Reviewed-by: me", Gguf()) == "Reviewed-by: me"
