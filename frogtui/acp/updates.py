"""What the loop's events and tool calls look like in ACP: tool kinds, titles, locations, content
(diffs, notes, observations), stop reasons. Pure functions over frogtui's types and the SDK's
schema models; every text goes through ``limits``."""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from acp import schema
from acp.helpers import text_block, tool_content, tool_diff_content

from frogtui.acp.limits import DIFF_SIDE_BYTES, MAX_MESSAGE_BYTES, SHOWN_COMMAND_BYTES, TEXT_BYTES, cap_diff, cap_input, cap_text, json_size
from frogtui.protocol import Approval, Preview, ToolCall
from frogtui.terminal_text import marked
from frogtui.tools.proposals import Proposal, effect_texts
from frogtui.tools.specs import runs_commands, tool_spec

if TYPE_CHECKING:  # the policy is imported with the session, not at initialize (tests/acp/test_hygiene.py)
    from frogtui.approval.answer import Judged

STOP_REASONS: dict[str, schema.StopReason] = {
    "agent": "end_turn",
    "max_tokens_per_turn": "max_tokens",
    "max_turns": "max_turn_requests",
    "cancelled": "cancelled",
}
"""Leaf exit reasons with an ACP stop reason; the others (errors, a full context) end the turn
with a message saying why and ``end_turn``."""
TITLE_CHARS = 200
STREAM_CHARS = 4_000
"""How much of a running command's output is shown while it runs (the tail)."""
Content = schema.ContentToolCallContent | schema.FileEditToolCallContent


def stop_reason(exit_reason: str) -> schema.StopReason:
    return STOP_REASONS.get(exit_reason, "end_turn")


def end_message(exit_reason: str, error: str | None) -> str:
    """The message that tells the person why a run ended without an ACP stop reason of its own
    ('' for those that have one)."""
    if exit_reason in STOP_REASONS:
        return ""
    return f"\n\n[frogtui: the run ended with `{exit_reason}`{f': {error}' if error else ''}]"


