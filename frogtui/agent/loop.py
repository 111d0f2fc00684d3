"""The Leaf agent loop: model, approver and event sink injected; nothing here knows the front end.

One ``Agent`` holds one conversation. ``run(task)`` starts it; ``send(text)`` continues it with a
follow-up message. Each call runs steps until the model answers without tool calls or a limit ends
the run, and returns a ``RunResult`` whose ``exit_reason`` is one of Leaf's (``events.EXIT_REASONS``).
"""
from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from frogtui.agent import events as ev
from frogtui.agent.events import EventSink, ExitReason
from frogtui.agent.outcomes import RunResult, Stop, denial_observation
from frogtui.agent.repeats import RepeatTracker
from frogtui.agent.runaway import RepeatedText, Repetition
from frogtui.agent.saved import Conversation
from frogtui.agent.toolcalls import StreamParser, TextPiece, format_call
from frogtui.agent.trajectory import Trajectory, run_file
from frogtui.config import Limits
from frogtui.errors import ContextOverflowError, FrogtuiError, ModelError
from frogtui.protocol import Approval, ApprovalRequest, Approver, FileHunks, Model, Preview, ToolCall, TurnEnd, Usage
from frogtui.tools import SYSTEM_PROMPT, TOOL_SCHEMAS, ToolOutcome, ToolRunner, convert_arguments, landing, observations, tool_spec
from frogtui.tools.specs import runs_commands

MAX_STALE_RETRIES = 3


