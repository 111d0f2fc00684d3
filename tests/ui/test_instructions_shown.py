"""The app says that the repository's AGENTS.md goes to the model with the task (issue 24, build
item 9), gives it with the first message only, and a resumed session shows what the person typed."""
from __future__ import annotations

from pathlib import Path

from frogtui.config import Config
from frogtui.session import Session
from frogtui.ui.app import FrogApp
from frogtui.ui.chat import Notice, UserMessage
from tests.support import turn, write_replay
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for

RULES = "Always run `python -m pytest -q` before answering.\n"


def run_over(app: FrogApp) -> bool:
    return app.last_exit_reason is not None and not app.busy


async def test_the_app_shows_agents_md_and_gives_it_with_the_first_message(make_app, py_repo: Path, home: Path) -> None:
    (py_repo / "AGENTS.md").write_text(RULES)
    app = make_app([turn("Look.", answer="In add."), turn("Again.", answer="Still add.")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        notices = [n.render().plain for n in app.query(Notice)]
        assert any(text.startswith(f"AGENTS.md ({len(RULES)} bytes) is given to the model with the task") for text in notices), notices
        await submit(pilot, "where is the bug?")
        await wait_for(pilot, lambda: run_over(app), what="the first run")
        await submit(pilot, "sure?")
        await wait_for(pilot, lambda: len([m for m in app.core.agent.messages if m["role"] == "user"]) == 2 and run_over(app),
                       what="the second")
        users = [m["content"] for m in app.core.agent.messages if m["role"] == "user"]
        assert users[0].startswith("# AGENTS.md instructions for this repository\n\n<INSTRUCTIONS>\n" + RULES)
        assert users[0].endswith("</INSTRUCTIONS>\n\nwhere is the bug?") and users[1] == "sure?", "once, with the task"
        assert [m.render().plain for m in app.query(UserMessage)] == ["where is the bug?", "sure?"]
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    session = Session.latest(py_repo)
    assert session is not None
    config = Config(repo=py_repo, model_spec=f"replay:{write_replay(home / 'f.jsonl', [])}", theme="frog-dark", rules_file=rules_file(home))
    resumed = FrogApp(config, resume=session, clock=fake_clock())
    async with resumed.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: resumed.model is not None, what="the model")
        assert [m.render().plain for m in resumed.query(UserMessage)] == ["where is the bug?", "sure?"]


async def test_a_skipped_file_is_a_warning_and_nothing_is_given(make_app, py_repo: Path, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret-ish\n")
    (py_repo / "AGENTS.md").symlink_to(outside)
    app = make_app([turn("Look.", answer="ok")])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.model is not None, what="the model")
        warnings = [n.render().plain for n in app.query(Notice) if n.has_class("notice-warning")]
        assert f"AGENTS.md is not given to the model: it is a link to {outside}, outside the repository" in warnings
        await submit(pilot, "hi")
        await wait_for(pilot, lambda: run_over(app), what="the run")
        assert [m["content"] for m in app.core.agent.messages if m["role"] == "user"] == ["hi"]
