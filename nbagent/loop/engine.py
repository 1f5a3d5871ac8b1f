"""The ReAct loop: `AgentLoop` runs a task step by step (think, act, observe) until a final answer.

One generator, `_run_events`, is the whole run: run → steps → finalize. It yields
the typed events of `nbagent.record.events`, writes memory, and tells the views it
was *given* of every event (`_notify`); it never picks or makes a view. The kind of
action a step takes is `_step_stream`, written by `CodeLoop` (code_step.py) and
`ToolCallingLoop` (tool_step.py). `RunSession` (session.py) strings runs and
re-runs into one stream; the public agents (nbagent.agents) wire views, the
notebook and persistence around this class.

Errors come in two families (see `nbagent.errors`): an `AgentError` is recorded
on its step for the model to see and the loop goes on; a `RunStopped` (stop,
interrupt) or an `AgentGenerationError` (the model itself failed) ends the run
with memory intact.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any

from nbagent.errors import (
    AgentError,
    AgentGenerationError,
    AgentMaxStepsError,
    AgentParsingError,
    AgentStoppedError,
    RunStopped,
)
from nbagent.models.base import ChatMessage, ChatMessageStreamDelta, ModelError, agglomerate_stream_deltas
from nbagent.prompts import load_prompt_templates, merge_prompt_templates
from nbagent.record import (
    ActionOutput,
    ActionStep,
    AgentMemory,
    ChildEvent,
    FinalAnswerStep,
    MemoryStep,
    PlanningStep,
    RunEnd,
    RunOutcome,
    RunResult,
    RunStart,
    StepStart,
    SystemPromptStep,
    TaskStep,
    Timing,
)
from nbagent.text import MODEL_ECHO, truncate

from .callbacks import CallbackRegistry, call_with_agent
from .gates import RunGates
from .prompting import PromptBuilder
from .toolbox import managed_agent_inputs, setup_tools
from .variables import describe_variables
from .view import View

__all__ = ["AgentLoop"]

_NO_ANSWER = object()


class AgentLoop:
    """The loop behind `MultiStepAgent`: memory, model calls, steps, planning, final answer, gates."""

    prompt_kind = "code_agent"
    output_type = "string"

    def __init__(
        self,
        tools: list[Any] | None = None,
        model: Any = None,
        prompt_templates: dict[str, Any] | None = None,
        instructions: str | None = None,
        max_steps: int = 20,
        add_base_tools: bool = False,
        verbosity_level: int = 1,
        managed_agents: list[Any] | None = None,
        step_callbacks: list[Callable] | dict[type, Any] | None = None,
        planning_interval: int | None = None,
        name: str | None = None,
        description: str | None = None,
        provide_run_summary: bool = False,
        final_answer_checks: list[Callable] | None = None,
        return_full_result: bool = False,
    ) -> None:
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.model = model if model is not None else _default_model()
        self.prompt_templates = merge_prompt_templates(load_prompt_templates(self.prompt_kind), prompt_templates)
        self.instructions = instructions
        self.max_steps = max_steps
        self.verbosity_level = verbosity_level
        self.planning_interval = planning_interval
        self.name = _validate_name(name)
        self.description = description
        self.provide_run_summary = provide_run_summary
        self.final_answer_checks = list(final_answer_checks or [])
        self.return_full_result = return_full_result
        self.managed_agents = {agent.name: agent for agent in managed_agents or []}
        self.tools = setup_tools(
            tools or [], add_base_tools, self.managed_agents, code_agent=self.prompt_kind == "code_agent"
        )
        self.step_callbacks = CallbackRegistry(step_callbacks)
        self.state: dict[str, Any] = {}
        self.task: str | None = None
        self.step_number = 0
        self.gates = RunGates()
        self.last_result: RunResult | None = None
        self._event_parent: Callable[[Any], None] | None = None
        self._child_events: list[ChildEvent] = []  # managed agents' events, told to the views at once, streamed next
        self._views: Sequence[View] = ()
        self._prompts = PromptBuilder(self)
        self.memory = AgentMemory(self.initialize_system_prompt())

    # ------------------------------------------------------------------ smolagents' public surface

    @property
    def system_prompt(self) -> str:
        return self.memory.system_prompt.system_prompt

    @property
    def inputs(self) -> dict[str, Any]:
        return managed_agent_inputs()

    def step(self, memory_step: ActionStep) -> Any:
        """Run one action step into `memory_step`; `None` unless it ends the task, then the answer.

        Errors the model should see are recorded on `memory_step.error`.
        The caller appends the step to memory (as in smolagents' recipe).
        """
        answer = None
        for event in self._action_step_events(memory_step, record=False):
            if isinstance(event, ActionOutput) and event.is_final_answer:
                answer = event.output
        return answer if memory_step.is_final_answer else None

    def interrupt(self) -> None:
        """Stop before the next step (the running step finishes)."""
        self.gates.request_interrupt()

    def stop(self) -> None:
        """Stop now: cancel the running model call or code; the step is recorded as stopped."""
        self.gates.request_stop()

    def pause(self) -> None:
        """Pause the run after the current step (the widget's Pause); `resume()` goes on."""
        self.gates.pause()

    def resume(self) -> None:
        """Go on running a paused run (the widget's Run)."""
        self.gates.resume()

    def write_memory_to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        return self.memory.write_memory_to_messages(summary_mode=summary_mode)

    def extract_action(self, model_output: str, split_token: str) -> tuple[str, str]:
        """Split `model_output` at the last `split_token` into (rationale, action)."""
        parts = model_output.split(split_token)
        if len(parts) < 2:
            raise AgentParsingError(
                f"No {split_token!r} in your output, so no action could be read. "
                f"Write your action after {split_token!r}.\nYour output:\n{truncate(model_output, MODEL_ECHO)}"
            )
        return parts[-2].strip(), parts[-1].strip()

    def initialize_system_prompt(self) -> str:
        return self._prompts.system_prompt()

    def provide_final_answer(self, task: str, images: list[Any] | None = None) -> ChatMessage:
        """Ask the model for a final answer from memory (used when the steps ran out).

        `images` is accepted for smolagents compatibility; the task's images are already in memory.
        """
        return self._call_model_quietly(self._prompts.final_answer(task))

    # ------------------------------------------------------------------ the loop

    def _run_events(
        self,
        task: str,
        reset: bool,
        images: list[Any] | None,
        additional_args: dict[str, Any] | None,
        max_steps: int,
        resume: bool = False,
        views: Sequence[View] = (),
    ) -> Iterator[Any]:
        """One run (or, with `resume`, its continuation from the memory as it is) as a stream of events."""
        self._start_run(task, reset, images, additional_args, resume, views)
        timing = Timing()
        output, outcome, error = None, RunOutcome.SUCCESS, None
        yield self._notify(RunStart(self.task, self.name, images, reset, uuid.uuid4().hex[:12], max_steps, resume))
        try:
            output = yield from self._steps(max_steps)
            if output is _NO_ANSWER:
                outcome = RunOutcome.MAX_STEPS
                output = yield from self._final_answer_from_memory()
            yield self._notify(FinalAnswerStep(output=output))
        except RunStopped as stop:
            outcome, error = RunOutcome.STOPPED, stop
        except AgentGenerationError as failure:
            outcome, error = RunOutcome.ERROR, failure
        timing.end_time = time.time()
        self.last_result = RunResult(
            output=output,
            state=outcome.value,
            memory_steps=list(self.memory.steps),
            token_usage=self.memory.total_token_usage(),
            timing=timing,
            error=str(error) if error else None,
        )
        self.gates.finish(outcome.value)
        yield self._notify(RunEnd(self.last_result))
        if isinstance(error, AgentGenerationError):
            raise error

    def _start_run(
        self,
        task: str,
        reset: bool,
        images: list[Any] | None,
        additional_args: dict | None,
        resume: bool,
        views: Sequence[View],
    ) -> None:
        """Set up a run; `resume=True` goes on from the memory as it is (re-run from a step), same views."""
        self.gates.reset()
        if not resume:
            self.task = task + (describe_variables(additional_args) if additional_args else "")
            if additional_args:
                self.state.update(additional_args)
            self.memory.system_prompt = SystemPromptStep(system_prompt=self.initialize_system_prompt())
            if reset:
                self.memory.reset()
            self.memory.steps.append(TaskStep(task=self.task, task_images=images))
            self._views = tuple(views)
        self._prepare_executor()
        self._connect_managed_agents()

    def _steps(self, max_steps: int) -> Generator[Any, None, Any]:
        first = self._next_step_number()
        answer = None
        for self.step_number in range(first, first + max_steps):
            self.gates.before_step()
            if self._planning_due(self.step_number - first):
                yield from self._planning_step(is_first=self.step_number == first and first == 1)
                self.gates.before_step()  # a plan is a step of its own for Step/Pause
            step = ActionStep(step_number=self.step_number)
            for event in self._action_step_events(step):
                yield event
                if isinstance(event, ActionOutput) and step.is_final_answer:
                    answer = event.output
            if step.is_final_answer:
                return answer
        self.step_number += 1
        return _NO_ANSWER

    def _action_step_events(self, step: ActionStep, record: bool = True) -> Iterator[Any]:
        yield self._notify(StepStart(step.step_number, "action"))
        try:
            for event in self._step_stream(step):
                if isinstance(event, ActionOutput) and event.is_final_answer:
                    self._check_final_answer(event.output)
                    step.is_final_answer, step.action_output = True, event.output
                elif isinstance(event, ActionOutput):
                    step.action_output = event.output
                yield from self._take_child_events()
                yield self._notify(event)
        except AgentGenerationError as failure:
            step.error = failure
            yield self._finish_step(step, record)
            raise
        except (RunStopped, KeyboardInterrupt) as stop:
            step.stopped = True
            step.error = AgentStoppedError(str(stop) or "Stopped by a keyboard interrupt.")
            yield self._finish_step(step, record)
            raise RunStopped(str(step.error)) from None
        except AgentError as error:
            step.error = error
        yield self._finish_step(step, record)

    def _finish_step(self, step: MemoryStep, record: bool = True) -> MemoryStep:
        step.timing.end_time = time.time()
        if record:
            self.memory.steps.append(step)
        self.step_callbacks.callback(step, agent=self)
        return self._notify(step)

    def _planning_due(self, steps_done_this_run: int) -> bool:
        return bool(self.planning_interval) and steps_done_this_run % self.planning_interval == 0

    def _planning_step(self, is_first: bool) -> Iterator[Any]:
        yield self._notify(StepStart(self.step_number, "planning"))
        step = PlanningStep()
        step.model_input_messages = self._prompts.plan(self.task or "", is_first, self.step_number)
        message = yield from self._notified(self._generate(step.model_input_messages, stop_sequences=["<end_plan>"]))
        step.model_output_message, step.token_usage = message, message.token_usage
        step.plan = self._prompts.plan_text(message.text, is_first)
        yield self._finish_step(step)

    def _final_answer_from_memory(self) -> Generator[Any, None, Any]:
        yield self._notify(StepStart(self.step_number, "final"))
        step = ActionStep(step_number=self.step_number, error=AgentMaxStepsError("Reached max steps."))
        message = yield from self._notified(self._generate(self._prompts.final_answer(self.task or "")))
        step.model_output_message, step.model_output, step.token_usage = message, message.text, message.token_usage
        step.action_output, step.is_final_answer = message.text, True
        yield self._finish_step(step)
        return message.text

    def _generate(self, messages: list[ChatMessage], **kwargs: Any) -> Generator[Any, None, ChatMessage]:
        """Call the model, streaming when it can; yields deltas, returns the full message."""
        stream = getattr(self.model, "generate_stream", None)
        try:
            if stream is None:
                return self._call_model(messages, **kwargs)
            deltas: list[ChatMessageStreamDelta] = []
            for delta in stream(messages, **kwargs):
                self.gates.check()
                deltas.append(delta)
                yield delta
            self.gates.check()
            return agglomerate_stream_deltas(deltas)
        except (RunStopped, KeyboardInterrupt):
            raise
        except Exception as failure:
            raise _generation_error(failure) from failure

    def _call_model(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        generate = getattr(self.model, "generate", None) or self.model
        message = generate(messages, **kwargs)
        return message if isinstance(message, ChatMessage) else ChatMessage(role="assistant", content=str(message))

    def _call_model_quietly(self, messages: list[ChatMessage]) -> ChatMessage:
        try:
            return self._call_model(messages)
        except Exception as failure:
            raise _generation_error(failure) from failure

    def _check_final_answer(self, answer: Any) -> None:
        for check in self.final_answer_checks:
            try:
                passed = call_with_agent(check, (answer, self.memory), self)
            except Exception as failure:
                raise AgentError(
                    f"Check {_name(check)} failed with error: {type(failure).__name__}: {failure}"
                ) from None
            if not passed:
                raise AgentError(f"Check {_name(check)} failed: the final answer {answer!r} was rejected.")

    def _next_step_number(self) -> int:
        numbers = [s.step_number for s in self.memory.steps if isinstance(s, ActionStep)]
        return max(numbers, default=0) + 1

    # ------------------------------------------------------------------ views and managed agents

    def _notify(self, event: Any) -> Any:
        if self._event_parent is not None:
            self._event_parent(ChildEvent(self.name or "agent", event))
        for view in self._views:
            view.consume(event)
        return event

    def _notified(self, events: Generator[Any, None, Any]) -> Generator[Any, None, Any]:
        """Tell the views of each raw event of `events` as it passes; return what `events` returns."""
        while True:
            try:
                event = next(events)
            except StopIteration as done:
                return done.value
            yield self._notify(event)

    def _receive_child_event(self, event: ChildEvent) -> None:
        self._notify(event)
        self._child_events.append(event)

    def _take_child_events(self) -> list[ChildEvent]:
        events, self._child_events = self._child_events, []
        return events

    def _connect_managed_agents(self) -> None:
        for agent in self.managed_agents.values():
            if isinstance(agent, AgentLoop):
                agent._event_parent = self._receive_child_event

    def _prepare_executor(self) -> None:
        """Hook for agents that run code."""

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement _step_stream()")


def _default_model() -> Any:
    from nbagent.models.default import default_model  # loads llama.cpp or transformers: only when needed

    return default_model()


def _validate_name(name: str | None) -> str | None:
    if name is not None and not name.isidentifier():
        raise ValueError(f"Agent name {name!r} must be a valid Python identifier (it is called like a function)")
    return name


def _generation_error(failure: Exception) -> AgentGenerationError:
    if isinstance(failure, AgentGenerationError):
        return failure
    detail = str(failure) if isinstance(failure, ModelError) else f"{type(failure).__name__}: {failure}"
    return AgentGenerationError(f"Error while generating output with the model: {detail}")


def _name(function: Callable) -> str:
    return getattr(function, "__name__", repr(function))
