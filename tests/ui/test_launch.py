"""``frogtui`` itself: what quitting prints (session id, folder, resume command) and what
``--resume [ID]`` opens (the session's repository and model unless --repo/--model say otherwise)."""
from __future__ import annotations

from pathlib import Path

import pytest

from frogtui.errors import FrogtuiError
from frogtui.session import Session
from frogtui.ui.launch import prepare, quit_lines
from tests.support import turn
from tests.ui.conftest import SIZE, submit, wait_for


async def test_quitting_prints_the_session_and_how_to_resume_it(make_app, py_repo: Path, home: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app([turn("Look.", answer="The bug is in `add`.")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "where is the bug?")
        await wait_for(pilot, lambda: app.last_exit_reason is not None and not app.busy, what="the run")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    session = app.session
    assert not session.folder.is_relative_to(home)  # the test's XDG_STATE_HOME is elsewhere
    assert quit_lines(session) == [
        f"frogtui: session {session.id} saved in {session.folder}",
        f"  resume it: frogtui --resume {session.id}",
    ]
    # the printed command reopens this session, in its repository, with its model, from any folder
    monkeypatch.chdir(tmp_path)
    config, resumed = prepare(["--resume", session.id])
    assert resumed is not None and resumed.id == session.id
    assert config.repo == py_repo.resolve() and config.model_spec == app.config.model_spec
    monkeypatch.chdir(py_repo)
    config, resumed = prepare(["--resume"])
    assert resumed is not None and resumed.id == session.id and config.model_spec == app.config.model_spec
    config, _ = prepare(["--resume", "--model", "replay:/elsewhere.jsonl"])
    assert config.model_spec == "replay:/elsewhere.jsonl"


def test_nothing_sent_nothing_to_resume_and_unknown_ids(py_repo: Path, home: Path) -> None:
    session = Session.create(py_repo, "replay:/x.jsonl")
    assert quit_lines(session) == [f"frogtui: session {session.id}: nothing was sent, nothing to resume"]
    with pytest.raises(FrogtuiError, match="no saved session 'nope'"):
        prepare(["--resume", "nope"])
    with pytest.raises(FrogtuiError, match="no saved session '../x'"):
        prepare(["--resume", "../x"])


async def test_the_theme_chosen_with_f3_is_the_next_start_s(make_app, py_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(py_repo)
    assert prepare([])[0].theme == "frog-dark"
    app = make_app([])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        chosen = app.theme
    assert chosen != "frog-dark"
    assert prepare([])[0].theme == chosen
    assert prepare(["--theme", "frog-dark"])[0].theme == "frog-dark"  # the flag wins


def test_an_unknown_theme_is_an_error_naming_the_themes(py_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(py_repo)
    with pytest.raises(FrogtuiError, match=r"no theme named 'nope'; themes: frog-dark, frog-light, .*textual-dark"):
        prepare(["--theme", "nope"])


def test_a_session_whose_only_task_ran_as_attempts_can_be_resumed(py_repo: Path, home: Path) -> None:
    parent = Session.create(py_repo, "replay:/x.jsonl")  # what an attempts run leaves: attempts.json, no trajectory
    (parent.folder / "attempts.json").write_text('{"task": "t", "results": []}\n')
    assert quit_lines(parent)[1] == f"  resume it: frogtui --resume {parent.id}"
    app_session = Session.create(py_repo, "replay:/x.jsonl")  # an app session whose message was /attempts
    (app_session.folder / "last_attempts.json").write_text(f'{{"session": "{parent.id}"}}\n')
    assert quit_lines(app_session)[1] == f"  resume it: frogtui --resume {app_session.id}"