class Agent:
    """The agent loop.

    Args:
        model: turns messages into text/tool calls (``protocol.Model``).
        runner: the five tools bound to the repository.
        approver: asked before every tool call.
        sink: receives every event, synchronously, on the loop's thread.
        limits: steps, tokens per turn, context budget.
        before_action: called with (step, call) right before a mutating tool runs (checkpoints).
        after_action: called with (step, call) right after a mutating tool that ``before_action``
            was called for ran (the session's own changes, told from the person's).
        patch: returns the repository diff of the run's changes (``output_patch``).
        on_step_end: called with the trajectory after each step (the session saves it).
        clock: monotonic seconds (a fake at the edge in tests).
        handoff_margin: when non-zero, a step that leaves fewer tokens than this of the budget ends
            the run with ``max_context_len``, so that the front end can hand off (``hand_off``).
    """

    def __init__(
        self,
        model: Model,
        runner: ToolRunner,
        approver: Approver,
        sink: EventSink,
        *,
        limits: Limits | None = None,
        before_action: Callable[[int, ToolCall], None] | None = None,
        after_action: Callable[[int, ToolCall], None] | None = None,
        patch: Callable[[], str] | None = None,
        on_step_end: Callable[[Trajectory], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        handoff_margin: int = 0,
    ) -> None:
        self.model = model
        self.runner = runner
        self.approver = approver
        self.sink = sink
        self.limits = limits or Limits()
        self.before_action = before_action
        self.after_action = after_action
        self.patch = patch
        self.on_step_end = on_step_end
        self.clock = clock
        self.handoff_margin = max(0, handoff_margin)
        self.repeats = RepeatTracker(self.limits.repeat_threshold)
        self.cancel = threading.Event()
        self.stop_reason = ""
        """Why the run was interrupted when it was not the person (``interrupt``): "frogtui was stopped by SIGTERM"."""
        self._turn_cancel: threading.Event | None = None
        """The model's stop for the turn it is writing: set by ``interrupt`` and by the text guard."""
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT}]
        self.trajectory = Trajectory(model=model.name, tools=TOOL_SCHEMAS, messages=self.messages)
        self.step = 0
        self.context_tokens = 0
        self._earlier_tokens = 0
        """The context of the session's earlier conversations (before hand-offs), added up."""
        self._elapsed = 0.0
        self._final = ""

    @property
    def context_budget(self) -> int:
        """Tokens the conversation may use: the configured budget, or the model's context when smaller."""
        size = self.model.context_size
        return min(self.limits.max_context_tokens, size) if size else self.limits.max_context_tokens

    # public API -----------------------------------------------------------------------
    def run(self, task: str) -> RunResult:
        """Start the conversation with ``task`` (the first user message) and run it."""
        self.sink.emit(ev.RunStarted(task=task, model=self.model.name, root=str(self.runner.workspace.root)))
        return self._run_user_message(task)

    def send(self, text: str) -> RunResult:
        """Continue the conversation with a follow-up user message."""
        self.sink.emit(ev.UserMessageAdded(text=text))
        return self._run_user_message(text)

    def submit(self, text: str) -> RunResult:
        """The person's message: it starts the conversation (``run``) or continues it (``send``)."""
        return self.send(text) if self.started else self.run(text)

    def hand_off(self, text: str) -> RunResult:
        """Start a fresh Leaf conversation whose first user message is ``text`` (a hand-off,
        ``agent.handoff``) and run it. It is a new run of the same session: a new trajectory that
        names the earlier one (``previous_trajectory``), which names it back (``next_trajectory``);
        step numbers go on counting (checkpoints and call ids stay unique); the repeat history
        starts empty."""
        old = self.trajectory
        old.next_trajectory = run_file(old.run + 1)
        self._step_end()  # saves the earlier conversation with its link
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        self.trajectory = Trajectory(model=self.model.name, tools=TOOL_SCHEMAS, messages=self.messages, run=old.run + 1,
                                     previous_trajectory=run_file(old.run), session_tokens=self.session_tokens)
        self._earlier_tokens += self.context_tokens
        self.context_tokens, self._elapsed, self._final = 0, 0.0, ""
        self.repeats.reset()
        self.sink.emit(ev.HandedOff(text=text, previous_id=old.trajectory_id, trajectory_id=self.trajectory.trajectory_id))
        return self._run_user_message(text)

    @property
    def session_tokens(self) -> int:
        """The session's tokens: every conversation's context added up (the meter's total)."""
        return self._earlier_tokens + self.context_tokens

    @property
    def started(self) -> bool:
        """True once the conversation has a user message (run, or restored)."""
        return any(m.get("role") == "user" for m in self.messages)

    def use_checkpoints(self, before_action: Callable[[int, ToolCall], None] | None, patch: Callable[[], str] | None,
                        after_action: Callable[[int, ToolCall], None] | None = None) -> None:
        """Take checkpoints with ``before_action`` (and ``after_action``) and report ``patch`` from
        now on (git was just turned on for the repository)."""
        self.before_action, self.patch, self.after_action = before_action, patch, after_action

    def interrupt(self, why: str = "") -> None:
        """Stop generation or the running command as soon as possible (thread-safe). ``why``: a
        stop that is not the person's ("frogtui was stopped by SIGTERM"), told to the model as
        that instead of "Interrupted by the user"."""
        self.stop_reason = why
        self.cancel.set()
        turn = self._turn_cancel
        if turn is not None:
            turn.set()

    def restore(self, saved: Conversation) -> None:
        """Continue a saved conversation (``frogtui --resume``; read by ``agent.saved``): take its
        transcript, steps and counters. Call before ``send``."""
        messages = list(saved.transcript)
        if not messages or messages[0].get("role") != "system":
            messages = [self.messages[0], *messages]
        self.messages[:] = messages
        self.trajectory.steps = list(saved.steps)
        self.trajectory.trajectory_id = saved.trajectory_id or self.trajectory.trajectory_id
        self.trajectory.run = saved.run
        self.trajectory.previous_trajectory = saved.previous
        self.step = saved.last_step
        self.context_tokens = saved.context_tokens
        self._earlier_tokens = max(0, saved.session_tokens - self.context_tokens)
        self._elapsed = saved.elapsed_sec

    # the loop -------------------------------------------------------------------------
    def _run_user_message(self, text: str) -> RunResult:
        self.cancel.clear()
        self.stop_reason = ""
        self.messages.append({"role": "user", "content": text})
        started = self.clock()
        exit_reason: ExitReason = "max_turns"
        error: str | None = None
        try:
            for _ in range(self.limits.max_steps):
                self._check_room()
                self.step += 1
                self._one_step(self.step)
        except Stop as stop:
            exit_reason, error = stop.exit_reason, stop.error
        self._elapsed += self.clock() - started
        return self._finish(exit_reason, error)

    def _check_room(self) -> None:
        """Stop before a step when the context is used up (or, with a hand-off, nearly)."""
        budget = self.context_budget
        if self.context_tokens >= budget:
            raise Stop("max_context_len", f"context budget of {budget} tokens used up")
        margin = min(self.handoff_margin, budget // 2)  # a margin over half the budget would leave no room to work
        if margin and budget - self.context_tokens < margin:
            left = budget - self.context_tokens
            raise Stop("max_context_len", f"{left} tokens left of the {budget}-token budget, under the hand-off margin of {margin}")

    def _one_step(self, step: int) -> None:
        self.sink.emit(ev.StepStarted(step=step, max_steps=self.limits.max_steps))
        parser, calls, end, raw, repetition = self._generate(step)
        assistant = self._assistant_message(parser, calls)
        self.messages.append(assistant)
        record = self.trajectory.step(step)
        record.assistant, record.raw_output, record.finish_reason = assistant, raw, end.finish_reason
        self.trajectory.record_usage(step, end.usage)
        self.context_tokens = end.usage.prompt_tokens + end.usage.generated_tokens
        self.sink.emit(ev.StepUsage(step, end.usage, self.context_tokens, budget=self.context_budget, session_tokens=self.session_tokens))
        self.sink.emit(
            ev.AssistantTurnEnded(step, parser.answer.strip(), parser.reasoning.strip(), tuple(calls), end.finish_reason)
        )
        if repetition is not None:
            self.sink.emit(ev.TextRepeated(step=step, note=repetition.describe()))
        self._final = parser.final_answer
        if end.finish_reason == "cancelled" or self.cancel.is_set():
            self._step_end()
            raise Stop("cancelled")
        cut_short = end.usage.generated_tokens < self.limits.max_tokens_per_turn
        if end.finish_reason == "length" and cut_short and self.context_tokens >= self.context_budget:
            self._step_end()
            raise Stop("max_context_len", f"the context filled up ({self.context_tokens} of {self.context_budget} tokens) during the turn")
        if end.finish_reason == "length":
            self._step_end()
            raise Stop("max_tokens_per_turn", f"the turn reached {self.limits.max_tokens_per_turn} generated tokens")
        if not calls and repetition is None:
            self._step_end()
            raise Stop("agent")
        stop: Stop | None = None  # every call gets its observation, also after a failed checkpoint
        for call in calls:
            if self.cancel.is_set() or stop is not None:
                if stop is None:
                    self._observe(step, call, self._not_run(step, call, observations.INTERRUPTED_BEFORE_RUN, cancelled=True))
                else:
                    self._observe(step, call, self._not_run(step, call, observations.NOT_RUN_AFTER_FAILED_CHECKPOINT))
                continue
            try:
                self._observe(step, call, self._handle_call(step, call))
            except Stop as failed:  # the checkpoint before it failed
                self._observe(step, call, ToolOutcome.not_run(failed.observation or ""))
                stop = failed
        if repetition is not None:  # the model hears why its turn ended, and goes on
            self.messages.append({"role": "user", "content": repetition.describe()})
        self._step_end()
        if stop is not None:
            raise stop
        if self.cancel.is_set():
            raise Stop("cancelled")

    def _generate(self, step: int) -> tuple[StreamParser, list[ToolCall], TurnEnd, str, Repetition | None]:
        """One model turn: the parser's result, the calls, how it ended, the raw text (as a
        replay file holds it: starting inside the reasoning, structured calls written as XML), and
        the repetition that ended it (``agent/runaway.py``; its ``finish_reason`` is then
        ``repeat_text``)."""
        parser = StreamParser(opens_reasoning=self.model.opens_reasoning, step=step)
        guard = RepeatedText(self.limits.repeat_text)
        turn_cancel = self._turn_cancel = threading.Event()
        if self.cancel.is_set():
            turn_cancel.set()
        calls: list[ToolCall] = []
        end: TurnEnd | None = None
        raw: list[str] = [] if self.model.opens_reasoning else ["</think>\n\n"]

        def take(items: list[Any]) -> None:
            for item in items:
                if isinstance(item, TextPiece):
                    cls = ev.ReasoningDelta if item.kind == "reasoning" else ev.AnswerDelta
                    self.sink.emit(cls(step=step, text=item.text))
                else:
                    calls.append(item)
                    self.sink.emit(ev.ToolCallProposed(step=step, call=item))

        try:
            stream = self.model.stream_turn(self.messages, TOOL_SCHEMAS, max_tokens=self.limits.max_tokens_per_turn, cancel=turn_cancel)
            for item in stream:
                if isinstance(item, str):
                    raw.append(item)
                    take(parser.feed(item))
                    if guard.found is None and guard.feed(item) is not None:
                        turn_cancel.set()  # the model ends the turn as on an interrupt, with its usage
                elif isinstance(item, ToolCall):
                    raw.append(format_call(item.name, item.arguments))
                    take([self._structured_call(step, item, len(calls))])
                elif isinstance(item, TurnEnd):
                    end = item
        except ContextOverflowError as err:
            raise Stop("max_context_len", str(err)) from None
        except ModelError as err:
            raise Stop("llm_query_error", str(err)) from None
        finally:
            self._turn_cancel = None
        take(parser.finish())
        if end is None:
            end = TurnEnd("cancelled" if self.cancel.is_set() else "stop", Usage())
        repetition = guard.found if not self.cancel.is_set() else None
        if repetition is not None:
            end = dataclasses.replace(end, finish_reason="repeat_text")
        return parser, calls, end, "".join(raw), repetition

    def _structured_call(self, step: int, call: ToolCall, index: int) -> ToolCall:
        arguments, error = convert_arguments(call.name, call.arguments) if not call.error else (call.arguments, call.error)
        return dataclasses.replace(call, id=call.id or f"call_{step}_{index + 1}", arguments=arguments, error=error)

    def _assistant_message(self, parser: StreamParser, calls: list[ToolCall]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": parser.answer.strip()}
        if parser.reasoning.strip():
            message["reasoning_content"] = parser.reasoning.strip()
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
                }
                for call in calls
            ]
        return message

    def _observe(self, step: int, call: ToolCall, outcome: ToolOutcome) -> None:
        if outcome.cancelled and self.stop_reason:  # frogtui was stopped, not by the person: say so
            for head in (observations.INTERRUPTED_BEFORE_RUN, observations.INTERRUPTED):
                if outcome.observation.startswith(head):
                    told = observations.stopped(head, self.stop_reason) + outcome.observation[len(head):]
                    outcome = dataclasses.replace(outcome, observation=told)
                    break
        self.messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.observation})
        self.trajectory.record_observation(step, call, outcome)
        if call.error is None:
            self.repeats.record(call.name, call.arguments, outcome)

    def _handle_call(self, step: int, call: ToolCall) -> ToolOutcome:
        """Approve and run one call; every outcome is an observation."""
        if call.error is not None:  # unparsable, unknown tool, or arguments that do not convert
            return self._not_run(step, call, call.error)
        spec = tool_spec(call.name)
        if spec is None:  # a call made without conversion (restored, or a front end's own)
            return self._not_run(step, call, observations.unknown_tool(call.name))
        edited_note = ""
        found = self.repeats.check(call.name, call.arguments)
        repeat = found.describe() if found is not None else ""
        for _attempt in range(MAX_STALE_RETRIES):
            preview, failure = self._preview(call)
            if failure is not None:
                return self._not_run(step, call, failure)
            root = str(self.runner.workspace.root)
            proposable = self._proposable(spec)
            request = ApprovalRequest(call=call, step=step, root=root, preview=preview, repeat=repeat, proposable=proposable)
            approval = self.approver.approve(request)
            if approval.proposal and request.proposable:
                outcome, approval = self._propose(step, request)
                if outcome is not None:
                    return outcome
            self.trajectory.record_approval(step, call, approval, repeat=repeat)
            self.sink.emit(ev.ApprovalAnswered(step=step, call=call, approval=approval, repeat=repeat))
            if not approval.allowed and self.cancel.is_set() and self.stop_reason:  # the question went with frogtui's stop
                return self._not_run(step, call, observations.INTERRUPTED_BEFORE_RUN, cancelled=True)
            if not approval.allowed:
                return self._not_run(step, call, denial_observation(approval), denied=True)
            if approval.arguments is not None and approval.arguments != call.arguments:
                arguments, error = convert_arguments(call.name, approval.arguments)
                if error is not None:
                    return self._not_run(step, call, error)
                call = dataclasses.replace(call, arguments=arguments)
                edited_note = observations.edited_note(arguments)
                if not runs_commands(spec):
                    continue  # a new change needs a new preview and approval; an edited command runs as the person wrote it
            if self.cancel.is_set():
                return self._not_run(step, call, observations.INTERRUPTED_BEFORE_RUN, cancelled=True)
            # proven read-only: no checkpoint, and the read-only sandbox is the backstop if the proof is wrong
            runs_command = runs_commands(spec)
            proven_read_only = approval.read_only and approval.arguments is None and runs_command and self.runner.confines_read_only
            checkpointed = spec.mutates and self.before_action is not None and not proven_read_only
            if checkpointed:
                try:
                    self.before_action(step, call)
                except (FrogtuiError, OSError) as err:  # git or the disk failed: one line, a named end
                    observation = self._not_run(step, call, observations.checkpoint_failed(err)).observation
                    raise Stop("tool_error", f"checkpoint failed: {err}", observation) from None
            self.sink.emit(ev.ToolStarted(step=step, call=call))
            started = self.clock()
            outcome = self.runner.run(
                call, preview=preview, cancel=self.cancel, on_output=self._output_to_sink(step, call), read_only=proven_read_only
            )
            duration = self.clock() - started
            if checkpointed and self.after_action is not None:
                try:
                    self.after_action(step, call)
                except (FrogtuiError, OSError):  # without it the review counts the step's files as the person's too: not fatal
                    pass
            if outcome.stale:
                continue  # the file changed after the diff was shown: show it again
            if edited_note:
                outcome = dataclasses.replace(outcome, observation=edited_note + outcome.observation)
            self.sink.emit(ev.ToolFinished(step, call, outcome, duration))
            return outcome
        path = call.arguments.get(spec.path_argument or "", "")
        return self._not_run(step, call, observations.kept_changing(path))

    def _proposable(self, spec: object) -> bool:
        """Whether a call of this tool can run as a proposal: a command, a view to run it on, and a
        gate that judges what it did."""
        return runs_commands(spec) and self.runner.can_propose and callable(getattr(self.approver, "judge_proposal", None))

    def _propose(self, step: int, request: ApprovalRequest) -> tuple[ToolOutcome | None, Approval]:
        """Run a command as a proposal (``tools.proposals``), then land what the gate accepts of
        its effects as one checkpointed step; the model sees its output only after the decision.
        Returns the outcome, or None and the person's approval when they chose to run the command
        for real instead (the caller runs it as any allowed command)."""
        call = request.call
        in_place = self.runner.proposes_in_place
        if in_place:  # no copy-on-write view here: the command runs on the tree, this checkpoint is what undo goes back to
            self._checkpoint_before(step, call)
        self.sink.emit(ev.ToolStarted(step=step, call=call))
        started = self.clock()
        try:
            proposal = self.runner.propose(call, cancel=self.cancel, on_output=self._output_to_sink(step, call))
        except OSError as err:
            if in_place:
                self._checkpoint_after(step, call)
            return self._not_run(step, call, observations.error_observation(err)), Approval("deny", str(err))
        try:
            decided = not (proposal.failed or proposal.result.cancelled or proposal.result.timed_out)
            approval = self.approver.judge_proposal(request, proposal) if decided else None  # type: ignore[attr-defined]
            if approval is not None and approval.run_for_real:
                if in_place:
                    self._checkpoint_after(step, call)
                return None, approval
            if approval is not None:
                self.trajectory.record_approval(step, call, approval, repeat=request.repeat)
                self.sink.emit(ev.ApprovalAnswered(step=step, call=call, approval=approval, repeat=request.repeat))
            landed = None
            accepted = approval.accepted if approval is not None and approval.allowed else ()
            if accepted is None or accepted:
                landed = self._land(step, call, proposal, accepted, approval.hunks if approval is not None else ())
            elif in_place:
                self._checkpoint_after(step, call)
            allowed = approval is not None and approval.allowed
            reason, by = (approval.reason, approval.by) if approval is not None else ("", "rule")
            outcome = landing.outcome(proposal, allowed, reason, landed, by=by)
        finally:
            proposal.discard()
        self.sink.emit(ev.ToolFinished(step, call, outcome, self.clock() - started))
        return outcome, approval or Approval("deny")

    def _land(self, step: int, call: ToolCall, proposal: Any, accepted: tuple[str, ...] | None, hunks: tuple[FileHunks, ...] = ()) -> Any:
        """Land a proposal's accepted effects (of a text file accepted in part, its accepted
        hunks) between the checkpoints before and after (one step)."""
        self._checkpoint_before(step, call)
        try:
            return self.runner.land(proposal, accepted, hunks)
        finally:
            self._checkpoint_after(step, call)

    def _checkpoint_before(self, step: int, call: ToolCall) -> None:
        """The checkpoint before a proposal's landing (or, in place, its command); a failure ends the run."""
        if self.before_action is not None:
            try:
                self.before_action(step, call)
            except (FrogtuiError, OSError) as err:
                observation = observations.checkpoint_failed(err)
                self.sink.emit(ev.ToolFinished(step, call, ToolOutcome.not_run(observation), 0.0))
                raise Stop("tool_error", f"checkpoint failed: {err}", observation) from None

    def _checkpoint_after(self, step: int, call: ToolCall) -> None:
        if self.after_action is not None:
            try:
                self.after_action(step, call)
            except (FrogtuiError, OSError):  # without it the review counts the step's files as the person's too: not fatal
                pass

    def _output_to_sink(self, step: int, call: ToolCall) -> Callable[[str], None]:
        """Passes a running command's output on as ``ToolOutput`` events (on the loop's thread)."""
        return lambda text: self.sink.emit(ev.ToolOutput(step, call, text))

    def _not_run(self, step: int, call: ToolCall, observation: str, *, denied: bool = False, cancelled: bool = False) -> ToolOutcome:
        """Report a call that did not run (invalid, denied, interrupted) and return its outcome."""
        outcome = ToolOutcome.not_run(observation, denied=denied, cancelled=cancelled)
        self.sink.emit(ev.ToolFinished(step, call, outcome, 0.0))
        return outcome

    def _preview(self, call: ToolCall) -> tuple[Preview | None, str | None]:
        try:
            return self.runner.preview(call), None
        except (OSError, ValueError) as err:
            return None, observations.error_observation(err)

    def _step_end(self) -> None:
        self.trajectory.context_tokens = self.context_tokens
        self.trajectory.session_tokens = self.session_tokens
        if self.on_step_end is not None:
            self.on_step_end(self.trajectory)

    def _finish(self, exit_reason: ExitReason, error: str | None) -> RunResult:
        final = self._final
        t = self.trajectory
        t.exit_reason, t.error, t.final_message = exit_reason, error, final
        t.elapsed_sec = self._elapsed
        t.context_tokens = self.context_tokens
        t.session_tokens = self.session_tokens
        if self.patch is not None:
            t.output_patch = self.patch()
        t.partial = False
        data = t.as_dict()
        self.sink.emit(ev.RunEnded(exit_reason=exit_reason, final_message=final, error=error, n_steps=len(t.steps), trajectory=data,
                                 patch=t.output_patch))
        if self.on_step_end is not None:
            self.on_step_end(t)
        return RunResult(exit_reason, final, error, data)
