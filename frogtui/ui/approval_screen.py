"""The approval modal shown for every ``ask``: what would run (or the diff), where, and why the
policy asks (or that the call repeats, even when a rule would allow it). The agent's worker waits
on the answer, so nothing runs while it is open.

Keys: y allow once · a always allow (the narrow rule is shown) · n deny · r deny with a reason ·
e edit the command (Bash) · Esc interrupt the run. A command that ran as a proposal: y applies
the ticked effects, and of a new or changed text file (shown as the review's hunks) the accepted
hunks: space accepts or rejects the hunk under the cursor, ↑/↓ move between hunks, Tab between
effects; x runs the command for real instead.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Checkbox, Input, Static

from frogtui.approval.answer import PersonAnswer
from frogtui.protocol import FileHunks
from frogtui.terminal_text import marked
from frogtui.ui.diffmodel import FileDiff
from frogtui.ui.diffview import DiffView
from frogtui.ui.messages import ApprovalRequested

if TYPE_CHECKING:  # with the first proposal's question
    from frogtui.ui.proposal_hunks import ProposalHunks

PROPOSAL_OUTPUT_LINES = 20
"""A proposal's output lines shown in the modal (the rest is counted)."""


def display_path(path: str | os.PathLike[str]) -> str:
    """A path as people write it: the home folder as ``~``."""
    text = str(path)
    home = os.path.expanduser("~")
    if home not in ("", "/") and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")):]
    return text


DIALOG_SHARE = 0.9
"""The dialog's most width and height, as a share of the screen's (``approval_screen.tcss``)."""
BODY_MIN_LINES = 3
"""The body's fewest lines, however small the screen."""
DIFF_MAX_LINES = 24
"""The most lines a Write/Edit diff takes in the modal (it scrolls)."""


ITEM_MAX_LINES = 2
"""The most lines one key's label may take in the key row; a longer one (the rules of a command
of many parts) uses its short label, and the body lists it in full."""


class KeyLegend(Widget):
    """The modal's keys, ``[y] allow once   [n] deny …``, wrapped between items, never inside one
    (a line break between ``e`` and ``edit command`` reads as two keys). An item may carry a short
    label, used when the full one would take more than ``ITEM_MAX_LINES`` lines."""

    DEFAULT_CSS = "KeyLegend { height: auto; }"
    GAP = "   "

    def __init__(self, items: list[tuple[str, str]] | list[tuple[str, str, str | None]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[tuple[str, str, str | None]] = [(item[0], item[1], item[2] if len(item) > 2 else None) for item in items]

    def _too_long(self, key: str, label: str, width: int) -> bool:
        return Text.assemble(f" {key} ", f" {label}").cell_len > ITEM_MAX_LINES * max(width, 1)

    def shortened(self, width: int) -> bool:
        """Whether some item shows its short label at this width."""
        return any(short is not None and self._too_long(key, label, width) for key, label, short in self.items)

    def lines(self, width: int) -> list[Text]:
        """The legend laid out in ``width`` cells: an item wider than that (a long rule) is wrapped
        here, so that the height asked for is the height drawn."""
        lines: list[Text] = [Text()]
        for key, label, short in self.items:
            if short is not None and self._too_long(key, label, width):
                label = short
            item = Text.assemble((f" {key} ", "reverse"), f" {label}")
            line = lines[-1]
            if line.cell_len and line.cell_len + len(self.GAP) + item.cell_len > width:
                lines.append(Text())
                line = lines[-1]
            if line.cell_len:
                line.append(self.GAP)
            line.append_text(item)
        console = self.app.console if self.is_attached else Console(width=width)
        return [piece for line in lines for piece in (line.wrap(console, width) if line.cell_len > width else [line])]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))

    def render(self) -> Text:
        return Text("\n").join(self.lines(self.size.width or 80))


