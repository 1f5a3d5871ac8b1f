"""The ReAct loop: `MultiStepAgent` and its two kinds, `CodeAgent` and `ToolCallingAgent`.

One generator, `_run_events`, is the whole run: it yields the typed events of
`nbagent.events` and writes memory. `run(stream=True)` hands it out;
`run()` drains it. Views (console, widget) are told of every event by
`_notify`, never by a second code path.

Errors come in two families (see `nbagent.errors`): an `AgentError` is
recorded on its step for the model to see and the loop goes on; a
`RunTerminated` (stop, interrupt) or an `AgentGenerationError` (the model
itself failed) ends the run with memory intact.
"""

from __future__ import annotations

import inspect
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from typing import Any

from nbagent.agent_parts import (
    CallbackRegistry,
    PromptBuilder,
    describe_variables,
    managed_agent_inputs,
    setup_tools,
)
from nbagent.control import RunControl
from nbagent.errors import (
    AgentError,
    AgentGenerationError,
    AgentMaxStepsError,
    AgentParsingError,
    AgentStoppedError,
    RunStopped,
)
from nbagent.events import ActionOutput, ChildEvent, RunEnd, RunResult, RunStart, StepStart
from nbagent.memory import (
    ActionStep,
    AgentMemory,
    FinalAnswerStep,
    MemoryStep,
    PlanningStep,
    SystemPromptStep,
    TaskStep,
    Timing,
)
from nbagent.models.base import ChatMessage, ChatMessageStreamDelta, ModelError, agglomerate_stream_deltas

__all__ = ["MultiStepAgent", "LogLevel"]

from nbagent.console import LogLevel

_NO_ANSWER = object()


