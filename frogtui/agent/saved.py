"""The one reader of saved conversations: a trajectory as ``Trajectory.as_dict`` writes it (a
session's ``trajectory.json``, ``trajectory-2.json``… or their journals, a run's result) parsed once
into typed objects, which every consumer uses: the resume (``Agent.restore``), the hand-off, ACP's
``session/load``, the app's restored chat, the checkpoints of a resumed session, the attempts'
table, ``frogtui sessions`` and the headless summary.

How each call ended is decided here once: as the trajectory recorded it (each observation's
``outcome`` and ``exit_code``, written by ``Trajectory.record_observation``), and, for a session saved
before outcomes were recorded (or whose records do not line up with its calls), read from the
observation's text (``tools.observations.classify``).

A saved file may be hand-edited or cut short: what does not have the expected shape is left out,
never fatal; only a conversation without a list of messages is refused (``ValueError``).
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from frogtui.agent.project_instructions import without_instructions
from frogtui.agent.trajectory import StepRecord, Trajectory, replay_lines
from frogtui.protocol import FileHunks, Span
from frogtui.tools.observations import OutcomeKind, Reading, classify
from frogtui.tools.specs import runs_commands

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class SavedCall:
    """One tool call of a saved conversation, with how it ended."""

    id: str
    tool: str
    arguments: dict[str, Any]
    turn: int
    """Which assistant turn of its conversation wrote it (1 for the first)."""
    observation: str | None
    """The text the model saw for it; None when the conversation ended before it was answered."""
    ended: Reading
    """How it ended: as recorded, else read from ``observation`` (a session saved before outcomes were)."""


@dataclass(frozen=True)
class SavedMessage:
    """One message of a saved transcript."""

    role: Role
    text: str
    """Its content ('' when none); a user message's with the project instructions given with it."""
    reasoning: str = ""
    """An assistant message's reasoning ('' when none)."""
    calls: tuple[SavedCall, ...] = ()
    """An assistant message's tool calls, in order."""
    call_id: str = ""
    """A tool message's call id."""

    @property
    def typed(self) -> str:
        """A user message as the person wrote it (without the project instructions)."""
        return without_instructions(self.text)


@dataclass(frozen=True)
class SavedApproval:
    """One answer of the gate, as a step recorded it."""

    step: int
    tool: str
    decision: str
    """``allow`` or ``deny``."""
    by: str
    """``rule``, ``floor``, ``mode`` or ``person``."""
    rule: str = ""
    reason: str = ""
    hunks: tuple[FileHunks, ...] = ()
    """A proposal's text files accepted in part, with the hunks of each accepted and rejected
    (none in a session saved before they were recorded)."""