class ApprovalScreen(ModalScreen[PersonAnswer | None]):
    """Asks the person about one call. Dismissed with a ``PersonAnswer`` (None when interrupted)."""

    CSS_PATH = "approval_screen.tcss"
    AUTO_FOCUS = "#approval-diff"

    BINDINGS = [
        Binding("y", "answer('once')", "Allow once"),
        Binding("a", "answer('always')", "Always allow"),
        Binding("n", "answer('deny')", "Deny"),
        Binding("r", "reason", "Deny with reason"),
        Binding("e", "edit", "Edit command"),
        Binding("x", "run_for_real", "Run for real", show=False),
        Binding("escape", "escape", "Interrupt"),
    ]

    def __init__(self, asked: ApprovalRequested, heading: str = "") -> None:
        """``heading``: who asks, before the step in the title (``Attempt 2 of 4``)."""
        super().__init__()
        self.asked = asked
        self.heading = heading
        self.call = asked.request.call
        if self.is_bash or asked.diff is None:  # the diff has the focus (its keys: scroll, s); else the body (arrows scroll it)
            self.AUTO_FOCUS = "#approval-body"

    @property
    def is_bash(self) -> bool:
        """The call runs a command (its spec's kind is ``execute``): shown as the command, editable."""
        from frogtui.tools.specs import runs_commands

        return runs_commands(self.call.name)

    def compose(self) -> ComposeResult:
        request = self.asked.request
        with Vertical(id="approval-dialog") as dialog:
            asked = f"apply what {self.call.name} did" if self.asked.effects else f"approve {self.call.name}"
            title = f"step {request.step} · {asked}?"
            dialog.border_title = f"{self.heading} · {title}" if self.heading else title[0].upper() + title[1:]
            with VerticalScroll(id="approval-body"):  # scrolls; the inputs and the keys below it stay on screen
                yield from self._body()
            yield Input(placeholder="Why? (sent to the model; Enter denies, Esc goes back)", id="approval-reason")
            yield Input(value=str(self.call.arguments.get("command", "")), id="approval-edit", select_on_focus=False)
            yield KeyLegend(self._keys(), id="approval-keys")

    def _body(self) -> ComposeResult:
        """What would run (or the diff), where, and why the policy asks."""
        request, decision = self.asked.request, self.asked.decision
        if self.is_bash:
            description = str(self.call.arguments.get("description") or "").strip()
            if description:
                yield Static(Text(f"the model says: {description}"), id="approval-description")
            yield Static(Text(marked(str(self.call.arguments.get("command", "")))), id="approval-command")  # ⟨U+202E⟩: drawn as it runs
            timeout = self.call.arguments.get("timeout")
            sandbox = "on" if self.asked.sandboxed else "OFF: the command runs with your permissions"
            facts = f"folder  {display_path(request.root)}\nsandbox {sandbox}"
            if timeout:
                facts += f"\ntimeout {timeout}s"
            yield Static(Text(facts), id="approval-facts")
            if self.asked.effects or self.asked.output:
                yield from self._proposal()
        elif self.asked.diff is not None:
            yield DiffView(self.asked.diff, wrap=True, id="approval-diff")  # every line drawn whole: long ones wrapped, never cut
        else:
            yield Static(Text(repr(self.call.arguments)), id="approval-command")
        rules = self.asked.session_rule.split("; ") if self.asked.session_rule else []
        listed = "always allow (a) would store:\n" + "\n".join(f"  {rule}" for rule in rules)
        yield Static(Text(listed), id="approval-always")  # shown by _fit_body when the key row has no room for it
        if request.repeat:
            yield Static(Text(f"↻ Repeat: {request.repeat}. Is the model going round in circles?"), id="approval-repeat")
        if request.repeat and decision.kind == "allow":
            why = f"asked because it repeats; rule {decision.rule} would allow it"
        else:
            why = f"asked by rule {decision.rule}" + (f": {decision.reason}" if decision.reason else "")
        if decision.justification:
            why += f"\nwhy: {decision.justification}"  # the rule's justification, in its writer's words
        yield Static(Text(why), id="approval-rule")

    def _proposal(self) -> ComposeResult:
        """A command that ran as a proposal: its output, then each effect (with what the rules say
        of it, ticked: untick one to leave it out) and a text file's diff, deletions included (a
        new or changed one's as hunks, each accepted or rejected on its own): y applies the ticked
        ones (the accepted hunks), n none."""
        from frogtui.ui.proposal_hunks import ProposalHunks
        from frogtui.vcs.hunks import FileChange

        lines = self.asked.output.splitlines()
        shown = "\n".join(marked(line) for line in lines[:PROPOSAL_OUTPUT_LINES])
        more = f"\n… {len(lines) - PROPOSAL_OUTPUT_LINES} more line(s)" if len(lines) > PROPOSAL_OUTPUT_LINES else ""
        yield Static(Text("it ran as a proposal: nothing of it is in your files yet\n" + shown + more),
                     id="approval-output", classes="proposal")
        for n, (path, line, diff) in enumerate(self.asked.effects):
            if not path:  # a group line (ignored paths by folder, or the rest past the limit): lands with the ticked
                yield Static(Text(marked(line)), classes="proposal-group")
                continue
            yield Checkbox(Text(marked(line)), value=True, id=f"proposal-pick-{n}", classes="proposal-effect")
            if isinstance(diff, FileChange):
                yield ProposalHunks(diff, id=f"proposal-hunks-{n}", classes="proposal-diff")
            elif diff is not None:
                yield DiffView(diff, id=f"proposal-diff-{n}", classes="proposal-diff")

    def on_resize(self) -> None:
        if self.query(KeyLegend):  # not while the screen is removed (dismissed, the app closing): its widgets go first
            self._fit_body()

    def _fit_body(self) -> None:
        """The body (command, diff, rules) gets what the dialog's 90% of the screen leaves once
        its border, the key row and an open input have their lines, and scrolls beyond: the keys
        are always on screen (at 80x24 too)."""
        dialog = self.query_one("#approval-dialog")
        width = int(self.size.width * DIALOG_SHARE) - 4  # border and padding
        legend = self.query_one(KeyLegend)
        keys = len(legend.lines(max(width, 1))) + 1  # and its margin
        self.query_one("#approval-always").display = legend.shortened(max(width, 1))
        box = 4 if self._input_open() is not None else 0  # an Input (3) and its margin
        room = int(self.size.height * DIALOG_SHARE) - dialog.styles.border.spacing.height - keys - box
        self.query_one("#approval-body").styles.max_height = max(room, BODY_MIN_LINES)
        self.call_after_refresh(self._fit_diff, max(room, BODY_MIN_LINES))

    def _fit_diff(self, room: int) -> None:
        """The diff (which has the focus, so the keys scroll it and not the body) gets the body's
        lines less what else the body shows (the rule, a repeat, the rules listed), so that its
        last line and the rule below it are drawn, not cut off at the body's edge."""
        diff = self.query("#approval-diff")
        if not diff:
            return
        view = diff.first()
        others = sum(child.outer_size.height + child.styles.margin.top + child.styles.margin.bottom
                     for child in self.query_one("#approval-body").children if child is not view and child.display)
        view.styles.max_height = max(min(DIFF_MAX_LINES, room - others - view.styles.margin.top), BODY_MIN_LINES)

    def _keys(self) -> list[tuple[str, str, str | None]]:
        rules = self.asked.session_rule.split("; ") if self.asked.session_rule else []
        always = f"always allow: {self.asked.session_rule}" if rules else "always allow: no safe rule, allows once"
        short = None
        if rules:
            short = "always allow: the rule listed above" if len(rules) == 1 else f"always allow: the {len(rules)} rules listed above"
        if self.asked.effects:  # a proposal: the question is whether what it did lands
            keys: list[tuple[str, str, str | None]] = [("y", "apply the ticked", None), ("a", f"apply, {always}", short),
                                                       ("n", "reject", None), ("r", "reject with reason", None),
                                                       ("x", "run it for real (network as configured)", "run for real")]
            if any(not isinstance(diff, FileDiff) and diff is not None for _path, _line, diff in self.asked.effects):
                keys += [("space", "accept/reject the hunk", None), ("↑↓", "hunks", None), ("Tab", "next effect", None)]
        else:
            keys = [("y", "allow once", None), ("a", always, short), ("n", "deny", None), ("r", "deny with reason", None)]
        if self.is_bash and not self.asked.effects:
            keys.append(("e", "edit command", None))
        keys.append(("Esc", "interrupt", None))
        return keys

    def _input_open(self) -> Input | None:
        for widget in self.query(Input):
            if widget.has_class("-open"):
                return widget
        return None

    def action_answer(self, choice: str) -> None:
        if self._input_open() is None:
            taken = choice not in ("deny", "run")
            self.dismiss(PersonAnswer(choice, accepted=self._picked() if taken else None, hunks=self._hunks() if taken else ()))  # type: ignore[arg-type]

    def action_run_for_real(self) -> None:
        """A proposal: run the command for real instead (directly, the network as configured)."""
        if self.asked.effects or self.asked.output:
            self.action_answer("run")

    def _picked(self) -> tuple[str, ...] | None:
        """A proposal: the paths of the effects left ticked (None: all of them, or no proposal)."""
        listed = [(n, path) for n, (path, _line, _diff) in enumerate(self.asked.effects) if path]
        picked = tuple(path for n, path in listed if self.query_one(f"#proposal-pick-{n}", Checkbox).value)
        return None if len(picked) == len(listed) else (*picked, *self.asked.unlisted)

    def _hunks(self) -> tuple[FileHunks, ...]:
        """A proposal: its ticked text files of which only some hunks are accepted, with those hunks."""
        from frogtui.ui.proposal_hunks import ProposalHunks

        chosen = []
        for n, (path, _line, _diff) in enumerate(self.asked.effects):
            views = self.query(f"#proposal-hunks-{n}")
            if not views or not self.query_one(f"#proposal-pick-{n}", Checkbox).value:
                continue
            view = views.first(ProposalHunks)
            if view.accepted is None:
                accepted, rejected = view.choice()
                chosen.append(FileHunks(path, accepted, rejected))
        return tuple(chosen)

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        """A text file's tick takes or leaves all of its hunks (and none accepted unticks it)."""
        from frogtui.ui.proposal_hunks import ProposalHunks

        number = (event.checkbox.id or "").removeprefix("proposal-pick-")
        views = self.query(f"#proposal-hunks-{number}") if number.isdigit() else None
        if views:
            view = views.first(ProposalHunks)
            if event.value and view.accepted is False:
                view.set_all(True)
            elif not event.value and view.accepted is not False:
                view.set_all(False)

    def on_proposal_hunks_toggled(self, event: ProposalHunks.Toggled) -> None:
        """Hunks taken or left: the file stays ticked while one of its hunks is accepted."""
        number = (event.view.id or "").removeprefix("proposal-hunks-")
        box = self.query_one(f"#proposal-pick-{number}", Checkbox)
        ticked = event.view.accepted is not False
        if box.value != ticked:
            box.value = ticked

    def action_reason(self) -> None:
        self._open_input("#approval-reason")

    def action_edit(self) -> None:
        if self.is_bash and not self.asked.effects:  # a proposal already ran: no command to edit
            self._open_input("#approval-edit")

    def _open_input(self, widget_id: str) -> None:
        if self._input_open() is not None:
            return
        box = self.query_one(widget_id, Input)
        box.add_class("-open")
        self._fit_body()
        box.focus()
        box.cursor_position = len(box.value)  # to add to the command: the cursor at its end, nothing selected

    async def action_escape(self) -> None:
        box = self._input_open()
        if box is not None:
            box.remove_class("-open")
            self._fit_body()
            self.set_focus(self.query_one("#approval-diff") if self.query("#approval-diff") else self.query_one("#approval-body"))
            return
        await self.app.run_action("interrupt")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "approval-reason":
            self.dismiss(PersonAnswer("deny", reason=event.value.strip()))
        elif event.input.id == "approval-edit":
            command = event.value.strip()
            if not command:
                self.notify("The command is empty; Esc goes back.", severity="warning")
                return
            self.dismiss(PersonAnswer("edit", arguments={**self.call.arguments, "command": command}))