class MultiStepAgent:
    """An agent that solves a task step by step (think, act, observe) until `final_answer`.

    Constructor options follow smolagents. Where nbagent differs: `model=None`
    means the offline default model; `show_widget=None` shows the live widget
    when running inside a notebook (False: never; the console is used then).
    """

    prompt_kind = "code_agent"

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
        show_widget: bool | None = None,
        **kwargs: Any,
    ) -> None:
        from nbagent.compat import pop_legacy_options
        from nbagent.prompts import load_prompt_templates, merge_prompt_templates

        kwargs = pop_legacy_options(type(self).__name__, kwargs)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments: {', '.join(sorted(kwargs))}")
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
        self.show_widget = show_widget
        self.managed_agents = {agent.name: agent for agent in managed_agents or []}
        self.tools = setup_tools(tools or [], add_base_tools, self.managed_agents, code_agent=self.prompt_kind == "code_agent")
        self.step_callbacks = CallbackRegistry(step_callbacks)
        self.state: dict[str, Any] = {}
        self.task: str | None = None
        self.step_number = 0
        self.control = RunControl()
        self._controller: Any = None
        self._event_parent: Callable[[Any], None] | None = None
        self._child_events: list[ChildEvent] = []  # managed agents' events, told to the views at once, streamed next
        self._views: list[Any] = []
        self._widget: Any = None
        self._prompts = PromptBuilder(self)
        self.memory = AgentMemory(self.initialize_system_prompt())

    # ------------------------------------------------------------------ public API

    @property
    def system_prompt(self) -> str:
        return self.memory.system_prompt.system_prompt

    @property
    def inputs(self) -> dict[str, Any]:
        return managed_agent_inputs()

    output_type = "string"

    def run(
        self,
        task: str,
        stream: bool = False,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
        return_full_result: bool | None = None,
    ) -> Any:
        """Run the agent on `task`; with `stream=True`, return the generator of events."""
        if not isinstance(task, str) or not task.strip():
            raise ValueError("The task must be a non-empty string")
        if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        events = self.controller.events(task, reset, images, additional_args, max_steps or self.max_steps)
        if stream:
            return events
        for _ in events:
            pass
        result = self.last_result
        full = self.return_full_result if return_full_result is None else return_full_result
        return result if full else result.output

    def step(self, memory_step: ActionStep) -> Any:
        """Run one action step into `memory_step`; `None` unless it ends the task, then the answer.

        Errors the model should see are recorded on `memory_step.error`.
        The caller appends the step to memory (as in smolagents' recipe).
        """
        if not self._views and self._event_parent is None:
            self._views = self._make_views()  # stepping without run(): the steps show as in a run
        answer = None
        for event in self._action_step_events(memory_step, record=False):
            if isinstance(event, ActionOutput) and event.is_final_answer:
                answer = event.output
        return answer if memory_step.is_final_answer else None

    def interrupt(self) -> None:
        """Stop before the next step (the running step finishes)."""
        self.control.request_interrupt()

    def stop(self) -> None:
        """Stop now: cancel the running model call or code; the step is recorded as stopped."""
        self.control.request_stop()

    def pause(self) -> None:
        """Pause the run after the current step (the widget's Pause); `resume()` goes on."""
        self.control.pause()

    def resume(self) -> None:
        """Go on running a paused run (the widget's Run)."""
        self.control.resume()

    def start(self, task: str, **run_kwargs: Any) -> Any:
        """Prepare a paused run of `task` that `agent.controller.step()`/`.run()` or the widget's buttons drive.

        Returns the `RunController`; the kernel stays free (see nbagent/runner.py).
        """
        return self.controller.start(task, **run_kwargs)

    @property
    def controller(self) -> Any:
        """The `RunController` behind the widget's Run/Step/Pause/Stop/Approve/Reject/re-run buttons."""
        if self._controller is None:
            from nbagent.runner import RunController

            self._controller = RunController(self)
        return self._controller

    @property
    def forks(self) -> list[AgentMemory]:
        """The earlier runs kept by "re-run from step k", oldest first."""
        return self.controller.forks

    def write_memory_to_messages(self, summary_mode: bool = False) -> list[ChatMessage]:
        return self.memory.write_memory_to_messages(summary_mode=summary_mode)

    def replay(self, detailed: bool = False) -> None:
        self.memory.replay(detailed=detailed)

    def visualize(self) -> None:
        """Print the agent as a tree: model, tools with their inputs, managed agents."""
        from nbagent.compat import visualize_agent

        visualize_agent(self)

    @property
    def logs(self) -> list[Any]:
        """Deprecated: the action steps as dicts (with `code`, `output`, `duration`); use `memory.steps`."""
        from nbagent.compat import agent_logs

        return agent_logs(self)

    def extract_action(self, model_output: str, split_token: str) -> tuple[str, str]:
        """Split `model_output` at the last `split_token` into (rationale, action)."""
        parts = model_output.split(split_token)
        if len(parts) < 2:
            raise AgentParsingError(
                f"No {split_token!r} in your output, so no action could be read. "
                f"Write your action after {split_token!r}.\nYour output:\n{model_output[:2000]}"
            )
        return parts[-2].strip(), parts[-1].strip()

    def initialize_system_prompt(self) -> str:
        return self._prompts.system_prompt()

    def provide_final_answer(self, task: str, images: list[Any] | None = None) -> ChatMessage:
        """Ask the model for a final answer from memory (used when the steps ran out).

        `images` is accepted for smolagents compatibility; the task's images are already in memory.
        """
        return self._call_model_quietly(self._prompts.final_answer(task))

    def __call__(self, task: str, **kwargs: Any) -> str:
        """Run as a managed agent: the task is wrapped, the answer returned as a report."""
        return self._prompts.managed_report(self.run(self._prompts.managed_task(task), **kwargs))

    # ------------------------------------------------------------------ the loop

    def _run_events(
        self,
        task: str,
        reset: bool,
        images: list[Any] | None,
        additional_args: dict[str, Any] | None,
        max_steps: int,
        resume: bool = False,
    ) -> Iterator[Any]:
        self._start_run(task, reset, images, additional_args, resume)
        timing = Timing()
        output, state, error = None, "success", None
        yield self._notify(RunStart(self.task, self.name, images, reset, uuid.uuid4().hex[:12], max_steps, resume))
        try:
            output = yield from self._steps(max_steps)
            if output is _NO_ANSWER:
                state = "max_steps_error"
                output = yield from self._final_answer_from_memory()
            yield self._notify(FinalAnswerStep(output=output))
        except RunStopped as stop:
            state, error = "stopped", stop
        except AgentGenerationError as failure:
            state, error = "error", failure
        timing.end_time = time.time()
        self.last_result = RunResult(
            output=output,
            state=state,
            memory_steps=list(self.memory.steps),
            token_usage=self.memory.total_token_usage(),
            timing=timing,
            error=str(error) if error else None,
        )
        self.control.finish(state)
        yield self._notify(RunEnd(self.last_result))
        if isinstance(error, AgentGenerationError):
            raise error

    def _start_run(
        self, task: str, reset: bool, images: list[Any] | None, additional_args: dict | None, resume: bool = False
    ) -> None:
        """Set up a run; `resume=True` goes on from the memory as it is (re-run from a step), same views."""
        self.control.reset()
        if not resume:
            self.task = task + (describe_variables(additional_args) if additional_args else "")
            if additional_args:
                self.state.update(additional_args)
            self.memory.system_prompt = SystemPromptStep(system_prompt=self.initialize_system_prompt())
            if reset:
                self.memory.reset()
            self.memory.steps.append(TaskStep(task=self.task, task_images=images))
        self._prepare_executor()
        self._connect_managed_agents()
        if not resume:
            self._views = [] if self._event_parent else self._make_views()

    def _steps(self, max_steps: int) -> Generator[Any, None, Any]:
        first = self._next_step_number()
        answer = None
        for self.step_number in range(first, first + max_steps):
            self.control.before_step()
            if self._planning_due(self.step_number - first):
                yield from self._planning_step(is_first=self.step_number == first and first == 1)
                self.control.before_step()  # a plan is a step of its own for Step/Pause
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
                self.control.check()
                deltas.append(delta)
                yield delta
            self.control.check()
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
                passed = _call_check(check, answer, self.memory, self)
            except Exception as failure:
                raise AgentError(f"Check {_name(check)} failed with error: {type(failure).__name__}: {failure}") from None
            if not passed:
                raise AgentError(f"Check {_name(check)} failed: the final answer {answer!r} was rejected.")

    def _next_step_number(self) -> int:
        numbers = [s.step_number for s in self.memory.steps if isinstance(s, ActionStep)]
        return max(numbers, default=0) + 1

    # ------------------------------------------------------------------ views and hooks

    def _notify(self, event: Any) -> Any:
        if self._event_parent is not None:
            self._event_parent(ChildEvent(self.name or "agent", event))
        for view in self._views:
            view.consume(event)
        return event

    def _make_views(self) -> list[Any]:
        from nbagent.agent_views import make_views

        return make_views(self)

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
            if isinstance(agent, MultiStepAgent):
                agent._event_parent = self._receive_child_event

    def _prepare_executor(self) -> None:
        """Hook for agents that run code."""

    def _step_stream(self, memory_step: ActionStep) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must implement _step_stream()")

    # ------------------------------------------------------------------ notebook display

    @property
    def widget(self) -> Any:
        """The live widget of this agent (created on first use)."""
        if self._widget is None:
            from nbagent.widget import AgentWidget

            self._widget = AgentWidget.for_agent(self)
        return self._widget

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any] | None:
        from nbagent.views.display import memory_mimebundle

        return memory_mimebundle(self.memory, widget=self.widget)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, model={getattr(self.model, 'model_id', None)!r}, tools={list(self.tools)})"

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        from nbagent.agent_io import agent_to_dict

        return agent_to_dict(self)

    @classmethod
    def from_dict(cls, agent_dict: dict[str, Any], **kwargs: Any) -> MultiStepAgent:
        from nbagent.agent_io import agent_from_dict

        return agent_from_dict(cls, agent_dict, **kwargs)

    def save(self, output_dir: str, relative_path: str | None = None) -> None:
        from nbagent.agent_io import save_agent

        save_agent(self, output_dir)

    @classmethod
    def from_folder(cls, folder: str, **kwargs: Any) -> MultiStepAgent:
        from nbagent.agent_io import load_agent

        return load_agent(cls, folder, **kwargs)

    def push_to_hub(self, repo_id: str, **kwargs: Any) -> str:
        from nbagent.agent_io import push_agent_to_hub

        return push_agent_to_hub(self, repo_id, **kwargs)

    @classmethod
    def from_hub(cls, repo_id: str, trust_remote_code: bool = False, **kwargs: Any) -> MultiStepAgent:
        from nbagent.agent_io import agent_from_hub

        return agent_from_hub(cls, repo_id, trust_remote_code=trust_remote_code, **kwargs)


def _default_model() -> Any:
    from nbagent.models.default import default_model

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


def _call_check(check: Callable, answer: Any, memory: AgentMemory, agent: MultiStepAgent) -> bool:
    params = inspect.signature(check).parameters
    takes_agent = "agent" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    return bool(check(answer, memory, agent=agent) if takes_agent else check(answer, memory))


def _name(function: Callable) -> str:
    return getattr(function, "__name__", repr(function))


# The two kinds live in their own modules; imported here so `from nbagent.agents import CodeAgent` works.
from nbagent.code_agent import CodeAgent  # noqa: E402
from nbagent.toolcalling_agent import ToolCallingAgent  # noqa: E402

__all__ += ["CodeAgent", "ToolCallingAgent"]
