"""Complete flows through the real app, driven by Pilot, with a replay model and a real git repo."""
from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from frogtui.config import Config
from frogtui.models.replay import ReplayModel
from frogtui.protocol import TurnEnd
from frogtui.session import Session
from frogtui.ui.answer import AnswerBlock
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from frogtui.ui.chat import Notice, UserMessage
from frogtui.ui.steplog import StepLog
from frogtui.ui.trace import decision_text
from tests.support import turn, write_replay, xml_call
from tests.ui.conftest import SIZE, call_texts, fake_clock, rules_file, submit, wait_for


def tool_messages(app: FrogApp) -> list[str]:
    assert app.core.agent is not None
    return [m["content"] for m in app.core.agent.messages if m["role"] == "tool"]


FIX_AND_NOTE = [
    turn("Fix.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
    turn("Note.", xml_call("Write", file_path="NOTES.md", content="fixed add\n")),
    turn("Done.", answer="Fixed."),
]


def run_over(app: FrogApp) -> bool:
    return app.last_exit_reason is not None and not app.busy


async def test_approve_a_bash_command(make_app) -> None:
    app = make_app([turn("List the files.", xml_call("Bash", command="ls")), turn("Done.", answer="There are **two** files.")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "what is in this repo?")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        assert app.screen.query_one("#approval-command").render().plain == "ls"
        assert "sandbox" in str(app.screen.query_one("#approval-facts").render())
        assert tool_messages(app) == []  # nothing ran while the modal is open
        await pilot.press("y")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
        assert app.last_exit_reason == "agent"
        (observation,) = tool_messages(app)
        assert "calc.py" in observation and "test_calc.py" in observation
        (entry,) = app.trace.entries.values()
        assert (entry.decision, entry.by, entry.status, entry.exit_code) == ("allow", "person", "done", 0)
        await pilot.pause(0.1)
        assert "There are **two** files." in app.query(AnswerBlock).last().source
        assert [m.render().plain for m in app.query(UserMessage)] == ["what is in this repo?"]
        # the audit trail: the person's decision is in the session log and the trajectory
        log = app.session.log_path.read_text()
        assert log.count("approval step=1 tool=Bash decision=allow by=person") == 1, "one audit line, written by the gate"
        saved = json.loads(app.session.trajectory_path.read_text())
        assert saved["steps"][0]["approvals"][0]["by"] == "person"


async def test_deny_with_a_reason_reaches_the_model(make_app) -> None:
    app = make_app([
        turn("Clean up.", xml_call("Bash", command="rm -rf build")),
        turn("The user said no.", answer="Understood."),
    ])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "clean the build")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("r")
        await pilot.press(*"use git clean instead")
        await pilot.press("enter")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
        assert tool_messages(app) == ["The user denied this tool call. Reason: use git clean instead"]
        # the next turn of the model was asked with that observation as the last message
        assert app.core.agent.messages[-2] == {"role": "tool", "tool_call_id": "call_1_1", "content": tool_messages(app)[0]}
        (entry,) = app.trace.entries.values()
        assert (entry.decision, entry.by, entry.status) == ("deny", "person", "skipped")


async def test_edited_command_goes_through_the_policy_again(make_app) -> None:
    app = make_app([turn("Run tests.", xml_call("Bash", command="pytest")), turn("ok", answer="Done.")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "run the tests")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("e")
        await pilot.press("ctrl+u", *"echo edited", "enter")
        # the edited command is asked about again (the policy says ask for Bash)
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.call.arguments["command"] == "echo edited",
                       what="the second modal")
        await pilot.press("y")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
        (observation,) = tool_messages(app)
        assert observation.startswith("Note: the user edited this call before it ran")
        assert "STDOUT:\nedited" in observation
        (entry,) = app.trace.entries.values()
        assert entry.call.arguments["command"] == "echo edited"
        assert entry.edited and decision_text(entry) == "✓ edited"


async def test_escape_interrupts_a_long_command(make_app) -> None:
    app = make_app([turn("Wait.", xml_call("Bash", command="sleep 30")), turn("never", answer="never")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "wait a while")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("y")
        await wait_for(pilot, lambda: any(e.status == "running" for e in app.trace.entries.values()), what="sleep to start")
        started = time.monotonic()
        await pilot.press("escape")
        await wait_for(pilot, lambda: run_over(app), timeout=10, what="the run to stop")
        assert time.monotonic() - started < 5
        assert app.last_exit_reason == "cancelled"
        (observation,) = tool_messages(app)
        assert observation.startswith("Interrupted by the user")
        assert "Interrupted" in app.query(Notice).last().render().plain
        (entry,) = app.trace.entries.values()
        assert entry.status == "interrupted" and entry.exit_code is None


async def test_escape_while_asking_denies_and_stops(make_app) -> None:
    app = make_app([turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("never", answer="never")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a file")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("escape")
        await wait_for(pilot, lambda: run_over(app), what="the run to stop")
        assert app.last_exit_reason == "cancelled"
        assert not isinstance(app.screen, ApprovalScreen)
        assert not (Path(app.config.repo) / "new.txt").exists()


async def test_resume_reopens_the_latest_session(make_app, py_repo: Path, home: Path) -> None:
    app = make_app([turn("Look.", answer="The bug is in `add`.")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "where is the bug?")
        await wait_for(pilot, lambda: run_over(app), what="the first run")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    session = Session.latest(py_repo)
    assert session is not None and session.id == app.session.id
    follow_up = write_replay(home / "follow.jsonl", [turn("Fix it.", answer="Use a + b.")])
    config = Config(repo=py_repo, model_spec=f"replay:{follow_up}", theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=session, clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: resumed.model is not None, what="the model")
        assert [m.render().plain for m in resumed.query(UserMessage)] == ["where is the bug?"]
        assert "The bug is in `add`." in resumed.query(AnswerBlock).first().source
        await submit(pilot, "then fix it")
        await wait_for(pilot, lambda: run_over(resumed), what="the follow-up")
        users = [m["content"] for m in resumed.core.agent.messages if m["role"] == "user"]
        assert users == ["where is the bug?", "then fix it"]
    saved = json.loads(session.trajectory_path.read_text())
    assert [m["content"] for m in saved["messages"] if m["role"] == "user"] == ["where is the bug?", "then fix it"]
    assert saved["n_steps"] == 2


async def test_a_load_failure_is_shown_with_what_to_do(py_repo: Path, home: Path) -> None:
    app = FrogApp(Config(repo=py_repo, model_spec=f"replay:{home / 'missing.jsonl'}"), clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.state == "no model", what="the failure")
        text = app.query(Notice).first().render().plain
        assert "cannot read replay file" in text and "--model" in text
        app.query_one("#prompt").value = "hello"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.query_one("#prompt").value == "hello"  # the message is kept, not lost
        await wait_for(pilot, lambda: app.run_state.wired, what="the session")
        await app.action_new_task()  # a new task does not bring the model back: still nothing runs
        await wait_for(pilot, lambda: app.run_state.wired, what="the session prepared again")
        assert app.status.state == "no model"
        app.query_one("#prompt").value = "hello again"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.query_one("#prompt").value == "hello again" and not app.busy


async def test_undo_rewinds_one_action_at_a_time(make_app, py_repo: Path) -> None:
    app = make_app(FIX_AND_NOTE, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add and take a note")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        assert (py_repo / "NOTES.md").exists() and "a + b" in (py_repo / "calc.py").read_text()
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: not (py_repo / "NOTES.md").exists(), what="the first undo")
        assert "a + b" in (py_repo / "calc.py").read_text()
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: "a - b" in (py_repo / "calc.py").read_text(), what="the second undo")
        await wait_for(pilot, lambda: app.core.rewind_note.count("\n") >= 1, what="both notes for the model")


async def test_undone_steps_are_marked_in_the_trace_and_the_chat(make_app, py_repo: Path) -> None:
    app = make_app(FIX_AND_NOTE, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add and take a note")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        edit, write = app.trace.entries.values()
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: write.undone, what="the Write marked undone")
        assert not edit.undone
        assert decision_text(write) == "↶ undone" and decision_text(edit) == "✓ mode"
        lines = call_texts(app)
        assert "undone" in lines[1] and "✓" not in lines[1], lines
        assert "✓" in lines[0] and "undone" not in lines[0], lines
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: edit.undone, what="the Edit marked undone")
        assert all("✓" not in line and "undone" in line for line in call_texts(app))
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    rows = json.loads((app.session.folder / "trace.json").read_text())["calls"]
    assert [row["undone"] for row in rows] == [True, True]  # a resumed session shows them undone too


@pytest.mark.slow
async def test_a_real_gguf_loads_with_progress_then_ready(py_repo: Path, home: Path) -> None:
    from frogtui.config import LlamaSettings
    from tests.models.tiny_gguf import write_qwen35_hybrid

    gguf = write_qwen35_hybrid(home / "tiny-qwen35.gguf")
    config = Config(repo=py_repo, model_spec=str(gguf), llama=LlamaSettings(n_ctx=2048), rules_file=rules_file(home))
    app = FrogApp(config, clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model to load")
        assert app.status.context_size == 2048
        notice = app.loading_notice.render().plain
        assert notice.startswith("Model ready") and "tiny-qwen35.gguf: qwen35, n_ctx 2048" in notice
    assert app.load_log[0].startswith("loading tiny-qwen35.gguf (") and app.load_log[0].endswith(" GB)…")


async def test_outside_a_repository_the_palette_offers_git_init(tmp_path: Path, home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "notes.txt").write_text("hello\n")
    replay = write_replay(home / "r.jsonl", [turn("", xml_call("Bash", command="echo hi > made.txt")), turn("", answer="done")])
    app = FrogApp(Config(repo=plain, model_spec=f"replay:{replay}", rules_file=rules_file(home)), clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.run_state.wired, what="the session")
        notices = " ".join(n.render().plain for n in app.query(Notice))
        assert "is not in a git repository" in notices and "Initialise git repository" in notices
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"Initialise git")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.core.repo_state is not None, what="git init")
        assert (plain / ".git").is_dir()
        assert app.core.checkpoints is not None
        await submit(pilot, "make a file")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("y")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
    assert (plain / "made.txt").read_text() == "hi\n"
    assert [c.tool for c in app.core.checkpoints.taken] == ["Bash"], "checkpoints are on after git init"


async def test_approval_mode_none_denies_every_change_and_asks_nothing(py_repo: Path, home: Path) -> None:
    """``none`` means what it means headless (``approval.apply_mode``): Write, Edit and Bash are
    denied even when a rule allows them; Read runs as the policy says; nobody is asked."""
    rules = rules_file(home)
    rules.write_text(rules.read_text() + '[[rules]]\ntool = "Bash"\nmatch = "git status"\ndecision = "allow"\n')
    replay = write_replay(
        home / "r.jsonl",
        [
            turn("Look.", xml_call("Bash", command="git status"), xml_call("Read", file_path="calc.py")),
            turn("Fix.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
            turn("Done.", answer="I could not change anything."),
        ],
    )
    app = FrogApp(Config(repo=py_repo, model_spec=f"replay:{replay}", rules_file=rules), clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "f2", "f2")  # policy → edits → all → none
        assert app.status.approval_mode == "none"
        await submit(pilot, "fix add")
        await wait_for(pilot, lambda: run_over(app) or isinstance(app.screen, ApprovalScreen), what="the run")
        assert not isinstance(app.screen, ApprovalScreen)
        assert app.last_exit_reason == "agent"
        rows = [(e.call.name, e.decision, e.by, e.rule) for e in app.trace.entries.values()]
        assert rows == [
            ("Bash", "deny", "mode", "mode: none"),
            ("Read", "allow", "rule", "Read: allow (default)"),
            ("Edit", "deny", "mode", "mode: none"),
        ]
        assert tool_messages(app)[0] == "PermissionError: Bash is not allowed under mode: none"
        log = app.session.log_path.read_text(encoding="utf-8")
    assert "a - b" in (py_repo / "calc.py").read_text()
    # the session log says the mode changed, as an editor's mode change is logged (acp/server.py)
    assert " approval mode: none\n" in log and log.index("approval mode: none") < log.index("approval step=1")


async def test_git_status_is_refreshed_only_after_calls_that_can_change_files(make_app, home: Path, monkeypatch) -> None:
    trace = home / "git-trace.txt"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    reads = [turn("Look.", xml_call("Read", file_path="calc.py")) for _ in range(3)]
    app = make_app([*reads, turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("Done.", answer="Done.")],
                   approve="all")

    def status_runs() -> int:
        return trace.read_text().count("status --porcelain=v1 --branch") if trace.exists() else 0

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None and status_runs() >= 1, what="the start")
        asked: list[str] = []
        refresh = app.refresh_git
        app.refresh_git = lambda: (asked.append("refresh"), refresh())[1]  # type: ignore[method-assign]
        await submit(pilot, "read it")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
        await wait_for(pilot, lambda: status_runs() >= 2, what="the git refreshes")
        await pilot.pause(0.3)
    assert app.last_exit_reason == "agent"
    assert asked == ["refresh", "refresh"]  # after the Write and at the end: none after the three Reads
    # the two may come in one batch of events, and the git worker is exclusive: one or two runs
    assert 2 <= status_runs() <= 3


async def test_undo_says_what_it_did_in_a_toast_and_refuses_committed_work(make_app, py_repo: Path) -> None:
    app = make_app(FIX_AND_NOTE, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add and take a note")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        # the fix is committed (the note is not)
        review = app.core.review_session()
        selection = review.load()
        for change in selection.files:
            change.set_accepted(change.path == "calc.py")
        review.commit(selection, "Fix add")
        await pilot.press("ctrl+z")  # the note: not committed, undone, with a toast
        await wait_for(pilot, lambda: not (py_repo / "NOTES.md").exists(), what="the first undo")
        await wait_for(pilot, lambda: any("undone" in n.message for n in app._notifications), what="the toast")
        assert [n.message for n in app._notifications if "undone" in n.message] == ["Step 2 (Write) undone: removed NOTES.md."]
        await pilot.press("ctrl+z")  # the fix: already committed, so refused
        await wait_for(pilot, lambda: any("Not undone" in n.message for n in app._notifications), what="the refusal")
        refusal = next(n.message for n in app._notifications if "Not undone" in n.message)
        assert "step 1 (Edit) changed in calc.py is already committed" in refusal and "ctrl+r, then u" in refusal
        assert "a + b" in (py_repo / "calc.py").read_text()
        assert app.core.rewind_note.count("The user rewound") == 1


async def test_resume_shows_what_undo_told_the_model_as_the_notice_it_was(make_app, py_repo: Path, home: Path) -> None:
    app = make_app([
        turn("Fix.", xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")),
        turn("Done.", answer="Fixed."),
        turn("Again.", answer="Carrying on."),
    ], approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.press("ctrl+z")
        await wait_for(pilot, lambda: "a - b" in (py_repo / "calc.py").read_text(), what="the undo")
        await wait_for(pilot, lambda: app.core.rewind_note, what="the note for the model")
        await wait_for(pilot, lambda: any("Undid step 1" in str(n.render()) for n in app.query(Notice)), what="the undo's notice")
        live_notice = [str(n.render()) for n in app.query(Notice) if "Undid step 1" in str(n.render())]
        await submit(pilot, "carry on")
        await wait_for(pilot, lambda: sum(m["role"] == "user" for m in app.core.agent.messages) == 2 and run_over(app),
                       what="the follow-up")
        told = [m["content"] for m in app.core.agent.messages if m["role"] == "user"][1]
        assert told.startswith("The user rewound the files") and told.endswith("\n\ncarry on")  # what the model was told
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    config = Config(repo=py_repo, model_spec=app.config.model_spec, theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=Session.latest(py_repo), clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [m.render().plain for m in resumed.query(UserMessage)] == ["fix add", "carry on"]
        assert [str(n.render()) for n in resumed.query(Notice) if "Undid step 1" in str(n.render())] == live_notice


async def test_an_empty_final_answer_says_the_model_ended_without_a_message(make_app) -> None:
    app = make_app([turn("I have nothing to add.")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "anything?")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.pause()
        assert app.last_exit_reason == "agent"
        assert any("The model ended without a message" in str(n.render()) for n in app.query(Notice))


class DroppingServer(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible server that streams the start of a turn (reasoning, then answer text)
    and drops the connection before the turn ends, as a crashed or killed llama-server does."""

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "frognano", "max_model_len": 8192}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        deltas = [{"reasoning_content": "The test fails "}, {"reasoning_content": "because add subtracts."},
                  {"content": "The bug is "}, {"content": "in add"}]
        for delta in deltas:
            self.wfile.write(f"data: {json.dumps({'choices': [{'index': 0, 'delta': delta}]})}\n\n".encode())
        self.wfile.flush()  # and the connection closes: no finish_reason, no [DONE]

    def log_message(self, *args: Any) -> None:
        pass


async def test_a_turn_cut_short_by_the_server_shows_its_text_above_the_runs_end(py_repo: Path, home: Path) -> None:
    """The text the model streamed before the server dropped the stream comes before the notice
    that says the run ended, its reasoning folded like any finished step's."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), DroppingServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = Config(repo=py_repo, model_spec=f"http://127.0.0.1:{server.server_address[1]}/v1", theme="frog-dark",
                    rules_file=rules_file(home))
    app = FrogApp(config, clock=fake_clock())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "why does the test fail?")
            await wait_for(pilot, lambda: run_over(app), what="the run")
            await pilot.pause(0.2)
            assert app.last_exit_reason == "llm_query_error"
            after = list(app.chat.children)
            after = after[after.index(app.query(UserMessage).last()) + 1 :]
            assert [type(child) for child in after] == [StepLog, AnswerBlock, Notice]
            assert "The run ended (llm_query_error)" in str(after[-1].render())
            (reasoning,) = app.chat.reasoning
            assert reasoning.text == "The test fails because add subtracts." and reasoning.collapsed
            assert after[1].source.strip() == "The bug is in add"
    finally:
        server.shutdown()


class BrokenBackend(ReplayModel):
    """A backend with a bug: it streams its turn, then raises what no backend should."""

    def stream_turn(self, *args: Any, **kwargs: Any) -> Any:
        for item in super().stream_turn(*args, **kwargs):
            if isinstance(item, TurnEnd):
                raise RuntimeError("backend bug")
            yield item


async def test_a_run_stopped_by_an_internal_error_keeps_its_text_above_the_notice(py_repo: Path, home: Path) -> None:
    replay = write_replay(home / "broken.jsonl", [turn("The test fails because add subtracts.", answer="The bug is in add")])
    config = Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules_file(home))
    app = FrogApp(config, clock=fake_clock(), model_loader=lambda spec, config, report=None: BrokenBackend(replay))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "why does the test fail?")
        await wait_for(pilot, lambda: not app.busy and app.query(Notice) and "internal error" in str(app.query(Notice).last().render()),
                       what="the internal error's notice")
        await pilot.pause(0.2)
        after = list(app.chat.children)
        after = after[after.index(app.query(UserMessage).last()) + 1 :]
        assert [type(child) for child in after] == [StepLog, AnswerBlock, Notice]
        assert "RuntimeError('backend bug')" in str(after[-1].render())
        (reasoning,) = app.chat.reasoning
        assert reasoning.collapsed and after[1].source.strip() == "The bug is in add"


async def test_the_person_s_own_edits_are_theirs_in_the_review(make_app, py_repo: Path) -> None:
    """The person edits a file while the session runs (here: after it): ctrl+r shows it as theirs,
    not accepted; the session's changes are accepted; a commit holds only those."""
    from frogtui.ui.review import ReviewScreen
    from tests.ui.test_review_screen import tree_labels

    app = make_app(FIX_AND_NOTE, approve="all")
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "fix add and take a note")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        (py_repo / "test_calc.py").write_text((py_repo / "test_calc.py").read_text() + "# my own line\n")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: isinstance(app.screen, ReviewScreen), what="the review")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # who made each change (whether it was drawn yet, " · not seen yet", is another test's)
        files = [label.removesuffix(" · not seen yet") for label in tree_labels(app.screen) if not label.startswith("  ")]
        assert files == ["[x] NOTES.md (new)", "[x] calc.py", "[ ] test_calc.py (yours, made during the session)"]


async def test_the_projects_python_is_named_when_the_session_starts(py_repo: Path, home: Path) -> None:
    """Issue 24 item 1: the person sees which python the agent's Bash gets (the repository's .venv)."""
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(py_repo / ".venv")], check=True)
    replay = write_replay(home / "r.jsonl", [turn("", answer="done")])
    app = FrogApp(Config(repo=py_repo, model_spec=f"replay:{replay}", rules_file=rules_file(home)), clock=fake_clock())
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.run_state.wired, what="the session")
        notices = [n.render().plain for n in app.query(Notice)]
    assert f"Bash's python: {py_repo / '.venv' / 'bin' / 'python'} (the repository's .venv)" in notices, notices


async def test_a_resumed_session_of_one_step_says_one_step(make_app, py_repo: Path, home: Path) -> None:
    app = make_app([turn("Hello.", answer="Hi.")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "say hi")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    session = Session.latest(py_repo)
    assert session is not None
    config = Config(repo=py_repo, model_spec=app.config.model_spec, theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=session, clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await pilot.pause()
        notices = [n.render().plain for n in resumed.query(Notice)]
        assert f"Resumed session {session.id} (1 step). Send a message to continue." in notices, notices
