"""Slash commands, ``@path`` mentions and the bell (issue 34, items 2 and 6): the parser and the
completion without Textual, the commands and the bell in the real app driven by Pilot."""
from __future__ import annotations

import json
from pathlib import Path

from textual import events

from frogtui.config import UiSettings
from frogtui.ui.messages import TaskSubmitted
from frogtui.ui.notify import Attention, sequence
from frogtui.ui.slash import COMMANDS, PromptSuggester, Slash, SlashError, parse, repository_files
from tests.support import git, turn, xml_call
from tests.ui.conftest import submit, wait_for


# the parser ----------------------------------------------------------------------------------
def test_known_commands_parse_and_every_one_is_listed_by_help() -> None:
    assert parse("/help") == Slash("help")
    assert parse("/model  replay:x.jsonl ") == Slash("model", "replay:x.jsonl")
    assert parse("/attempts 3 fix it") == Slash("attempts", "3 fix it")
    assert {c.name for c in COMMANDS} == {"help", "clear", "model", "diff", "undo", "compact", "init", "attempts"}


def test_an_unknown_command_is_an_error_not_a_task() -> None:
    error = parse("/frobnicate the tests")
    assert isinstance(error, SlashError) and "/frobnicate" in error.message and "/help" in error.message
    assert isinstance(parse("/"), SlashError)
    assert isinstance(parse("/diff everything"), SlashError), "a command that takes no argument says so"


def test_a_message_that_starts_with_a_path_or_no_slash_is_a_task() -> None:
    assert parse("/usr/bin/env is broken here") is None
    assert parse("fix /help page") is None


