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
interrupt, the run's time limit), a `RunStuck` (the model repeats code it was told
would not run) or an `AgentGenerationError` (the model itself failed) ends the run
with memory intact.

A run's wall-time limit (`max_time`, deadline.py) stops it the way Stop does; the
run then ends as timed out. The offline default model has one unless told otherwise
(`DEFAULT_MODEL_MAX_TIME`); other models have none unless given.
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
    AgentStuckError,
    AgentTimedOutError,
    RunStopped,
    RunStuck,
)
from nbagent.media.agent_types import handle_agent_output_types
from nbagent.models.base import (
    ChatMessage,
    ChatMessageStreamDelta,
    ModelError,
    TokenUsage,
    agglomerate_stream_deltas,
    message_as_delta,
)
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

from .aids.data_card import describe_variables
from .callbacks import CallbackRegistry, call_with_agent
from .deadline import RunDeadline, parse_max_time
from .gates import RunGates
from .model_calls import call_model, stream_model
from .monitoring import AgentLogger, Monitor
from .permissions import RunPermissions, check_policy, grants_of
from .prompting import PromptBuilder
from .toolbox import managed_agent_inputs, setup_tools
from .view import LogLevel, View

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
        logger: AgentLogger | None = None,
        stream_outputs: bool = False,
        max_time: float | str | None = None,
        on_permission: str | Callable[[Any], str] = "ask",
    ) -> None:
        if not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        given_time = None if max_time is None else parse_max_time(max_time)
        # what the code's refused files and hosts become: asked ("ask"), denied, or a function's answer
        self.permissions = RunPermissions(on_permission)
        self.model = model if model is not None else _default_model()
        # seconds a run may run (None: no limit); `max_time=None` means the model's default, 0 no limit
        self.max_time: float | None = given_time if max_time is not None else _default_max_time(self.model)
        if stream_outputs and not _can_stream(self.model):
            raise ValueError(
                "`stream_outputs` is set to True, but the model class implements no `generate_stream` method."
            )
        self.stream_outputs = stream_outputs
        self.logger = logger if logger is not None else AgentLogger(level=verbosity_level)
        self.monitor = Monitor(self.model, self.logger)
        self.prompt_templates = merge_prompt_templates(load_prompt_templates(self.prompt_kind), prompt_templates)
        self.instructions = instructions
        self.max_steps = max_steps
        self.planning_interval = planning_interval
        self.name = _validate_name(name)
        self.description = description
        self.provide_run_summary = provide_run_summary
        self.final_answer_checks = list(final_answer_checks or [])
        self.return_full_result = return_full_result
        self.managed_agents = {agent.name: agent for agent in managed_agents or []}
        _check_unique_names(tools or [], managed_agents or [])
        self.tools = setup_tools(
            tools or [], add_base_tools, self.managed_agents, code_agent=self.prompt_kind == "code_agent"
        )
        self._setup_step_callbacks(step_callbacks)
        self.state: dict[str, Any] = {}
        self.task: str | None = None
        self.step_number = 0
        self.gates = RunGates()
        self.last_result: RunResult | None = None
        self._event_parent: Callable[[Any], None] | None = None
        self._child_events: list[ChildEvent] = []  # managed agents' events, told to the views at once, streamed next
        self._views: Sequence[View] = ()
        self._live_deltas = False  # a view shows the model's text as it comes: stream from models that can
        self._stream_model_deltas = False  # the run's own stream holds the model's text (event_stream())
        self._interrupted = False
        self._deadline: RunDeadline | None = None  # the time limit of the run under way
        self._prompts = PromptBuilder(self)
        self.memory = AgentMemory(self.initialize_system_prompt())

    # ------------------------------------------------------------------ smolagents' public surface

    @property
    def system_prompt(self) -> str:
        return self.memory.system_prompt.system_prompt

    @system_prompt.setter
    def system_prompt(self, value: str) -> None:
        raise AttributeError(
            """The 'system_prompt' property is read-only. Use 'self.prompt_templates["system_prompt"]' instead."""
        )

    @property
    def verbosity_level(self) -> int:
        """How much a run prints: `self.logger.level` (a `LogLevel`, -1 nothing … 2 debug)."""
        return self.logger.level

    @verbosity_level.setter
    def verbosity_level(self, level: int) -> None:
        self.logger.level = level

    @property
    def on_permission(self) -> str | Callable[[Any], str]:
        """What happens when the sandbox refuses the code a file, a host or the network: "ask" (a person, in the
        widget or on the terminal; nobody there: denied), "deny", or `f(ask) -> "once" | "run" | "deny"`
        (nbagent/loop/permissions.py)."""
        return self.permissions.policy

    @on_permission.setter
    def on_permission(self, policy: str | Callable[[Any], str]) -> None:
        self.permissions.policy = check_policy(policy)

    @property
    def grants(self) -> list[Any]:
        """The capabilities granted in the runs in memory (`Grant`s: kind, target, scope), saved with them."""
        return grants_of(self.memory.steps)

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
        """Stop before the next step (the running step finishes); the run then raises
        `AgentError("Agent interrupted.")`, as in smolagents, with the memory and `last_result` kept."""
        self._interrupted = True
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
        max_time: float | None = None,
    ) -> Iterator[Any]:
        """One run (or, with `resume`, its continuation from the memory as it is) as a stream of events.

        `max_time`: seconds this run may run (None: no limit; the caller resolves the agent's own).
        """
        self._start_run(task, reset, images, additional_args, resume, views)
        timing = Timing()
        output, outcome, error = None, RunOutcome.SUCCESS, None
        start = RunStart(self.task, self.name, images, reset, uuid.uuid4().hex[:12], max_steps, resume, max_time)
        yield self._notify(start)
        self._deadline = deadline = RunDeadline(max_time, self.gates)
        try:
            with deadline:
                output = yield from self._steps(max_steps)
                if output is _NO_ANSWER:
                    outcome = RunOutcome.MAX_STEPS
                    output = yield from self._final_answer_from_memory()
            output = _as_agent_type(output)
            final = FinalAnswerStep(output=output)
            self._finalize_step(final)
            yield self._notify(final)
        except RunStopped as stop:
            outcome, error = (RunOutcome.TIMED_OUT if deadline.passed else RunOutcome.STOPPED), stop
            if self._interrupted:  # smolagents' interrupt(): the run raises, after the views are told
                error = AgentError("Agent interrupted.")
        except RunStuck as stuck:
            outcome, error = RunOutcome.STUCK, stuck
        except AgentGenerationError as failure:
            outcome, error = RunOutcome.ERROR, failure
        finally:  # "Allow for this run" ends with the run (also when its stream is closed early)
            self.permissions.end_run(getattr(self, "python_executor", None))
        scratch = self._end_of_run(output if outcome == RunOutcome.SUCCESS else None)
        self._deadline = None  # a step run by hand later (`agent.step`) is under no limit
        timing.end_time = time.time()
        self.last_result = RunResult(
            output=output,
            state=outcome.value,
            memory_steps=list(self.memory.steps),
            token_usage=_run_token_usage(self.memory.steps),
            timing=timing,
            error=str(error) if error else None,
        )
        self.last_result.scratch = scratch
        self.gates.finish(outcome.value)
        yield self._notify(RunEnd(self.last_result))
        if isinstance(error, AgentError):
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
        self._interrupted = False
        if not resume:
            self.task = task + (describe_variables(additional_args) if additional_args else "")
            if additional_args:
                self.state.update(additional_args)
            self.memory.system_prompt = SystemPromptStep(system_prompt=self.initialize_system_prompt())
            if reset:
                self.memory.reset()
                self.monitor.reset()
            self.memory.steps.append(TaskStep(task=self.task, task_images=images))
            self._views = tuple(views)
            if self._event_parent is None:  # a managed agent's manager sets it
                self._live_deltas = any(_shows_deltas(view) for view in self._views)
        self._prepare_executor(resume)
        self._connect_managed_agents()

    def _steps(self, max_steps: int) -> Generator[Any, None, Any]:
        first = self._next_step_number()
        answer = None
        for self.step_number in range(first, first + max_steps):
            self.gates.before_step()
            if self._planning_due(self.step_number - first):
                # the initial plan when the memory holds only the task (smolagents' rule), else an updated one
                yield from self._planning_step(is_first=len(self.memory.steps) == 1)
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
            timed_out = self._deadline is not None and self._deadline.passed
            stopped = AgentTimedOutError if timed_out else AgentStoppedError
            step.error = stopped(str(stop) or "Stopped by a keyboard interrupt.")
            yield self._finish_step(step, record)
            raise RunStopped(str(step.error)) from None
        except (
            RunStuck
        ) as stuck:  # the model repeated code it was told would not run, or failed the same way again and again
            step.error = AgentStuckError(str(stuck))
            yield self._finish_step(step, record)
            raise
        except AgentError as error:
            step.error = error
        yield self._finish_step(step, record)

    def _finish_step(self, step: MemoryStep, record: bool = True) -> MemoryStep:
        if record:
            self.memory.steps.append(step)
        self._finalize_step(step)
        return self._notify(step)

    def _finalize_step(self, memory_step: MemoryStep) -> None:
        """End a step's timing (not a final answer's) and call the step callbacks (smolagents' hook)."""
        if not isinstance(memory_step, FinalAnswerStep):
            memory_step.timing.end_time = time.time()
        self.step_callbacks.callback(memory_step, agent=self)

    def _setup_step_callbacks(self, step_callbacks: list[Callable] | dict[type, Any] | None) -> None:
        """The step callbacks, and the monitor's `update_metrics` for action steps (as in smolagents)."""
        self.step_callbacks = CallbackRegistry(step_callbacks)
        self.step_callbacks.register(ActionStep, self.monitor.update_metrics)

    def _planning_due(self, steps_done_this_run: int) -> bool:
        return bool(self.planning_interval) and steps_done_this_run % self.planning_interval == 0

    def _planning_step(self, is_first: bool) -> Iterator[Any]:
        yield self._notify(StepStart(self.step_number, "planning"))
        step = None
        for event in self._generate_planning_step(self.task or "", is_first, self.step_number):
            if isinstance(event, PlanningStep):
                step = event  # yielded once below, when it is in memory
            else:
                yield self._notify(event)
        yield self._finish_step(step)

    def _generate_planning_step(self, task: str, is_first_step: bool, step: int) -> Iterator[Any]:
        """Yield the plan's model deltas, then the `PlanningStep` (not yet in memory): smolagents' method."""
        planning = PlanningStep()
        planning.model_input_messages = self._prompts.plan(task, is_first_step, step)
        message = yield from self._generate(planning.model_input_messages, stop_sequences=["<end_plan>"])
        planning.model_output_message, planning.token_usage = message, message.token_usage
        planning.plan = self._prompts.plan_text(message.text, is_first_step)
        yield planning

    def _final_answer_from_memory(self) -> Generator[Any, None, Any]:
        yield self._notify(StepStart(self.step_number, "final"))
        step = ActionStep(step_number=self.step_number, error=AgentMaxStepsError("Reached max steps."))
        message = yield from self._notified(self._generate(self._prompts.final_answer(self.task or "")))
        step.model_output_message, step.model_output, step.token_usage = message, message.text, message.token_usage
        step.action_output, step.is_final_answer = message.text, True
        yield self._finish_step(step)
        return message.text

    def _generate(self, messages: list[ChatMessage], **kwargs: Any) -> Generator[Any, None, ChatMessage]:
        """Call the model; returns the full message.

        As in smolagents, the model streams only with `stream_outputs=True` (its deltas are yielded into
        the run's stream) — or for `event_stream()`, nbagent's full stream, when it really streams
        (`supports_streaming`); it also streams, for the views only, when a view shows text as it
        comes. Otherwise `generate` is called by keyword and the whole reply is one delta for
        whoever shows deltas.
        """
        try:
            if self.stream_outputs or (self._stream_model_deltas and _really_streams(self.model)):
                return (yield from self._streamed_message(messages, kwargs))
            if self._live_deltas and _really_streams(self.model):
                return _drain(self._streamed_message(messages, kwargs), self._notify)
            message = self._call_model(messages, **kwargs)
            self.gates.check()
            return (yield from self._whole_reply(message))
        except (RunStopped, KeyboardInterrupt):
            raise
        except Exception as failure:
            if self.gates.stopping:  # the call failed because it was stopped (a closed connection, an abort)
                raise RunStopped(self.gates.stop_reason or "Stopped by the user.") from failure
            raise _generation_error(failure) from failure

    def _whole_reply(self, message: ChatMessage) -> Generator[Any, None, ChatMessage]:
        """A reply that came whole, as one delta for whoever shows deltas (the run's stream, or the views)."""
        if self._stream_model_deltas:
            yield message_as_delta(message)
        elif self._live_deltas:
            self._notify(message_as_delta(message))
        return message

    def _streamed_message(
        self, messages: list[ChatMessage], kwargs: dict[str, Any]
    ) -> Generator[Any, None, ChatMessage]:
        deltas: list[ChatMessageStreamDelta] = []
        for delta in stream_model(self.gates, lambda: self.model.generate_stream(messages, **kwargs)):
            self.gates.check()
            deltas.append(delta)
            yield delta
        self.gates.check()
        return agglomerate_stream_deltas(deltas)

    def _call_model(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        generate = getattr(self.model, "generate", None) or self.model
        message = call_model(self.gates, generate, messages, **kwargs)
        return message if isinstance(message, ChatMessage) else ChatMessage(role="assistant", content=str(message))

    def _call_model_quietly(self, messages: list[ChatMessage]) -> ChatMessage:
        try:
            return self._call_model(messages)
        except RunStopped:
            raise
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
                agent._live_deltas = self._live_deltas

    def _prepare_executor(self, resume: bool = False) -> None:
        """Hook for agents that run code (`resume`: a re-run goes on, the namespace as the rewind left it)."""

    def _end_of_run(self, answer: Any) -> list[str]:
        """Hook for agents that run code: the run ended with `answer` (None unless it answered); returns the names
        its code made that stay in the agent's scope (loop/scope.py)."""
        return []

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement _step_stream()")


def _as_agent_type(output: Any) -> Any:
    """A text answer as `AgentText` (a `str`), as smolagents returns it. An image stays the PIL image:
    nbagent's `AgentImage` is no PIL image, and an answer should stay usable as one (`.save`, display)."""
    return handle_agent_output_types(output) if isinstance(output, str) else output


def _drain(events: Generator[Any, None, Any], tell: Callable[[Any], Any]) -> Any:
    """Run `events` to the end, telling `tell` of each; return what the generator returns."""
    while True:
        try:
            tell(next(events))
        except StopIteration as done:
            return done.value


def _can_stream(model: Any) -> bool:
    """smolagents' test for `stream_outputs=True`: the model has a `generate_stream` of its own."""
    if isinstance(getattr(type(model), "supports_streaming", None), property):
        return bool(model.supports_streaming)
    return hasattr(model, "generate_stream")


def _shows_deltas(view: Any) -> bool:
    """Whether `view` shows the model's text as it comes: `view.shows_deltas` if it says; else a view
    with a verbosity `level` (the console) only at DEBUG, any other (the widget) always."""
    shows = getattr(view, "shows_deltas", None)
    if shows is not None:
        return bool(shows)
    level = getattr(view, "level", None)
    return level is None or level >= LogLevel.DEBUG


def _really_streams(model: Any) -> bool:
    """True only for an nbagent `Model` whose class streams for real (a mock's attributes are all truthy)."""
    return isinstance(getattr(type(model), "supports_streaming", None), property) and model.supports_streaming is True


def _run_token_usage(steps: Sequence[Any]) -> TokenUsage | None:
    """The run's tokens, or None when a model step did not report them (smolagents' rule)."""
    total = TokenUsage(0, 0)
    for step in steps:
        if isinstance(step, (ActionStep, PlanningStep)):
            if step.token_usage is None:
                return None
            total = total + step.token_usage
    return total


def _check_unique_names(tools: list[Any], managed_agents: list[Any]) -> None:
    """smolagents' check, except that an agent may share its own name with one of its tools (its
    manager calls it by that name; inside it, the name is the tool's): smolagents' docs do so."""
    names = [getattr(tool, "name", None) for tool in tools] + [getattr(agent, "name", None) for agent in managed_agents]
    repeated = sorted({name for name in names if name is not None and names.count(name) > 1})
    if repeated:
        raise ValueError(
            f"Each tool or managed_agent should have a unique name! You passed these duplicate names: {repeated}"
        )


def _default_max_time(model: Any) -> float | None:
    """The offline default model's time limit per run (see `DEFAULT_MODEL_MAX_TIME`); None for any other model."""
    from nbagent.models.default import DEFAULT_MODEL_MAX_TIME, is_default_model

    return DEFAULT_MODEL_MAX_TIME if is_default_model(model) else None


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