@dataclass(frozen=True)
class Conversation:
    """One saved conversation (a run of a session: the first, or one after a hand-off)."""

    messages: tuple[SavedMessage, ...]
    transcript: list[dict[str, Any]] = field(repr=False)
    """The messages as the model is given them again (``Agent.restore``)."""
    steps: tuple[StepRecord, ...] = ()
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The trajectory as saved, to write it again (``--trajectory``); read it through the fields."""
    trajectory_id: str = ""
    model: str = ""
    run: int = 1
    previous: str | None = None
    """The file of the conversation this one continues (``previous_trajectory``)."""
    next: str | None = None
    """The file of the conversation that continued this one (``next_trajectory``)."""
    exit_reason: str | None = None
    error: str | None = None
    final_message: str = ""
    output_patch: str = ""
    context_tokens: int = 0
    session_tokens: int = 0
    elapsed_sec: float = 0.0
    partial: bool = False

    @classmethod
    def read(cls, data: object) -> Conversation:
        """Parse a saved trajectory (``Trajectory.as_dict``'s shape).

        Raises:
            ValueError: it is not an object with a list of messages.
        """
        if not isinstance(data, dict):
            raise ValueError("the saved trajectory is not a JSON object")
        raw = data.get("messages")
        if not isinstance(raw, list) or not all(isinstance(m, dict) and "role" in m for m in raw):
            raise ValueError("the saved trajectory has no list of messages")
        steps = tuple(_step(s) for s in _list(data.get("steps")) if isinstance(s, dict) and _int(s.get("step")) is not None)
        run = _int(data.get("run"))
        return cls(
            messages=_messages(raw, steps),
            transcript=raw,
            steps=steps,
            data=data,
            trajectory_id=_str(data.get("trajectory_id")),
            model=_str(data.get("model")),
            run=run if run is not None and run > 0 else 1,
            previous=_optional_str(data.get("previous_trajectory")),
            next=_optional_str(data.get("next_trajectory")),
            exit_reason=_optional_str(data.get("exit_reason")),
            error=_optional_str(data.get("error")),
            final_message=_str(data.get("final_message")),
            output_patch=_str(data.get("output_patch")),
            context_tokens=_int(data.get("context_tokens")) or 0,
            session_tokens=_int(data.get("session_tokens")) or 0,
            elapsed_sec=_float(data.get("elapsed_sec")),
            partial=data.get("partial") is True,
        )

    @classmethod
    def of(cls, trajectory: Trajectory) -> Conversation:
        """The conversation the loop holds now, read the same way as a saved one."""
        return cls.read(trajectory.as_dict())

    @property
    def calls(self) -> list[SavedCall]:
        """Every tool call, in order."""
        return [call for message in self.messages for call in message.calls]

    def user_messages(self) -> list[str]:
        """What the person wrote, in order (each without the project instructions)."""
        return [m.typed for m in self.messages if m.role == "user"]

    @property
    def task(self) -> str:
        """The first user message as the person wrote it ('' when there is none)."""
        users = self.user_messages()
        return users[0] if users else ""

    def last_answer(self) -> str:
        """The assistant's last non-empty answer, stripped ('' when none)."""
        return next((m.text.strip() for m in reversed(self.messages) if m.role == "assistant" and m.text.strip()), "")

    @property
    def last_step(self) -> int:
        """The highest step number recorded (0 when none)."""
        return max((s.step for s in self.steps), default=0)

    def approvals(self) -> list[SavedApproval]:
        """The gate's answers, in order."""
        return [SavedApproval(s.step, _str(a.get("tool")), _str(a.get("decision")), _str(a.get("by")), _str(a.get("rule")),
                              _str(a.get("reason")), _hunks(a.get("hunks"))) for s in self.steps for a in s.approvals]

    def tokens(self) -> tuple[int, int]:
        """Tokens evaluated and generated over the conversation's steps."""
        evaluated = sum(_int(s.usage.get("evaluated_tokens")) or 0 for s in self.steps)
        generated = sum(_int(s.usage.get("generated_tokens")) or 0 for s in self.steps)
        return evaluated, generated

    def changing_tools(self, mutating: frozenset[str] | set[str]) -> dict[int, list[str]]:
        """Each step's calls of ``mutating`` tools, in order (the checkpoints a resumed session has)."""
        return {s.step: [name for name in _step_tools(s) if name in mutating] for s in self.steps}

    def replay(self) -> str:
        """Its model turns as a replay file's lines (``--model replay:FILE``)."""
        return replay_lines({"steps": [s.as_dict() for s in self.steps]})


# parsing -----------------------------------------------------------------------------------------
def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _hunks(value: object) -> tuple[FileHunks, ...]:
    """Recorded hunk choices (``Trajectory.record_approval``); one without the recorded shape is left out."""
    return tuple(choice for choice in map(_file_hunks, _list(value)) if choice is not None)


def _file_hunks(data: object) -> FileHunks | None:
    if not isinstance(data, dict) or not isinstance(data.get("path"), str):
        return None
    sides: list[tuple[Span, ...]] = []
    for name in ("accepted", "rejected"):
        spans = data.get(name)
        if not isinstance(spans, list) or not all(_span(s) for s in spans):
            return None
        sides.append(tuple((s[0], s[1], s[2], s[3]) for s in spans))
    return FileHunks(data["path"], sides[0], sides[1])


def _span(value: object) -> bool:
    return isinstance(value, list) and len(value) == 4 and all(type(n) is int and n >= 0 for n in value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


_STEP_FIELDS: dict[str, type] = {"assistant": dict, "observations": list, "approvals": list, "usage": dict,
                                 "raw_output": str, "finish_reason": str}
"""Each field of a step record with the type it must have to be read back (``step`` is checked first)."""


def _step(data: Mapping[str, Any]) -> StepRecord:
    kept = {name: data[name] for name, kind in _STEP_FIELDS.items() if isinstance(data.get(name), kind)}
    for name in ("observations", "approvals"):
        if name in kept:
            kept[name] = [item for item in kept[name] if isinstance(item, dict)]
    return StepRecord(step=data["step"], **kept)


def _step_tools(step: StepRecord) -> list[str]:
    return [name for _, name, _ in _raw_calls(step.assistant)]


def _raw_calls(message: Mapping[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """An assistant message's calls as ``(id, tool, arguments)`` (arguments saved as a JSON string)."""
    calls = []
    for item in _list(message.get("tool_calls")):
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            continue
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = {}
        calls.append((_str(item.get("id")), _str(function.get("name")) or "?", arguments if isinstance(arguments, dict) else {}))
    return calls


def _recorded(records: Sequence[Mapping[str, Any]], tools: Sequence[str]) -> list[Reading] | None:
    """How each call ended as the trajectory recorded it (its observations' ``outcome`` and
    ``exit_code``: ``Trajectory.record_observation``), for the calls of ``tools`` in order; None
    unless the records line up with them one for one, tool by tool, each with a known outcome (a
    session saved before outcomes were recorded: its text is read instead, ``classify``)."""
    if len(records) != len(tools):
        return None
    readings = []
    for record, tool in zip(records, tools, strict=True):
        kind, code = record.get("outcome"), record.get("exit_code")
        if record.get("tool") != tool or kind not in get_args(OutcomeKind):
            return None
        readings.append(Reading(kind, code if isinstance(code, int) else None))
    return readings


def _messages(raw: list[dict[str, Any]], steps: tuple[StepRecord, ...]) -> tuple[SavedMessage, ...]:
    texts = {_str(m.get("tool_call_id")): _str(m.get("content")) for m in raw if m.get("role") == "tool"}
    turns: list[list[tuple[str, str, dict[str, Any]]]] = [_raw_calls(m) for m in raw if m.get("role") == "assistant"]
    found = [(call, n) for n, calls in enumerate(turns, 1) for call in calls]
    records = [o for s in steps for o in s.observations]
    recorded = _recorded(records, [tool for (_, tool, _), _ in found])
    readings = iter(recorded) if recorded is not None else None
    calls: list[SavedCall] = []
    for (call_id, tool, arguments), turn in found:
        observation = texts.get(call_id) if call_id else None
        reading = next(readings) if readings is not None else classify(observation or "", command=runs_commands(tool))
        calls.append(SavedCall(call_id, tool, arguments, turn, observation, reading))
    by_turn = iter(calls)
    out = []
    for message in raw:
        role = message.get("role")
        if role == "assistant":
            mine = tuple(next(by_turn) for _ in _raw_calls(message))
            out.append(SavedMessage("assistant", _str(message.get("content")), _str(message.get("reasoning_content")), mine))
        elif role == "tool":
            out.append(SavedMessage("tool", _str(message.get("content")), call_id=_str(message.get("tool_call_id"))))
        elif role in ("system", "user"):
            out.append(SavedMessage(role, _str(message.get("content"))))
    return tuple(out)
