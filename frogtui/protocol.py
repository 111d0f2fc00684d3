"""The vocabulary shared by the agent loop, the models, the approvers and the front ends.

This module sits at the bottom of the dependency graph (beside ``config`` and ``errors``): it holds
plain data types and two of the three injected protocols of the loop (``Model``, ``Approver``;
the third, ``EventSink``, lives beside the events it receives in ``agent/events.py``). Nothing here
does I/O.
"""
from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class ToolCall:
    """One tool call proposed by the model.

    Attributes:
        id: Call id, unique within the run (``call_<step>_<n>`` when the model gave none).
        name: Tool name exactly as the model wrote it (``Read``, ``Bash``...).
        arguments: Arguments after conversion by the tool's schema.
        raw: The raw text of the call as the model emitted it (empty for structured calls).
        error: Set when the call could not be parsed or converted; the loop turns it into the
            observation instead of running anything.
    """

    id: str
    name: str
    arguments: dict[str, Any]
    raw: str = ""
    error: str | None = None


@dataclass(frozen=True)
class Usage:
    """Per-step token accounting reported by a model for one assistant turn."""

    prompt_tokens: int = 0
    """Tokens in the whole prompt of this turn."""
    evaluated_tokens: int = 0
    """Prompt tokens actually run through the model (the rest came from cache)."""
    cached_tokens: int = 0
    """Prompt tokens reused from the previous step."""
    generated_tokens: int = 0
    """Tokens sampled in this turn."""
    ttft_s: float = 0.0
    """Seconds from the start of the turn to the first generated token."""
    gen_tok_s: float = 0.0
    """Generation speed of this turn in tokens per second."""

    def as_dict(self) -> dict[str, Any]:
        """The fields as the trajectory's ``usage`` holds them (seconds and speed rounded)."""
        return {**dataclasses.asdict(self), "ttft_s": round(self.ttft_s, 4), "gen_tok_s": round(self.gen_tok_s, 2)}


@dataclass(frozen=True)
class TurnEnd:
    """The last item a model yields for a turn."""

    finish_reason: Literal["stop", "length", "cancelled", "repeat_text"]
    """``repeat_text``: the loop ended the turn, its text repeating (``agent/runaway.py``)."""
    usage: Usage = field(default_factory=Usage)


ModelItem = str | ToolCall | TurnEnd
"""What ``Model.stream_turn`` yields: raw text pieces (fed to the streaming parser), already
structured tool calls (servers that return ``tool_calls``), and exactly one final ``TurnEnd``."""


@runtime_checkable
class Model(Protocol):
    """Something that turns messages into a stream of text (and maybe structured tool calls)."""

    name: str
    """Human-readable model name, recorded in the trajectory's ``model``."""
    context_size: int | None
    """Total context window in tokens, when known."""
    opens_reasoning: bool
    """True when the generation prompt already opened ``<think>`` (Qwen3.5 with thinking), so the
    first text the model emits is reasoning until ``</think>``."""

    def stream_turn(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int,
        cancel: threading.Event,
    ) -> Iterator[ModelItem]:
        """Generate one assistant turn for ``messages`` (OpenAI format, tool-call arguments as JSON
        strings). Yields text pieces and/or ``ToolCall`` objects, then one ``TurnEnd``.

        Raises:
            frogtui.errors.ModelError: the model could not answer (``llm_query_error``).
            frogtui.errors.ContextOverflowError: the prompt does not fit (``max_context_len``).
        """
        ...

    def close(self) -> None:
        """Release the model's resources."""
        ...


@runtime_checkable
class KeepsState(Protocol):
    """A model that can save its state after each turn in a session's folder and resume from it
    (a local GGUF: ``models/local.py``), so a resumed session evaluates only what it adds."""

    def keep_state(self, folder: Path | None) -> None:
        """Save after each turn in ``folder`` and resume from there; None stops it."""
        ...


@dataclass(frozen=True)
class Preview:
    """What a Write or Edit would do, computed before asking for approval."""

    path: str
    """Display path (relative to the repository root when inside it)."""
    abs_path: str
    """Resolved absolute path."""
    before: str | None
    """Current text of the file, None when it does not exist (or is not text)."""
    after: str
    """Text the file would have after the call."""
    before_hash: str | None
    """sha256 of the file's bytes when the preview was made, None when it did not exist. An approved
    change is applied only while the file still has this hash."""


@dataclass(frozen=True)
class ApprovalRequest:
    """A question to the approver: may this call run?"""

    call: ToolCall
    step: int
    root: str
    """Repository root (the Bash working folder)."""
    preview: Preview | None = None
    """Set for Write and Edit calls whose change could be computed."""
    repeat: str = ""
    """Set when the call repeats (``agent.repeats``): why, in words for the person and the model
    (``this exact call ran twice already in a row, with the same result``). A repeat is asked about
    even when a rule allows the call (``approval.modes.apply_mode``)."""
    proposable: bool = False
    """The command can run as a proposal (``tools.proposals``): on a copy-on-write view, its
    effects judged before any lands. The gate then answers what it would ask about with
    ``Approval.proposal`` instead of asking about the command's text."""


Span = tuple[int, int, int, int]
"""One hunk of a change to a text file: the old file's lines ``[old_start, old_end)`` replaced by
the new file's lines ``[new_start, new_end)``, 0-based (an empty side's start: where it would be)."""


@dataclass(frozen=True)
class FileHunks:
    """A proposal's text file accepted in part: which hunks of its change land (``tools.effect_hunks``)."""

    path: str
    accepted: tuple[Span, ...]
    rejected: tuple[Span, ...]
    """Together with ``accepted``: every hunk the person was shown, each changed line in one."""


@dataclass(frozen=True)
class Approval:
    """The approver's answer."""

    decision: Literal["allow", "deny"]
    reason: str = ""
    """Why. For a denial this becomes the observation the model sees (when non-empty)."""
    by: str = "rule"
    """Who decided: ``rule``, ``person``, ``mode`` (e.g. ``--approve all``) or ``floor``."""
    rule: str = ""
    """The rule that decided, when a rule did (e.g. ``Bash: pytest *``)."""
    arguments: dict[str, Any] | None = None
    """Replacement arguments, when the person edited the call (e.g. the Bash command)."""
    read_only: bool = False
    """The policy proved this Bash command can only read files and print (``Decision.read_only``,
    copied by ``approval.apply_mode``): no checkpoint is taken before it (never for edited arguments)."""
    proposal: bool = False
    """Run the command as a proposal: what it does is judged before it lands (``Approver.judge_proposal``)."""
    accepted: tuple[str, ...] | None = None
    """For a proposal's effects: the paths of those to land (a partial acceptance); None: all."""
    hunks: tuple[FileHunks, ...] = ()
    """For a proposal: its text files accepted in part (their paths are in ``accepted``), with the
    hunks of each that land; an accepted file not named here lands whole."""
    run_for_real: bool = False
    """For a proposal: the person chose to run the command for real instead (directly, checkpointed,
    with the network as configured); none of the proposal's effects lands."""

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"


@runtime_checkable
class Approver(Protocol):
    """Answers "may I run this action?" before every tool call."""

    def approve(self, request: ApprovalRequest) -> Approval: ...