async def test_commands_and_files_complete_as_typed(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "calc.py").write_text("x = 1\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    files = repository_files(tmp_path)
    assert files == ["src/calc.py"], ".git is never offered"
    suggest = PromptSuggester(lambda: files)
    assert await suggest.get_suggestion("/he") == "/help"
    assert await suggest.get_suggestion("/co") == "/compact"
    assert await suggest.get_suggestion("look at @src/c") == "look at @src/calc.py"
    assert await suggest.get_suggestion("look at src/c") is None


# the bell ------------------------------------------------------------------------------------
def test_the_bell_rings_by_the_setting_and_the_escapes_carry_no_controls() -> None:
    written: list[str] = []
    for when, focused, rings in [("unfocused", True, False), ("unfocused", False, True), ("always", True, True), ("never", False, False)]:
        assert Attention(when, written.append).ring(focused, "t", "x") is rings, (when, focused)
    escape = sequence("frogtui; waits", "run \x1b]52;c;AAAA\x07 Bash")
    assert escape.startswith("\a\x1b]9;") and "\x1b]777;notify;frogtui, waits;" in escape
    assert "52;c" in escape and escape.count("\x1b") == 2, "the model's escape is dropped, its text kept"


# in the app ----------------------------------------------------------------------------------
async def test_an_unknown_command_is_refused_and_kept_in_the_prompt(make_app) -> None:
    app = make_app([turn("", answer="should not run")])
    async with app.run_test() as pilot:
        await submit(pilot, "/frobnicate now")
        await pilot.pause()
        assert app.query_one("#prompt").value == "/frobnicate now"
        assert not app.core.started, "nothing was sent to the model"
        assert any("Unknown command /frobnicate" in n.message for n in app._notifications)


async def test_help_lists_the_commands_in_the_chat(make_app) -> None:
    app = make_app([turn("", answer="x")])
    async with app.run_test() as pilot:
        await submit(pilot, "/help")
        await wait_for(pilot, lambda: "/compact" in _chat_text(app), what="the help")
        assert "@path" in _chat_text(app) and not app.core.started


async def test_at_path_attaches_the_file_as_read_shows_it_and_the_floor_keeps_secrets_out(make_app, home: Path, py_repo: Path) -> None:
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    app = make_app([turn("", answer="seen")])
    async with app.run_test() as pilot:
        await submit(pilot, f"explain @calc.py and @{home}/.ssh/id_rsa")
        await wait_for(pilot, lambda: not app.busy and app.core.started, what="the run")
        first = app.core.agent.messages[1]["content"]
        assert '<file path="calc.py">' in first and "return a - b" in first
        assert "PRIVATE KEY" not in first
        text = _chat_text(app)
        assert "Attached @calc.py" in text and "id_rsa not attached" in text


async def test_clear_starts_a_fresh_conversation_in_the_same_session(make_app) -> None:
    app = make_app([turn("", answer="one"), turn("", answer="two")])
    async with app.run_test() as pilot:
        await submit(pilot, "first task")
        await wait_for(pilot, lambda: app.core.started and not app.busy, what="the first run")
        session = app.session.id
        await submit(pilot, "/clear")
        await wait_for(pilot, lambda: "fresh conversation" in _chat_text(app), what="the notice")
        await submit(pilot, "second task")
        await wait_for(pilot, lambda: not app.busy and len(app.core.agent.messages) >= 2
                       and "second task" in app.core.agent.messages[1]["content"], what="the second run")
        assert app.session.id == session
        assert all("first task" not in str(m.get("content")) for m in app.core.agent.messages), "a fresh conversation"


async def test_diff_shows_the_sessions_changes(make_app) -> None:
    edit = xml_call("Edit", file_path="calc.py", old_string="a - b", new_string="a + b")
    app = make_app([turn("", edit), turn("", answer="fixed")], approve="all")
    async with app.run_test() as pilot:
        await submit(pilot, "fix")
        await wait_for(pilot, lambda: app.core.started and not app.busy, what="the run")
        await submit(pilot, "/diff")
        await wait_for(pilot, lambda: "+    return a + b" in _chat_text(app), what="the diff")


async def test_model_shows_the_model_and_switches_to_another(make_app, home: Path) -> None:
    from tests.support import write_replay

    other = write_replay(home / "other.jsonl", [turn("", answer="from the other model")])
    app = make_app([turn("", answer="x")])
    async with app.run_test() as pilot:
        await submit(pilot, "/model")
        await wait_for(pilot, lambda: "Model: replay.jsonl" in _chat_text(app) or "spec replay:" in _chat_text(app), what="the model")
        first = app.session.id
        await submit(pilot, f"/model replay:{other}")
        await wait_for(pilot, lambda: app.model is not None and app.config.model_spec == f"replay:{other}", what="the new model")
        await submit(pilot, "go")
        await wait_for(pilot, lambda: app.core.started and not app.busy, what="the run on the other model")
        assert app.core.agent.messages[-1]["content"] == "from the other model"
        assert app.session.id != first


async def test_init_asks_the_model_for_agents_md_through_the_gate(make_app, py_repo: Path) -> None:
    write = xml_call("Write", file_path="AGENTS.md", content="# Agents\nRun pytest.\n")
    app = make_app([turn("", write), turn("", answer="drafted")], approve="all")
    async with app.run_test() as pilot:
        await submit(pilot, "/init")
        await wait_for(pilot, lambda: (py_repo / "AGENTS.md").exists() and not app.busy, what="AGENTS.md")
        assert "AGENTS.md" in app.core.agent.messages[1]["content"]
        approvals = json.loads(app.core.trajectory_file().read_text())["steps"][0]["approvals"]
        assert approvals[0]["tool"] == "Write" and approvals[0]["by"] == "mode"
    git(py_repo, "status", "--porcelain")


async def test_a_question_rings_the_bell_and_notifies_when_the_window_has_no_focus(make_app) -> None:
    app = make_app([turn("", xml_call("Bash", command="ls")), turn("", answer="done")], ui=UiSettings(notify="unfocused"))
    written: list[str] = []
    async with app.run_test() as pilot:
        app.attention.write = written.append  # the terminal: the edge of the app
        await wait_for(pilot, lambda: app.model is not None and app.run_state.wired, what="the model")
        app.post_message(events.AppBlur())  # the terminal reports the window lost the focus
        await pilot.pause()
        app.post_message(TaskSubmitted("list"))  # (a key pressed would give the focus back)
        await wait_for(pilot, lambda: app.run_state.asking, what="the question")
        assert written and written[0].startswith("\a\x1b]9;frogtui waits for you") and "\x1b]777;notify;" in written[0]
        app.post_message(events.AppFocus())
        await pilot.press("y")
        await wait_for(pilot, lambda: app.core.started and not app.busy, what="the end")
        assert len(written) == 1, "the run's end, seen with the focus back, rings nothing"


def _chat_text(app) -> str:
    from frogtui.ui.chat import Notice

    return "\n".join(str(n.render()) for n in app.chat.query(Notice))
