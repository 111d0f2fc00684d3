"""The review's diff rows (``ui/review_pages.py``): nothing a line holds is left off screen."""
from __future__ import annotations

from rich.cells import cell_len

from frogtui.ui.review_pages import PAGE_ROWS, display_text, layout, page_count, page_lines, pieces
from frogtui.vcs.hunks import parse_diff


def test_hidden_characters_are_drawn_as_marks() -> None:
    shown = display_text("ok\x1b]52;c;bad\x07 \u202eevil\u202c\tx\r\n")
    assert "\x1b" not in shown and "\u202e" not in shown and "\t" not in shown
    assert shown.startswith("ok␛]52;c;bad␇ ⟨U+202E⟩evil⟨U+202C⟩") and shown.endswith("x␍")


def test_pieces_fit_the_width_in_cells_and_lose_nothing() -> None:
    for text in ("a" * 250, "漢字" * 70 + "tail", "", "🐸x" * 33):
        cut = pieces(text, 40)
        assert "".join(piece for _, piece in cut) == text
        assert all(cell_len(piece) <= 40 for _, piece in cut)
        assert [start for start, _ in cut] == [sum(len(p) for _, p in cut[:i]) for i in range(len(cut))]


def test_every_line_has_rows_and_pages_count_them() -> None:
    body = "".join(f"+{'w' * (n % 300)}\n" for n in range(1_200))
    diff = f"diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1,1200 @@\n{body}".encode()
    change = parse_diff(diff).files[0]
    rows = layout(change, change.review_hunks, 80)
    lines = [r for r in rows if r.kind == "line"]
    assert max(r.line_number for r in lines) == 1_200
    assert all(r.cells <= 80 for r in rows if r.kind == "line")
    for number in range(1_200):  # each line's pieces, put together, are the whole line
        assert "".join(r.text for r in lines if r.line_number == number + 1) == "w" * (number % 300)
    assert all(r.group is not None for r in lines) and page_count(rows) == -(-len(rows) // PAGE_ROWS)
    first, last, total = page_lines(rows, page_count(rows) - 1)
    assert last == total == 1_200 and first > 1
