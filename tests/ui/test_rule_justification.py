"""A rule's justification in the real app: the approval modal shows it under the rule that asks,
and a rule that denies tells the model why (no modal)."""
from __future__ import annotations

from pathlib import Path

from frogtui.ui.app import FrogApp
from frogtui.ui.approval_screen import ApprovalScreen
from tests.support import turn, xml_call
from tests.ui.conftest import SIZE, submit, wait_for

RULES = (
    '[sandbox]\nbash = "none"\n\n[bash]\nread_only = false\n\n'
    '[[rules]]\ntool = "Bash"\nmatch = "git push *"\ndecision = "ask"\njustification = "pushes are reviewed first"\n\n'
    '[[rules]]\ntool = "Bash"\nmatch = "rm -rf build"\ndecision = "deny"\njustification = "use make clean"\n'
)


def tool_messages(app: FrogApp) -> list[str]:
    assert app.core.agent is not None
    return [m["content"] for m in app.core.agent.messages if m["role"] == "tool"]


def run_over(app: FrogApp) -> bool:
    return app.last_exit_reason is not None and not app.busy


async def test_the_modal_shows_why_a_rule_asks(make_app, home: Path) -> None:
    rules = home / "justified.toml"
    rules.write_text(RULES)
    app = make_app([turn("Push.", xml_call("Bash", command="git push origin main")), turn("ok", answer="Not pushed.")], rules_file=rules)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "push it")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        shown = str(app.screen.query_one("#approval-rule").render())
        assert "asked by rule Bash: git push *" in shown and "why: pushes are reviewed first" in shown
        await pilot.press("n")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
        assert tool_messages(app) == ["The user denied this tool call."], "a person's denial is Leaf's observation"


async def test_a_rule_that_denies_tells_the_model_why(make_app, home: Path) -> None:
    rules = home / "justified.toml"
    rules.write_text(RULES)
    app = make_app([turn("Clean.", xml_call("Bash", command="rm -rf build")), turn("ok", answer="Left it.")], rules_file=rules)
    async with app.run_test(size=SIZE) as pilot:
        await submit(pilot, "clean up")
        await wait_for(pilot, lambda: run_over(app), what="the run to end")
        assert not isinstance(app.screen, ApprovalScreen)
        (seen,) = tool_messages(app)
        assert seen == f"PermissionError: rm -rf build is denied by rule 'Bash: rm -rf build' in {rules}. Why: use make clean"
