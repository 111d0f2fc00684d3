"""The hand-off of a full conversation in the app: drafted on a worker (it reads the session's
diff), edited in ``HandoffScreen``, and its answer handed to the run state (start it as the
session's next run, or keep the conversation). ``SessionApp`` builds on ``HandoffInApp``."""
from __future__ import annotations

from textual import work
from textual.app import App

from frogtui.ui.messages import HandoffDrafted
from frogtui.ui.status import StatusBar


class HandoffInApp(App[int]):
    """Draft the hand-off, show it for editing, hand the person's answer to the run state."""

    @work(thread=True, exclusive=True, group="handoff")
    def draft_handoff(self, ended: str) -> None:
        """Draft the hand-off on a worker (it reads the session's diff), then show it."""
        self.post_message(HandoffDrafted(self.core.draft_handoff(ended), ended))

    def on_handoff_drafted(self, message: HandoffDrafted) -> None:
        from frogtui.ui.handoff_screen import HandoffScreen  # a TextArea: imported when first shown

        status = self.query_one(StatusBar)
        screen = HandoffScreen(message.text, message.ended, used=status.context_used, budget=status.context_size)
        self.push_screen(screen, callback=self.handoff_answered)

    async def handoff_answered(self, text: str | None) -> None:
        """The person edited the hand-off (``text``: it starts as the next run) or kept the conversation (None)."""
        await self.act(self.run_state.handoff_answered(text))
