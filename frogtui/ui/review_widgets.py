"""The pieces of the review screen (``review.py``): the tree of files and hunks with its keys,
the highlighted diff of the hunk under the cursor, and the discard confirmation."""
from __future__ import annotations

from typing import Any

from pygments import lex
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static, Tree

from frogtui.ui.diffmodel import lexer_for
from frogtui.ui.diffview import token_styles
from frogtui.ui.themes import pygments_style_for
from frogtui.vcs.hunks import FileChange, ReviewHunk

MARKS = {True: "[x]", False: "[ ]", None: "[~]"}
SHOWN_LINES_MAX = 500
"""Diff lines drawn at once: a 20,000-line rewrite would take seconds to highlight on every
cursor move. Accepting or rejecting still covers the whole hunk."""
CONTROL_NOTE = "⚠ runs at your next commit: check it"
"""Marks a session's change to a hook or a git-controlling file (.gitattributes, .husky/…)."""
NESTED_NOTE = ("⚠ nested git repository the session created, left out of review: "
               "its own config (core.fsmonitor, hooks) runs at your git commands in it")
"""Flags, on top of the changes, a nested repository the session created (``vcs.nested``)."""
ORIGIN_NOTES = {
    "session": "",
    "earlier": " (yours, from before the session)",
    "during": " (yours, made during the session)",
    "mixed": " (mixes yours and the session's)",
}


def mark(accepted: bool, partly: bool) -> str:
    return MARKS[None] if partly else MARKS[accepted]


class HunkTree(Tree[Any]):
    """Files and their hunks; space accepts or rejects the one under the cursor. Committing is
    ctrl+s only (the screen's binding): no single letter commits."""

    BINDINGS = [  # in footer order: commit and back first, so a narrow footer keeps them
        Binding("ctrl+s", "screen.commit", "Commit"),
        Binding("escape", "screen.close", "Back"),
        Binding("space", "screen.toggle", "Accept/reject"),
        Binding("a", "screen.toggle_file", "File"),
        Binding("s", "screen.split", "Split", tooltip="Split the hunk under the cursor into smaller ones"),
        Binding("m", "screen.redraft", "Redraft"),
        Binding("d", "screen.discard", "Discard rejected", tooltip="Put back the old text of this session's rejected changes"),
        Binding("u", "screen.undo", "Undo commit"),
    ]


class HunkDiff(Static):
    """The highlighted diff of a file or one hunk. Colours come from theme variables through
    component classes, syntax colours from the theme's pygments style."""

    COMPONENT_CLASSES = {"hunk-diff--hunk", "hunk-diff--added", "hunk-diff--removed", "hunk-diff--rejected", "hunk-diff--note"}

    def show(self, change: FileChange | None, hunks: list[ReviewHunk]) -> None:
        if change is None:
            self.update("No changes since the session started.")
            return
        lexer = lexer_for(change.path)
        tokens = token_styles(pygments_style_for(self.app.current_theme))
        styles = {name: self.get_component_rich_style(f"hunk-diff--{name}") for name in ("hunk", "added", "removed", "rejected", "note")}
        text = Text()
        budget = SHOWN_LINES_MAX
        for number, hunk in enumerate(hunks):
            state = "accepted" if hunk.accepted else ("partly accepted" if hunk.partly_accepted else "rejected")
            lines = hunk.lines()
            if budget <= 0:
                text.append(f"… {len(hunks) - number} more hunk(s) not drawn here: select one to see it.\n", styles["note"])
                break
            text.append(f"{hunk.label}  [{state}]{ORIGIN_NOTES[hunk.origin]}\n", styles["hunk"])
            if len(lines) > budget:
                hidden = len(lines) - budget
                lines = lines[:budget]
            else:
                hidden = 0
            budget -= len(lines)
            for line in lines:
                if line.line_type == "\\":
                    text.append("\\ No newline at end of file\n", styles["note"])
                    continue
                content = line.value.rstrip("\n")
                crlf = content.endswith("\r")
                row = Text(line.line_type or " ")
                for token, value in lex(content.rstrip("\r"), lexer):
                    row.append(value.replace("\n", ""), tokens.get(token))
                if crlf:
                    row.append("␍", styles["note"])
                if line.line_type in "+-" and line.line_type:
                    row.stylize(styles["added" if line.line_type == "+" else "removed"])
                if not hunk.accepted:
                    row.stylize(styles["rejected"])
                text.append_text(row)
                text.append("\n")
            if hidden:
                text.append(f"… {hidden} more line(s) of this hunk not drawn (too long to show).\n", styles["note"])
        self.update(text)


class ConfirmDiscard(ModalScreen[bool]):
    """Asks before the rejected changes of the session are removed from the working tree."""

    CSS_PATH = "review.tcss"
    BINDINGS = [Binding("y", "answer(True)", "Discard"), Binding("n,escape", "answer(False)", "Keep")]

    def __init__(self, paths: list[str]) -> None:
        super().__init__()
        self.paths = paths

    def compose(self) -> ComposeResult:
        listed = "\n".join(f"  {p}" for p in self.paths[:12]) + ("\n  …" if len(self.paths) > 12 else "")
        with Vertical(id="discard-dialog"):  # Text: the names are the model's, never markup
            yield Label(Text(f"Discard the rejected changes of this session in {len(self.paths)} file(s)?\n{listed}\n"
                             "Your own earlier changes are kept. (A copy is kept under refs/frogtui/…/before-discard.)"))
            with Horizontal(id="discard-buttons"):
                yield Button("Discard (y)", id="discard-yes", variant="error")
                yield Button("Keep (n)", id="discard-no")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "discard-yes")
