"""Events the agent loop emits to its sink. Nouns in the past tense for what happened."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args, runtime_checkable

from frogtui.protocol import Approval, ToolCall, Usage

if TYPE_CHECKING:  # the front ends import the events before the tools
    from frogtui.tools.observations import ToolOutcome

ExitReason = Literal[
    "agent",
    "max_turns",
    "cancelled",
    "max_context_len",
    "max_tokens_per_turn",
    "llm_query_error",
    "tool_error",
]
"""Leaf's closed set of exit reasons."""
EXIT_REASONS: tuple[ExitReason, ...] = get_args(ExitReason)


@dataclass(frozen=True)
class RunStarted:
    task: str
    model: str
    root: str


@dataclass(frozen=True)
class UserMessageAdded:
    """A follow-up message from the person (the task is reported by ``RunStarted``)."""

    text: str


@dataclass(frozen=True)
class StepEvent:
    """Something that happened in one step."""

    step: int
    """1-based step number."""


@dataclass(frozen=True)
class StepStarted(StepEvent):
    max_steps: int


@dataclass(frozen=True)
class TextDelta(StepEvent):
    text: str


class ReasoningDelta(TextDelta):
    """A piece of the model's reasoning, as it streams."""


class AnswerDelta(TextDelta):
    """A piece of the model's answer, as it streams."""


@dataclass(frozen=True)
class CallEvent(StepEvent):
    """Something that happened to one tool call."""

    call: ToolCall


class ToolCallProposed(CallEvent):
    """The parser read a whole call (converted; not yet approved)."""


@dataclass(frozen=True)
class ApprovalAnswered(CallEvent):
    approval: Approval
    repeat: str = ""
    """Set when the call was asked about as a repeat (``ApprovalRequest.repeat``)."""


class ToolStarted(CallEvent):
    """An allowed call starts running."""


@dataclass(frozen=True)
class ToolOutput(StepEvent):
    """Output of a running Bash command as it is read (stdout and stderr pieces as they come),
    before its ``ToolFinished``; the observation the model sees is still ``ToolFinished``'s. Not a
    ``CallEvent``: a front end that redraws a call's line on each of those need not do it per piece."""

    call: ToolCall
    text: str


@dataclass(frozen=True)
class ToolFinished(CallEvent):
    """A call ended: it ran, or it did not (denied, invalid, interrupted before it ran)."""

    outcome: ToolOutcome
    """How it ended, as data (``ok``, ``exit_code``, ``kind``...) beside the observation the model sees."""
    duration_s: float = 0.0

    @property
    def observation(self) -> str:
        return self.outcome.observation

    @property
    def exit_code(self) -> int | None:
        """A command's exit code; None for other tools, for a timeout and for a call that did not run."""
        return self.outcome.exit_code

    @property
    def ok(self) -> bool:
        """False when the observation is an error (exception, denial, timeout)."""
        return self.outcome.ok

    @property
    def ran(self) -> bool:
        """False when the call was denied or invalid and nothing ran."""
        return self.outcome.ran


@dataclass(frozen=True)
class StepUsage(StepEvent):
    usage: Usage
    context_tokens: int
    """Prompt plus generated tokens of this step: the context now in use."""
    budget: int = 0
    """The conversation's context budget (``Agent.context_budget``)."""
    session_tokens: int = 0
    """Tokens of the whole session so far: each conversation's context added up (a hand-off
    starts a new conversation; its context adds to the earlier ones')."""


@dataclass(frozen=True)
class AssistantTurnEnded(StepEvent):
    answer: str
    reasoning: str
    calls: tuple[ToolCall, ...]
    finish_reason: str


@dataclass(frozen=True)
class RunEnded:
    exit_reason: ExitReason
    final_message: str
    error: str | None = None
    n_steps: int = 0
    trajectory: dict[str, Any] = field(default_factory=dict, repr=False)
    patch: str = field(default="", repr=False)
    """The session's changes when the run ended (its git diff; '' outside git)."""


@dataclass(frozen=True)
class HandedOff:
    """A fresh conversation started from a hand-off (``Agent.hand_off``): a new run in the same
    session, whose first user message is ``text``."""

    text: str
    previous_id: str
    """The earlier conversation's ``trajectory_id``."""
    trajectory_id: str
    """The new conversation's."""


AgentEvent = (
    RunStarted
    | UserMessageAdded
    | HandedOff
    | StepStarted
    | ReasoningDelta
    | AnswerDelta
    | ToolCallProposed
    | ApprovalAnswered
    | ToolStarted
    | ToolOutput
    | ToolFinished
    | StepUsage
    | AssistantTurnEnded
    | RunEnded
)
"""Everything the loop emits."""


@runtime_checkable
class EventSink(Protocol):
    """Wants to know what happened. Called synchronously from the loop's thread."""

    def emit(self, event: AgentEvent) -> None: ...
