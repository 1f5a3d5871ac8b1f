"""The one typed event stream of a run.

`agent.run(task, stream=True)` yields these, in this order for each step:

    RunStart
      StepStart(kind="planning") ChatMessageStreamDelta* PlanningStep       (when planning)
      StepStart(kind="action")   ChatMessageStreamDelta* ToolCall* ToolOutput* ActionStep
      ...
    FinalAnswerStep
    RunEnd

`ChatMessageStreamDelta` (model text as it is generated), `ToolCall`,
`ActionStep`, `PlanningStep` and `FinalAnswerStep` are the smolagents types,
so code written against smolagents' stream keeps working. A run that is not
streamed is the same stream drained. Every view (console, widget, HTML page,
evaluation log) consumes these events and nothing else of the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from nbagent.memory import ActionStep, FinalAnswerStep, PlanningStep, ToolCall
from nbagent.models.base import ChatMessageStreamDelta, TokenUsage

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "RunStart",
    "StepStart",
    "ToolOutput",
    "ActionOutput",
    "RunEnd",
    "RunResult",
    "ChildEvent",
    "AgentEvent",
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
class ActionOutput:
    output: Any
    is_final_answer: bool


@dataclass
class RunResult:
    """What `run(..., return_full_result=True)` returns.

    `steps` (the memory steps as dicts, as in smolagents) is built on first use:
    most runs never look at it, and converting a long memory costs time.
    """

    output: Any
    state: str  # "success" | "max_steps_error" | "stopped" | "error"
    memory_steps: list[Any] = field(repr=False)
    token_usage: TokenUsage | None
    timing: Any
    error: str | None = None

    @cached_property
    def steps(self) -> list[dict[str, Any]]:
        return [step.dict() for step in self.memory_steps]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.steps

    def dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "state": self.state,
            "steps": self.steps,
            "token_usage": self.token_usage.dict() if self.token_usage is not None else None,
            "timing": self.timing.dict(),
            "error": self.error,
        }


@dataclass
class RunEnd:
    result: RunResult


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
    | ChildEvent
)
