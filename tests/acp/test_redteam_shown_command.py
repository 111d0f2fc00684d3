"""h9 red-team finding 3 (ACP): a permission request's fenced command marks direction overrides and
invisible characters (``⟨U+202E⟩``), as the review and the app's modal do, so the editor cannot
draw the command as something else than what runs."""
from __future__ import annotations

from frogtui.acp.updates import ToolCallView
from frogtui.protocol import ToolCall

TRICKY = "cat notes.txt #\u202e\u2066 ; touch hidden-marker\u2069\u2066\u200b"


def test_the_fenced_command_marks_direction_overrides() -> None:
    view = ToolCallView(ToolCall("t1", "Bash", {"command": f"echo ok > x.txt; {TRICKY}"}), "/repo")
    texts = [c.content.text for c in view.permission_call("why").content if c.type == "content"]
    fenced = [t for t in texts if t.startswith("```")]
    assert len(fenced) == 1
    assert not any(c in fenced[0] for c in "\u202e\u2066\u2069\u200b"), repr(fenced[0])
    assert "U+202E" in fenced[0] and "U+200B" in fenced[0] and "touch hidden-marker" in fenced[0]
