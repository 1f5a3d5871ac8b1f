"""The one typed event stream of a run.

`agent.run(task, stream=True)` yields these, in this order for each step:

    RunStart
      StepStart(kind="planning") ChatMessageStreamDelta* PlanningStep       (when planning)
      StepStart(kind="action")   ChatMessageStreamDelta* ToolCall* [CodeOutputDelta*] ToolOutput* ActionStep
      ...
    FinalAnswerStep
    RunEnd

and `Rerun` when a person re-runs from step k (the same stream continues from there).

`ChatMessageStreamDelta` (model text as it is generated), `ToolCall`,
`ToolOutput`, `ActionOutput`, `ActionStep`, `PlanningStep` and `FinalAnswerStep`
are smolagents' kinds (`SMOLAGENTS_EVENTS`): `agent.run(stream=True)` yields only
those, `FinalAnswerStep` last, so code written against smolagents' stream keeps
working. `agent.event_stream(...)` yields them all, nbagent's own included. A run that is not
streamed is the same stream drained. Every view (console, widget, HTML page,
evaluation log) consumes these events and nothing else of the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbagent.models.base import ChatMessageStreamDelta, ChatMessageToolCall

from .result import RunResult
from .steps import ActionStep, FinalAnswerStep, PlanningStep, ToolCall

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "RunStart",
    "StepStart",
    "ToolOutput",
    "ActionOutput",
    "CodeOutputDelta",
    "RunEnd",
    "RunResult",
    "Rerun",
    "ChildEvent",
    "AgentEvent",
    "SMOLAGENTS_EVENTS",
    "StreamEvent",
]


@dataclass
class RunStart:
    task: str
    agent_name: str | None
    images: list[Image] | None = None
    reset: bool = True
    run_id: str = ""
    max_steps: int = 0
    resumed: bool = False  # a continuation of the run in memory (re-run from a step): no new task
    max_time: float | None = None  # seconds the run may run (its time limit), None: no limit


@dataclass
class StepStart:
    step_number: int
    kind: str = "action"  # "action" | "planning" | "final" (the answer from memory after max_steps)


@dataclass
class ToolOutput:
    """The result of one tool call (or of one code block for a CodeAgent)."""

    id: str
    output: Any
    is_final_answer: bool
    observation: str
    tool_call: ToolCall
    logs: str = ""
    images: list[Any] = field(default_factory=list)


@dataclass
class CodeOutputDelta:
    """Text the step's code printed, as it prints it (the finished `ToolOutput` holds all of it).

    Views are told of it live; it is not yielded into the run's stream (it arrives while the
    code runs, from inside the executor call).
    """

    step_number: int
    text: str


@dataclass
class ActionOutput:
    output: Any
    is_final_answer: bool


@dataclass
class RunEnd:
    result: RunResult


@dataclass
class Rerun:
    """The run goes on from step `step_number`: memory was cut there; the earlier run is `forks[fork_index]`.

    Views rebuild what they show from `memory` (the cut memory the run continues from).
    """

    step_number: int
    fork_index: int
    memory: Any = field(repr=False)
    note: str = ""


@dataclass
class ChildEvent:
    """An event of a managed agent's run, forwarded to the views of the agent that called it."""

    agent_name: str
    event: Any


AgentEvent = (
    RunStart
    | StepStart
    | ChatMessageStreamDelta
    | ToolCall
    | ToolOutput
    | ActionStep
    | PlanningStep
    | FinalAnswerStep
    | RunEnd
    | Rerun
    | ChildEvent
)

# What smolagents 1.26's `run(stream=True)` yields; nbagent's other events reach views and `event_stream()`.
SMOLAGENTS_EVENTS = (
    ChatMessageStreamDelta,
    ToolCall,
    ToolOutput,
    ActionOutput,
    ActionStep,
    PlanningStep,
    FinalAnswerStep,
)

# smolagents' `StreamEvent` type (its union, in its order): what `run(stream=True)` yields, for annotations and
# isinstance checks; `ChatMessageToolCall` is in smolagents' union though neither stream yields one.
StreamEvent = (
    ChatMessageStreamDelta
    | ChatMessageToolCall
    | ActionOutput
    | ToolCall
    | ToolOutput
    | PlanningStep
    | ActionStep
    | FinalAnswerStep
)
