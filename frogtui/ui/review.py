"""The review & commit screen: every change since the session started, as files and hunks to
accept or reject, the highlighted diff, a commit message drafted by the model, commit, discard
and undo.

Push it with ``ReviewScreen(review_session, model=model)`` (see docs/REVIEW.md). Git work runs in
thread workers; the screen only reads and toggles the ``HunkSelection``.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.errors import NoWidget
from textual.screen import Screen
from textual.widgets import Static, TextArea, Tree

from frogtui.terminal_text import marked
from frogtui.ui.footer import FittingFooter
from frogtui.ui.from_workers import call_while_shown
from frogtui.ui.review_widgets import (
    CONTROL_NOTE,
    IGNORED_NOTE,
    NESTED_NOTE,
    ORIGIN_NOTES,
    UNSEEN_NOTE,
    ConfirmDiscard,
    DiffScroll,
    HunkDiff,
    HunkTree,
    mark,
)
from frogtui.vcs.commit import CommitFailed
from frogtui.vcs.hunks import ChangeGroup, FileChange, HunkSelection, ReviewHunk
from frogtui.vcs.message import Drafts, draft_commit_message, summary_message
from frogtui.vcs.repository import GitFailed, resume
from frogtui.vcs.review import ConfirmationNeeded, ReviewSession

SEEN_CHECK_S = 0.5
"""How often what is on screen is looked at again, besides after every scroll, resize and redraw."""


class ReviewScreen(Screen[None]):
    """Review & commit.

    Args:
        review: the session's ``ReviewSession`` (or a repository path: the newest session recorded
            there is resumed).
        model: drafts the commit message (a ``frogtui.protocol.Model``; None: a summary is used).
        drafts: the model's drafts kept across reviews (the app's; default: this screen's own).
    """

    CSS_PATH = "review.tcss"
    BINDINGS = [
        Binding("ctrl+s", "commit", "Commit", priority=True),
        Binding("escape", "close", "Back"),
    ]

    PROGRESS_S = 0.25
    """The drafting line is redrawn at most this often."""

    def __init__(self, review: ReviewSession | str | os.PathLike[str], model: Any = None, drafts: Drafts | None = None) -> None:
        super().__init__()
        if not isinstance(review, ReviewSession):
            state = resume(review)
            if state is None:
                raise ValueError(f"{review} is not in a git repository")
            review = ReviewSession(state)
        self.review = review
        self.model = model
        self.selection = HunkSelection([])
        self.flagged: set[str] = set()
        """Changed files that decide what runs at the person's next commit (hooks, attributes)."""
        self._message_touched = False
        self._draft_text = ""
        self._draft_diff = ""
        """The accepted changes the drafted message describes."""
        self.drafts = drafts if drafts is not None else Drafts()
        self._drafting: threading.Event | None = None
        """Set to stop the draft in progress (None: no draft in progress)."""

    def compose(self) -> ComposeResult:
        yield Static("Review & commit", id="review-title")
        with Horizontal(id="review-main"):
            yield HunkTree("Changes", id="review-files")
            with DiffScroll(id="review-diff-scroll"):
                yield HunkDiff(id="review-diff")
        yield TextArea("", id="review-message")
        yield Static("", id="review-status")
        yield FittingFooter()

    def on_mount(self) -> None:
        self.reload()
        if self.review.choices.problem:
            self.notify(self.review.choices.problem, severity="warning", timeout=10)
        self.query_one(HunkTree).focus()
        self.redraft()
        self.set_interval(SEEN_CHECK_S, self._mark_seen)  # a notification over the diff goes away with no event

    # state ---------------------------------------------------------------------------------
    def reload(self) -> None:
        """Read the changes again (after a commit, discard or undo)."""
        self.selection = self.review.load()
        self.flagged = self.review.git_control_paths([f.path for f in self.selection.files])
        tree = self.query_one(HunkTree)
        line = max(tree.cursor_line, 0)
        tree.clear()
        tree.show_root = False
        tree.root.expand()
        nested = self.review.nested_created()
        for name in nested:
            tree.root.add_leaf(Text(f"{name}/ {NESTED_NOTE}", "bold reverse"))
        ignored = self.review.ignored_changed()
        for name in ignored:
            tree.root.add_leaf(Text(f"{name} {IGNORED_NOTE}", "bold reverse"))
        for change in self.selection.files:
            node = tree.root.add(self._file_label(change), data=change, expand=True)
            for hunk in change.review_hunks:
                node.add_leaf(self._hunk_label(hunk), data=hunk)
        if self.selection.files:
            flags = len(nested) + len(ignored)  # rows that only say something: the review's keys do nothing there
            tree.cursor_line = max(flags, min(line, flags + sum(1 + len(f.review_hunks) for f in self.selection.files) - 1))
        self._show(tree.cursor_node)
        self._status()

    def _file_label(self, change: FileChange) -> Text:
        note = {"added": " (new)", "deleted": " (deleted)", "binary": " (binary)"}.get(change.status, "")
        unseen = UNSEEN_NOTE if any(g.accepted and not g.seen for g in change.groups) else ""
        name = marked(change.path, keep_lines=False)  # the model's name: ⟨U+202E⟩ and ␊ drawn, never acted on
        label = Text(f"{mark(change.accepted, change.partly_accepted)} {name}{note}{ORIGIN_NOTES[change.origin]}{unseen}")
        if change.path in self.flagged and change.origin != "earlier":
            label.append(f" {CONTROL_NOTE}", "bold reverse")
        return label

    def _hunk_label(self, hunk: ReviewHunk) -> Text:
        unseen = UNSEEN_NOTE if any(g.accepted and not g.seen for g in hunk.groups) else ""
        label = marked(hunk.label, keep_lines=False)  # its @@ line quotes the file's text
        return Text(f"{mark(hunk.accepted, hunk.partly_accepted)} {label}{ORIGIN_NOTES[hunk.origin]}{unseen}")

    def _refresh_labels(self, change: FileChange | None = None) -> None:
        """Relabel the nodes of ``change`` (every file when None; with 2,000 files, relabelling
        all of them on each toggle takes seconds), and redraw."""
        self._relabel(change)
        self._show(self.query_one(HunkTree).cursor_node)
        self._status()

    def _relabel(self, change: FileChange | None) -> None:
        for file_node in self.query_one(HunkTree).root.children:
            if not isinstance(file_node.data, FileChange) or (change is not None and file_node.data is not change):
                continue
            file_node.set_label(self._file_label(file_node.data))
            for hunk_node in file_node.children:
                hunk_node.set_label(self._hunk_label(hunk_node.data))

    def _status(self, text: str = "") -> None:
        files = sum(1 for f in self.selection.files if any(g.accepted for g in f.groups))
        summary = f"{self.selection.accepted_count} of {len(self.selection.groups())} changes accepted, in {files} file(s)"
        unseen = len(self.selection.unseen_accepted())
        if unseen:
            summary += f"; {unseen} accepted hunk(s) not seen yet (] pages through the diff)"
        self.query_one("#review-status", Static).update(Text(f"{summary}. {text}".strip()))

    def _show(self, node: Any) -> None:
        diff = self.query_one(HunkDiff)
        scroll = self.query_one(DiffScroll)
        data = node.data if node is not None else None
        if isinstance(data, ReviewHunk):
            change, hunks = data.file, [data]
        elif isinstance(data, FileChange):
            change, hunks = data, data.review_hunks
        else:
            change = self.selection.files[0] if self.selection.files else None
            hunks = change.review_hunks if change is not None else []
        if diff.show(change, hunks, self._diff_width()):
            scroll.scroll_home(animate=False)
        self._title()
        self.call_after_refresh(self._mark_seen)

    def _diff_width(self) -> int:
        """The cells a diff row may take: the pane's inside, less the diff's padding."""
        return self.query_one(DiffScroll).scrollable_content_region.width - 2

    def _title(self) -> None:
        diff = self.query_one(HunkDiff)
        scroll = self.query_one(DiffScroll)
        scroll.border_title = Text(f"{diff.change.path} · {diff.position()}" if diff.change is not None else "")
        more = diff.page_number + 1 < diff.pages
        scroll.border_subtitle = "] next page" if more else ("[ previous page" if diff.page_number else "")

    @on(DiffScroll.Moved)
    def _moved(self) -> None:
        self.call_after_refresh(self._mark_seen)

    def _mark_seen(self) -> None:
        """Mark the change groups every row of which has now been on screen as seen."""
        scroll = self.query_one(DiffScroll)
        region = scroll.scrollable_content_region
        diff = self.query_one(HunkDiff)
        if diff.change is not None and 0 < self._diff_width() != diff.width_drawn:
            diff.show(diff.change, diff.hunks, self._diff_width())  # wrapped for another width: again, then look
            self._title()
            self.call_after_refresh(self._mark_seen)
            return
        if self.app.screen is not self:
            return
        top, left = round(scroll.scroll_y), round(scroll.scroll_x)
        done: list[ChangeGroup] = diff.mark_visible(top, region.height, left, region.width, self._uncovered)
        if not done or diff.change is None:
            return
        for group in done:
            group.seen = True
            self.review.choices.saw(diff.change, group)
        self._relabel(diff.change)
        self._status()

    def _uncovered(self, index: int, cells: int) -> bool:
        """Whether both ends of the diff row ``index`` rows below the pane's top, ``cells`` wide,
        are the diff's own on screen (a notification drawn over the pane hides what is under it)."""
        diff = self.query_one(HunkDiff)
        inside = self.query_one(DiffScroll).content_region
        y = inside.y + index
        for x in (inside.x + 1, inside.x + cells):  # the padding, then the row's last cell
            try:
                widget, _ = self.get_widget_at(x, y)
            except NoWidget:
                return False
            if widget is not diff:
                return False
        return True

    def _page_height(self) -> int:
        """How far ``]`` scrolls: the pane's height less the rows at its bottom that something
        (a notification) covers, so those rows come up uncovered (at least one row)."""
        scroll = self.query_one(DiffScroll)
        height = scroll.scrollable_content_region.height
        covered = 0
        while covered < height - 1 and not self._uncovered(height - 1 - covered, scroll.scrollable_content_region.width - 2):
            covered += 1
        return max(1, height - covered)

    def action_page(self, step: int) -> None:
        """Scroll the diff a screen down (``step`` 1) or up (-1), then on to the next or previous page."""
        scroll = self.query_one(DiffScroll)
        diff = self.query_one(HunkDiff)
        if step > 0 and scroll.scroll_y < scroll.max_scroll_y:
            scroll.scroll_to(y=scroll.scroll_y + self._page_height(), animate=False)
        elif step < 0 and scroll.scroll_y > 0:
            scroll.scroll_page_up(animate=False)
        elif diff.turn_page(step):
            scroll.scroll_home(animate=False)
            if step < 0:
                self.call_after_refresh(scroll.scroll_end, animate=False)
            self._title()
        else:
            self._status("This is the end of the diff." if step > 0 else "This is the start of the diff.")
        self.call_after_refresh(self._mark_seen)

    @on(Tree.NodeHighlighted)
    def _highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        self._show(event.node)

    @on(TextArea.Changed, "#review-message")
    def _edited(self, event: TextArea.Changed) -> None:
        if event.text_area.text != self._draft_text:
            self._message_touched = True

    # actions -------------------------------------------------------------------------------
    def _cursor(self) -> Any:
        node = self.query_one(HunkTree).cursor_node
        return node.data if node is not None else None

    def action_toggle(self) -> None:
        data = self._cursor()
        if isinstance(data, (ReviewHunk, FileChange)):
            data.toggle()
            change = data.file if isinstance(data, ReviewHunk) else data
            self.review.choices.choose(change, data.groups)
            self._refresh_labels(change)
            self._selection_changed()

    def action_toggle_file(self) -> None:
        data = self._cursor()
        change = data.file if isinstance(data, ReviewHunk) else data
        if isinstance(change, FileChange):
            change.toggle()
            self.review.choices.choose(change, change.groups)
            self._refresh_labels(change)
            self._selection_changed()

    @work(thread=True, group="choices")
    def _save_choices(self) -> None:
        try:
            self.review.choices.save()
        except GitFailed as err:
            call_while_shown(self.app, self.notify, f"Could not save your choices: {err.output.strip()}", severity="warning")

    def _selection_changed(self) -> None:
        """Remember the person's choice (across commits, reopening and resume), and keep an
        untouched drafted message true to what is accepted: a summary is redrafted at once; a
        model's draft is marked stale (commit then asks for ``m`` or an edit); with nothing drafted
        yet (nothing was accepted on opening), the first accepted change is drafted at once."""
        self._save_choices()
        if self._message_touched:
            return
        if self.model is None or (not self._draft_text and self._drafting is None):
            self.redraft()
        else:
            self._status("The accepted changes differ from the drafted message: press m to redraft it, or edit it.")

    def _go_to(self, hunk: ReviewHunk) -> None:
        """Put the cursor on ``hunk`` (its diff is drawn)."""
        tree = self.query_one(HunkTree)
        for file_node in tree.root.children:
            for node in file_node.children:
                if node.data is hunk:
                    tree.cursor_line = node.line
                    return

    def action_split(self) -> None:
        data = self._cursor()
        tree = self.query_one(HunkTree)
        if not isinstance(data, ReviewHunk) or not data.can_split:
            self._status("This hunk cannot be split further.")
            return
        pieces = data.file.split(data)
        node = tree.cursor_node
        assert node is not None and node.parent is not None
        file_node = node.parent
        file_node.remove_children()
        for hunk in data.file.review_hunks:
            file_node.add_leaf(self._hunk_label(hunk), data=hunk)
        self._refresh_labels(data.file)
        self._status(f"Split into {len(pieces)} hunks.")

    def action_redraft(self) -> None:
        self._message_touched = False
        self.redraft(again=True)

    def redraft(self, *, again: bool = False) -> None:
        """Draft the commit message from the accepted changes, in a thread worker; the model's
        draft for the same changes when it made one (unless ``again``: ``m``)."""
        diff = self.review.staged_diff(self.selection)
        if not diff:
            return
        if self.model is None:
            self._set_draft(summary_message(diff), diff)
            return
        kept = None if again else self.drafts.get(self.model, diff)
        if kept is not None:
            self._set_draft(kept, diff)
            return
        self.stop_drafting()
        self._drafting = threading.Event()
        self._status(f"Drafting the commit message with {self.model.name}… (Esc stops)")
        self._draft_worker(diff, self._drafting)

    def stop_drafting(self) -> bool:
        """Stop the draft in progress (the summary is used); False when none was."""
        if self._drafting is None or self._drafting.is_set():
            return False
        self._drafting.set()
        return True

    @work(thread=True, exclusive=True, group="draft")
    def _draft_worker(self, diff: str, cancel: threading.Event) -> None:
        started = shown = time.monotonic()

        def progress(pieces: int) -> None:
            nonlocal shown
            now = time.monotonic()
            if now - shown >= self.PROGRESS_S and not cancel.is_set():
                shown = now
                line = f"Drafting the commit message with {self.model.name}: {pieces} pieces, {now - started:.0f} s (Esc stops)"
                call_while_shown(self.app, self._drafting_status, line, cancel)

        message = draft_commit_message(self.model, diff, cancel=cancel, progress=progress)
        if not cancel.is_set():
            self.drafts.put(self.model, diff, message)
        call_while_shown(self.app, self._drafted, message, diff, cancel)

    def _drafting_status(self, line: str, cancel: threading.Event) -> None:
        if cancel is self._drafting and not cancel.is_set():
            self._status(line)

    def _drafted(self, message: str, diff: str, cancel: threading.Event) -> None:
        if cancel is not self._drafting:  # a newer draft started
            return
        self._drafting = None
        self._set_draft(message, diff)
        if cancel.is_set():
            self._status("Drafting stopped: the message is a summary of the files; m drafts again.")

    def _set_draft(self, message: str, diff: str) -> None:
        if self._message_touched:
            return
        self._draft_text = message
        self._draft_diff = diff
        self.query_one("#review-message", TextArea).load_text(message)
        self._status("Message drafted; edit it, then commit (ctrl+s).")

    def action_commit(self) -> None:
        message = self.query_one("#review-message", TextArea).text
        if not message.strip():
            self.notify("Write a commit message first.", severity="error")
            return
        if not self.selection.accepted_count:
            self.notify("Nothing is accepted: accept hunks with space first.", severity="warning")
            return
        unseen = self.selection.unseen_accepted()
        if unseen:
            self._go_to(unseen[0])
            self.notify(
                f"{len(unseen)} accepted hunk(s) were never shown in full, the first is {unseen[0].file.path} {unseen[0].label}: "
                "page through them with ] (or reject them with space) before committing.",
                severity="warning",
                timeout=10,
            )
            return
        if not self._message_touched and self._draft_diff != self.review.staged_diff(self.selection):
            self.notify(
                "The drafted message describes other changes than the accepted ones: press m to redraft it, or edit it.", severity="warning"
            )
            return
        self._status("Committing…")
        self._commit_worker(message)

    @work(thread=True, exclusive=True, group="git")
    def _commit_worker(self, message: str) -> None:
        try:
            result = self.review.commit(self.selection, message)
        except CommitFailed as err:
            call_while_shown(self.app, self._failed, str(err))
            return
        call_while_shown(self.app, self._committed, result.summary, result.notes)

    def _failed(self, text: str) -> None:
        self.notify(text, severity="error", timeout=15)
        self._status("Commit failed; nothing was lost.")

    def _committed(self, summary: str, notes: list[str]) -> None:
        self.notify(summary + "".join(f"\n{n}" for n in notes), timeout=8)
        self._message_touched = False
        self._draft_text = self._draft_diff = ""
        self.query_one("#review-message", TextArea).load_text("")
        self.reload()
        self._status(summary)

    def action_discard(self) -> None:
        paths = self.selection.paths(lambda g: g.origin == "session" and not g.accepted)
        if not paths:
            self._status("No rejected change of this session to discard.")
            return

        def answered(confirm: bool | None) -> None:
            try:
                result = self.review.discard_unaccepted(self.selection, confirm=bool(confirm))
            except ConfirmationNeeded:
                self._status("Nothing discarded.")
                return
            except GitFailed as err:
                self.notify(f"Could not discard (the files changed?): {err.output.strip()}", severity="error")
                return
            self.reload()
            self._status(result.summary)

        self.app.push_screen(ConfirmDiscard(paths), answered)

    def action_undo(self) -> None:
        problem = self.review.undo_problem()
        if problem:
            self.notify(problem, severity="warning")
            return
        result = self.review.undo_last_commit()
        self.reload()
        self.notify(result.summary)
        self._status(result.summary)

    def action_close(self) -> None:
        """Esc: stop the draft in progress; when none is, go back."""
        if not self.stop_drafting():
            self.dismiss(None)

    def on_unmount(self) -> None:
        self.stop_drafting()