def one_line(text: str, width: int = TITLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def tool_title(call: ToolCall) -> str:
    """What the editor shows as the call's title: ``Read calc.py``, a command itself."""
    spec = tool_spec(call.name)
    if spec is None:
        return one_line(call.name or "tool call")
    if runs_commands(spec):
        return one_line(marked(spec.subject(call.arguments) or spec.name))
    return one_line(spec.summary(call.arguments))


def locations(call: ToolCall, root: str) -> list[schema.ToolCallLocation] | None:
    """The file a path tool touches, as an absolute path (with the first line read, for Read)."""
    spec = tool_spec(call.name)
    path = call.arguments.get(spec.path_argument) if spec is not None and spec.path_argument else None
    if not isinstance(path, str) or not path:
        return None
    full = os.path.normpath(os.path.join(root, os.path.expanduser(path)))
    offset = call.arguments.get("offset")
    line = offset if spec is not None and spec.kind == "read" and isinstance(offset, int) and offset > 0 else None
    return [schema.ToolCallLocation(path=full, line=line)]


def text_content(text: str) -> schema.ContentToolCallContent:
    return tool_content(text_block(cap_text(text)))


def fenced(text: str, info: str = "") -> str:
    """``text`` as a Markdown code block whose fence no line of it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def diff_content(preview: Preview) -> tuple[list[Content], bool]:
    """A Write/Edit's change as an ACP diff (capped), with a note when only part is shown; and
    whether every changed line is in it."""
    capped = cap_diff(preview.before, preview.after)
    items: list[Content] = [tool_diff_content(preview.abs_path, capped.new_text, capped.old_text)]
    if capped.note:
        items.append(text_content(capped.note))
    return items, capped.complete


def proposal_content(proposal: Proposal, judged: Sequence[Judged]) -> tuple[list[Content], bool]:
    """A proposal's effects as ACP content: a diff per text file the command added, changed or
    deleted (a deletion: the old text against nothing), one line for each other effect (a
    folder with its files, a link, a mode, a binary), each with what the rules say of it; and
    whether every changed line is in it."""
    items: list[Content] = [text_content("The command ran as a proposal; nothing it did is in your files yet. Its effects:")]
    complete = True
    from frogtui.approval.proposals import for_a_person  # a proposal was judged: the policy is loaded

    shown, groups, _unlisted = for_a_person(judged)
    for one in shown:
        effect = one.effect
        items.append(text_content(f"- {marked(one.line())}"))  # a file name's invisible characters drawn as marks
        sides = effect_texts(proposal, effect.path, effect.source) if effect.after is None or effect.after.kind == "file" else None
        if sides is None or sides == (None, None) or effect.kind == "mode" or (effect.before is not None and effect.before.kind != "file"):
            continue
        before, after = sides
        capped = cap_diff(before, after or "")
        items.append(tool_diff_content(os.path.join(str(proposal.root), effect.path), capped.new_text, capped.old_text))
        if capped.note:
            items.append(text_content(capped.note))
        complete = complete and capped.complete
    items.extend(text_content(f"- {marked(line)}") for line in groups)
    return items, complete


def decision_note(approval: Approval) -> str:
    """Who let the call run or stopped it, and by which rule (shown in the call's content)."""
    verb = "Allowed" if approval.allowed else "Denied"
    if approval.by == "display":
        return f"Denied without asking you: {approval.reason}"
    if approval.by == "person":
        if not approval.allowed:
            return "Denied by you."
        return f"Always allowed for this session: `{approval.rule}`." if approval.reason.startswith("always") else "Allowed once by you."
    who = {"floor": "the floor (no rule or mode lifts it)", "mode": "the approval mode"}.get(approval.by, "rule")
    rule = f" `{approval.rule}`" if approval.rule else ""
    reason = f": {approval.reason}" if approval.reason else ""
    return f"{verb} by {who}{rule}{reason}"


@dataclass
class ToolCallView:
    """Everything the client has been told about one tool call (``content`` replaces, so it is
    resent whole)."""

    call: ToolCall
    root: str
    notes: list[str] = field(default_factory=list)
    diff: list[Content] = field(default_factory=list)
    diff_complete: bool = True
    """Every changed line of the Write/Edit is in ``diff``."""
    output: list[Content] = field(default_factory=list)
    streamed: str = ""
    """The tail of a running command's output (``STREAM_CHARS`` at most)."""

    @property
    def kind(self) -> schema.ToolKind:
        spec = tool_spec(self.call.name)
        return spec.kind if spec is not None else "other"

    @property
    def command(self) -> str | None:
        """The command of a call that runs one (None for other calls)."""
        spec = tool_spec(self.call.name)
        return spec.subject(self.call.arguments) if runs_commands(spec) else None

    def content(self) -> list[Content]:
        """What the editor shows of the call: for Bash the command itself whenever the title does
        not show it exactly (fenced, whole up to ``SHOWN_COMMAND_BYTES``, its invisible and
        direction-changing characters drawn as marks, ``terminal_text.marked``), then the model's
        description of it, marked as the model's; notes; the diff; the output."""
        items: list[Content] = []
        command = self.command
        if command is not None and tool_title(self.call) != command:  # a mark (⟨U+202E⟩) is no longer the command
            items.append(text_content(fenced(marked(command), "sh")))
        description = self.call.arguments.get("description") if command is not None else None
        if isinstance(description, str) and description.strip():
            items.append(text_content(f"The model describes it as: {description.strip()}"))
        items.extend(text_content(note) for note in self.notes)
        return items + self.diff + self.output

    def start(self) -> schema.ToolCallStart:
        return schema.ToolCallStart(
            session_update="tool_call",
            tool_call_id=self.call.id,
            title=tool_title(self.call),
            kind=self.kind,
            status="pending",
            content=self.content() or None,
            locations=locations(self.call, self.root),
            raw_input=cap_input(self.call.arguments),
        )

    def progress(self, status: schema.ToolCallStatus | None = None, *, with_content: bool = True) -> schema.ToolCallProgress:
        return schema.ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=self.call.id,
            status=status,
            content=self.content() if with_content else None,
        )

    def permission_call(self, why: str) -> schema.ToolCallUpdate:
        """The full call, as ``session/request_permission`` carries it (check ``unshowable`` first)."""
        budget = SHOWN_COMMAND_BYTES + 1_000 if self.command is not None else None
        return schema.ToolCallUpdate(
            tool_call_id=self.call.id,
            title=tool_title(self.call),
            kind=self.kind,
            status="pending",
            content=[text_content(why), *self.content()],
            locations=locations(self.call, self.root),
            raw_input=cap_input(self.call.arguments, budget) if budget else cap_input(self.call.arguments),
        )

    def unshowable(self, why: str) -> str:
        """Why a permission request could not show the person all that "Allow once" would run
        (then frogtui refuses the call without asking), or ''."""
        command = self.command
        if command is not None and json_size(marked(command)) > SHOWN_COMMAND_BYTES:  # as drawn, marks included
            return (f"the command is {json_size(marked(command)):,} bytes long, too long to show the person whole in the editor "
                    f"(at most {SHOWN_COMMAND_BYTES:,} bytes), so frogtui refused it without asking: run shorter commands, "
                    "or write a script with Write and run that")
        if not self.diff_complete:
            return (f"the change is too long to show the person whole in the editor (at most {DIFF_SIDE_BYTES:,} bytes of "
                    "changed text a side), so frogtui refused it without asking: make it in smaller Write or Edit calls")
        size = len(self.permission_call(why).model_dump_json(by_alias=True, exclude_none=True))
        if size > MAX_MESSAGE_BYTES:
            return (f"the call is too long to show the person whole in the editor ({size:,} bytes, at most {MAX_MESSAGE_BYTES:,}), "
                    "so frogtui refused it without asking: make it smaller")
        return ""

    def stream(self, text: str) -> None:
        """Add output of the running command (its last ``STREAM_CHARS`` are shown)."""
        self.streamed += text
        cut = len(self.streamed) > STREAM_CHARS
        if cut:
            self.streamed = self.streamed[-STREAM_CHARS:]
        self.output = [text_content(fenced(("…\n" if cut else "") + self.streamed))]

    def set_output(self, observation: str) -> None:
        self.output = [text_content(fenced(cap_text(observation, TEXT_BYTES - 1_000)))] if observation else []
