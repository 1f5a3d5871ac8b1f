"""`MultiStepAgent`: the public agent — the loop, wired to its views, the notebook and persistence.

The loop (nbagent.loop) runs the task; this facade decides what watches a run
(the live widget in a notebook, the rich console elsewhere, nothing when silent),
hands those views to the run, and offers smolagents' API around it: `run`,
`step`, `replay`, `visualize`, save/load, managed-agent calls. Outside a kernel
nothing of Jupyter is imported; the console (rich) only when it is asked for.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from nbagent.loop import AgentLoop, RunSession, View
from nbagent.loop.deadline import parse_max_time
from nbagent.record import SMOLAGENTS_EVENTS, ActionStep, AgentMemory

from . import persistence
from .aio import pump_events
from .legacy import agent_logs, pop_legacy_options

__all__ = ["MultiStepAgent"]

_LOOP_OPTIONS = frozenset(inspect.signature(AgentLoop.__init__).parameters) - {"self"}


class MultiStepAgent(AgentLoop):
    """An agent that solves a task step by step (think, act, observe) until `final_answer`.

    Constructor options follow smolagents. Where nbagent differs: `model=None`
    means the offline default model; `show_widget=None` shows the live widget
    when running inside a notebook (False: never; the console is used then).
    nbagent's own: `max_time` (the run's time limit) and `on_permission` (what a
    file or host the sandbox refused the code becomes: "ask" a person, "deny",
    or `f(ask) -> "once" | "run" | "deny"`; see nbagent/loop/permissions.py).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        persistence.AGENT_CLASSES.setdefault(cls.__name__, cls)

    def __init__(self, *args: Any, show_widget: bool | None = None, **kwargs: Any) -> None:
        kwargs = pop_legacy_options(type(self).__name__, kwargs)
        unknown = sorted(set(kwargs) - _LOOP_OPTIONS)
        if unknown:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments: {', '.join(unknown)}")
        self.show_widget = show_widget
        self.session = RunSession(self)
        self._driver: Any = None
        self._widget: Any = None
        super().__init__(*args, **kwargs)

    # ------------------------------------------------------------------ running

    def run(
        self,
        task: str,
        stream: bool = False,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
        return_full_result: bool | None = None,
        max_time: float | str | None = None,
    ) -> Any:
        """Run the agent on `task`; with `stream=True`, return the generator of its events.

        The stream holds smolagents' kinds only (model deltas, `ToolCall`, `ToolOutput`,
        `ActionOutput`, `ActionStep`, `PlanningStep`, and `FinalAnswerStep` last);
        `event_stream()` yields nbagent's own events too. As in smolagents, model deltas are
        in the stream only with `stream_outputs=True`.
        `max_time` (nbagent's): this run's time limit, in seconds or as "90s", "10m", "1h" (0: none);
        default: the agent's `max_time`. When it passes, the run ends with the state "timed_out".
        """
        events = self._event_stream(task, reset, images, additional_args, max_steps, False, max_time)
        if stream:
            return _smolagents_events(events)
        for _ in events:
            pass
        result = self.last_result
        full = self.return_full_result if return_full_result is None else return_full_result
        return result if full else result.output

    def event_stream(
        self,
        task: str,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
        max_time: float | str | None = None,
    ) -> Iterator[Any]:
        """Run the agent on `task` and yield every event: smolagents' kinds and nbagent's own.

        nbagent's own: `RunStart` first and `RunEnd` last (with the `RunResult`), `StepStart`
        before each step, `ChildEvent` for a managed agent's events, `Rerun` when a person
        re-runs from a step. This is the stream the views see (see nbagent/record/events.py), so
        it holds the model's text as it comes (`ChatMessageStreamDelta`s: streamed from a model
        that streams, else each reply as one delta) whatever `stream_outputs` says.
        """
        return self._event_stream(task, reset, images, additional_args, max_steps, True, max_time)

    def _event_stream(
        self,
        task: str,
        reset: bool,
        images: Any,
        additional_args: Any,
        max_steps: int | None,
        model_deltas: bool,
        max_time: float | str | None = None,
    ) -> Iterator[Any]:
        _check_task(task)
        _check_max_steps(max_steps)
        limit = self.max_time if max_time is None else parse_max_time(max_time)
        if self.session.active:
            raise RuntimeError(self.session.busy_message())
        return self._streamed(task, reset, images, additional_args, max_steps or self.max_steps, model_deltas, limit)

    def _streamed(
        self,
        task: str,
        reset: bool,
        images: Any,
        additional_args: Any,
        max_steps: int,
        model_deltas: bool,
        max_time: float | None,
    ) -> Iterator[Any]:
        # views are made when the stream starts, so a stream never iterated shows nothing
        views = self._views_for_run()
        self._stream_model_deltas = model_deltas
        yield from self.session.events(task, reset, images, additional_args, max_steps, views=views, max_time=max_time)

    async def arun(
        self,
        task: str,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
        return_full_result: bool | None = None,
        max_time: float | str | None = None,
    ) -> Any:
        """`run()` for async code: `await agent.arun(task)`; the event loop stays free while the agent works."""
        async for _ in self.astream(
            task, reset, images, additional_args, max_steps, all_events=True, max_time=max_time
        ):
            pass
        result = self.last_result
        full = self.return_full_result if return_full_result is None else return_full_result
        return result if full else result.output

    async def astream(
        self,
        task: str,
        reset: bool = True,
        images: list[Any] | None = None,
        additional_args: dict[str, Any] | None = None,
        max_steps: int | None = None,
        all_events: bool = False,
        max_time: float | str | None = None,
    ) -> AsyncIterator[Any]:
        """`async for event in agent.astream(task)`: the events of `run(stream=True)` (all of
        `event_stream()` with `all_events=True`); the same memory, views and controls as a sync run."""
        events = self._event_stream(task, reset, images, additional_args, max_steps, all_events, max_time)
        async for event in pump_events(events, self.gates.request_stop):
            if all_events or isinstance(event, SMOLAGENTS_EVENTS):
                yield event

    def step(self, memory_step: ActionStep) -> Any:
        """Run one action step into `memory_step` (smolagents' recipe); the steps show as in a run."""
        if not self._views and self._event_parent is None:
            self._views = self._views_for_run()
        return super().step(memory_step)

    def start(self, task: str, **run_kwargs: Any) -> Any:
        """Prepare a paused run of `task` that `agent.driver.step()`/`.run()` or the widget's buttons drive.

        Returns the `RunDriver`; the kernel stays free (see nbagent/notebook/driver.py).
        """
        return self.driver.start(task, **run_kwargs)

    def __call__(self, task: str, **kwargs: Any) -> str:
        """Run as a managed agent: the task is wrapped, the answer returned as a report."""
        return self._prompts.managed_report(self.run(self._prompts.managed_task(task), **kwargs))

    # ------------------------------------------------------------------ views

    def _views_for_run(self) -> list[View]:
        """The views of a new run: none for a managed agent (its manager shows it), else by context."""
        if self._event_parent is not None:
            return []
        from nbagent.notebook.display import choose_views  # imports nothing of Jupyter outside a kernel

        return choose_views(self)

    @property
    def driver(self) -> Any:
        """The `RunDriver` behind the widget's Run/Step/Pause/Stop/Approve/Reject/re-run buttons."""
        if self._driver is None:
            from nbagent.notebook.driver import RunDriver

            self._driver = RunDriver(self)
        return self._driver

    @property
    def forks(self) -> list[AgentMemory]:
        """The earlier runs kept by "re-run from step k", oldest first."""
        return self.session.forks

    def restore_fork(self, index: int) -> str:
        """Make `forks[index]` the live run again: its memory, and its variables where the executor kept them (the
        live run becomes `forks[index]` in its place). Returns the note saying what was restored."""
        return self.driver.restore_fork(index)

    def undo(self) -> str:
        """Put every variable the last run created, rebound or changed back as it was before the run (the step
        snapshots of time travel); returns the note saying what was restored and what not (files, tools' effects).
        The run's record stays; the widget says it was undone."""
        return self.driver.undo()

    def to_code(self, verify: bool = True, call_tools: bool = True) -> Any:
        """The last run as plain Python: the smallest program that gives its final answer without the model (the
        steps' code in order, less failed steps, exploration and prints; `final_answer(x)` as `answer = x`; the
        imports it needs; its inputs, the notebook variables the run read, named in a comment). Checked first: run
        once on copies of the inputs in a fresh executor of the agent's kind, compared with the run's answer
        (`verify=False` skips it). A `RunProgram`: `.code`, `.checked`, `.reason`; `str()` starts with
        "# checked: reproduces the answer" or "# unchecked: <why>". A run without a final answer has no program
        (`.code` is None, `.reason` says why). `call_tools=False` leaves a program that calls tools unchecked (a
        check calls them again). See nbagent/loop/program."""
        from nbagent.loop.program import program_of

        return program_of(self, verify=verify, call_tools=call_tools)

    def to_function(self, name: str, verify: bool = True) -> Any:
        """The program of `to_code()` as `def name(<inputs>): ... return answer`, which answers the same question on
        other data (`revenue_of(sales_2025)`); checked by calling it on copies of the run's inputs."""
        from nbagent.loop.program import function_of

        return function_of(self, name, verify=verify)

    @property
    def scratch(self) -> dict[str, Any]:
        """The names the agent's code made that stay in its scope, not your notebook (`tmp`, `result2`): read them
        here, bring them in with `keep()`. Its next run sees them again."""
        scope = getattr(self, "scope", None)
        return scope.names if scope is not None else {}

    def keep(self, *names: str) -> list[str]:
        """Bring names of `scratch` (none given: all) into the notebook for good; returns the names brought in."""
        scope = getattr(self, "scope", None)
        executor = getattr(self, "python_executor", None)
        if scope is None or executor is None:
            return []
        return scope.keep(executor.state, list(names) or None)

    @property
    def widget(self) -> Any:
        """The live widget of this agent (created on first use)."""
        if self._widget is None:
            from nbagent.notebook.widget import AgentWidget

            self._widget = AgentWidget.for_agent(self)
        return self._widget

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any] | None:
        from nbagent.notebook.bundle import memory_mimebundle

        return memory_mimebundle(self.memory, widget=self.widget)

    def replay(self, detailed: bool = False) -> None:
        self.memory.replay(detailed=detailed)

    def visualize(self) -> None:
        """Print the agent as a tree: model, tools with their inputs, managed agents."""
        from nbagent.views.tree import visualize_agent

        visualize_agent(self)

    @property
    def logs(self) -> list[Any]:
        """Deprecated: the action steps as dicts (with `code`, `output`, `duration`); use `memory.steps`."""
        return agent_logs(self)

    # ------------------------------------------------------------------ old names

    @property
    def control(self) -> Any:
        """The run's gates (`RunGates`); the older name of `agent.gates`."""
        return self.gates

    @property
    def controller(self) -> Any:
        """The older name of `agent.driver`."""
        return self.driver

    def __repr__(self) -> str:
        model_id = getattr(self.model, "model_id", None)
        return f"{type(self).__name__}(name={self.name!r}, model={model_id!r}, tools={list(self.tools)})"

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        return persistence.agent_to_dict(self)

    @classmethod
    def from_dict(cls, agent_dict: dict[str, Any], **kwargs: Any) -> MultiStepAgent:
        return persistence.agent_from_dict(cls, agent_dict, **kwargs)

    def save(self, output_dir: str, relative_path: str | None = None) -> None:
        persistence.save_agent(self, output_dir)

    @classmethod
    def from_folder(cls, folder: str | Path, **kwargs: Any) -> MultiStepAgent:
        import nbagent.agents as agents  # `Path` looked up there, as smolagents.agents.Path (tests patch it)

        return persistence.load_agent(cls, agents.Path(folder), **kwargs)

    def push_to_hub(self, repo_id: str, **kwargs: Any) -> str:
        return persistence.push_agent_to_hub(self, repo_id, **kwargs)

    @classmethod
    def from_hub(cls, repo_id: str, trust_remote_code: bool = False, **kwargs: Any) -> MultiStepAgent:
        return persistence.agent_from_hub(cls, repo_id, trust_remote_code=trust_remote_code, **kwargs)


persistence.AGENT_CLASSES["MultiStepAgent"] = MultiStepAgent


def _smolagents_events(events: Iterator[Any]) -> Iterator[Any]:
    """The events smolagents' stream has; closing this stream closes the run's."""
    try:
        for event in events:
            if isinstance(event, SMOLAGENTS_EVENTS):
                yield event
    finally:
        events.close()  # type: ignore[attr-defined]


def _check_task(task: Any) -> None:
    if not isinstance(task, str) or not task.strip():
        raise ValueError("The task must be a non-empty string")


def _check_max_steps(max_steps: Any) -> None:
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 1):
        raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
