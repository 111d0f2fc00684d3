"""Every way out of the app ends cleanly: the run stops, the trajectory and the replay are written,
and nothing is raised (no traceback)."""
from __future__ import annotations

from pathlib import Path

from frogtui.config import Config
from frogtui.models.replay import ReplayModel
from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from tests.support import turn, write_replay, xml_call
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for


async def test_ctrl_c_twice_while_asking_quits_cleanly(make_app) -> None:
    app = make_app([turn("Write.", xml_call("Write", file_path="new.txt", content="x\n")), turn("never", answer="never")])
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "write a file")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app._exception is None
    assert app.session.trajectory_path.is_file() and app.session.replay_path.is_file()
    assert not (Path(app.config.repo) / "new.txt").exists()


async def test_ctrl_c_twice_while_generating_quits_cleanly(py_repo: Path, home: Path) -> None:
    replay = write_replay(home / "slow.jsonl", [turn("Think " * 400, answer="done")])
    config = Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules_file(home))
    app = FrogApp(config, clock=fake_clock(), model_loader=lambda spec, config, report=None: ReplayModel(replay, piece_delay=0.01))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "think")
        await wait_for(pilot, lambda: app.busy and app.status.step >= 1, what="the run to start")
        await pilot.pause(0.2)
        await pilot.press("ctrl+c", "ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, what="the app to quit")
    assert app._exception is None
    assert app.session.trajectory_path.is_file() and app.session.replay_path.is_file()
