"""Size caps: JSON bytes as the SDK writes them (non-ASCII escaped)."""
from __future__ import annotations

import json

from frogtui.acp.limits import cap_diff, cap_input, cap_text, fit, json_size


def test_fit_counts_escaped_bytes_and_cuts_at_a_line_end() -> None:
    text = "🐸 frog\n" * 10_000
    kept, cut = fit(text, 50_000)
    assert json_size(kept) <= 50_000 and cut == len(text) - len(kept)
    assert kept.endswith("\n") and kept + text[len(kept) :] == text
    assert fit("short", 100) == ("short", 0)


def test_cap_text_says_what_was_left_out() -> None:
    capped = cap_text("x" * 200_000, 10_000)
    assert len(json.dumps(capped)) <= 10_000
    kept, note = capped.split("\n")
    assert note == f"[frogtui: output truncated: {200_000 - len(kept):,} more characters not shown]" and len(kept) > 9_000


def test_cap_input_cuts_every_long_string() -> None:
    args = cap_input({"file_path": "a.py", "content": "é" * 100_000, "nested": ["y" * 50_000], "n": 3})
    assert args["file_path"] == "a.py" and args["n"] == 3
    assert len(json.dumps(args)) < 40_000 and "argument truncated" in args["content"]


def test_small_diff_is_whole() -> None:
    capped = cap_diff("a\nb\n", "a\nc\n")
    assert (capped.old_text, capped.new_text, capped.note) == ("a\nb\n", "a\nc\n", "")


def test_large_diff_keeps_the_changed_region_with_context() -> None:
    before = "".join(f"line {n}\n" for n in range(50_000))
    after = before.replace("line 30000\n", "line 30000 changed\n")
    capped = cap_diff(before, after, side_budget=10_000)
    assert capped.old_text == "".join(f"line {n}\n" for n in range(29_997, 30_004))
    assert capped.new_text == capped.old_text.replace("line 30000\n", "line 30000 changed\n")
    assert "only lines 29998–30004 of 50000" in capped.note


def test_a_change_too_big_even_as_a_region_is_cut_and_says_so() -> None:
    before = "".join(f"old {n}\n" for n in range(20_000))
    after = "".join(f"nuevo {n} ✓\n" for n in range(20_000))
    capped = cap_diff(before, after, side_budget=100_000)
    assert json_size(capped.old_text or "") <= 100_000 and json_size(capped.new_text) <= 100_000
    assert capped.new_text.startswith("nuevo 0 ✓\n") and "Cut further" in capped.note
    created = cap_diff(None, after, side_budget=100_000)
    assert created.old_text is None and json_size(created.new_text) <= 100_000


async def test_a_turn_ended_by_the_text_guard_says_so_to_the_editor() -> None:
    from frogtui.acp.outbox import Outbox
    from frogtui.acp.sink import AcpSink
    from frogtui.agent import events as ev

    class Conn:
        def __init__(self) -> None:
            self.updates: list[object] = []

        async def session_update(self, session_id: str, update: object) -> None:
            self.updates.append(update)

    conn = Conn()
    outbox = Outbox(conn, "s1")
    AcpSink(outbox, "/", lambda: 1000).emit(ev.TextRepeated(step=2, note="frogtui stopped your turn: [limits] repeat_text = 8."))
    await outbox.flush()
    await outbox.close()
    texts = [u.content.text for u in conn.updates if getattr(u, "session_update", "") == "agent_message_chunk"]
    assert any("[limits] repeat_text = 8" in text and "kept repeating" in text for text in texts), conn.updates
