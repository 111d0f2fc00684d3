"""The context meter moves while the model writes a turn, not only at the step's end."""
from __future__ import annotations

from pathlib import Path

from frogtui.config import Config
from frogtui.models.replay import ReplayModel
from frogtui.ui.app import FrogApp
from frogtui.ui.status import CHARS_PER_TOKEN, short_count
from tests.support import turn, write_replay
from tests.ui.conftest import SIZE, fake_clock, rules_file, submit, wait_for


async def test_the_context_meter_moves_during_a_turn(py_repo: Path, home: Path) -> None:
    thinking = "".join(f"Thought number {i} about it. " for i in range(400))  # no repetition: the text guard stays quiet
    replay = write_replay(home / "slow.jsonl", [turn(thinking, answer="done")])
    config = Config(repo=py_repo, model_spec=f"replay:{replay}", theme="frog-dark", rules_file=rules_file(home))
    app = FrogApp(config, clock=fake_clock(), model_loader=lambda spec, config, report=None: ReplayModel(replay, piece_delay=0.005))
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "think")
        await wait_for(pilot, lambda: app.busy and app.status.step >= 1, what="the run to start")
        await wait_for(pilot, lambda: app.status.written_chars > 400, what="the meter to count the text written")
        assert app.status.context_used == 0, "no step has ended yet: the meter's figure is the text written so far"
        assert f"{short_count(app.status.written_chars // CHARS_PER_TOKEN)}/" in str(app.status.render()), "drawn"
        live = app.status.written_chars
        await wait_for(pilot, lambda: app.status.written_chars > live, what="the meter to move on")
        app.core.interrupt()
        await wait_for(pilot, lambda: not app.busy, what="the run to end")
        await wait_for(pilot, lambda: app.status.written_chars == 0 and app.status.context_used > 0,
                       what="the step's usage to replace the estimate")
