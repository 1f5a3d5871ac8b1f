"""Layer 2, record: what a run leaves behind and the news of it.

Modules:
    steps    the memory steps (smolagents' field names): TaskStep, ActionStep, PlanningStep, FinalAnswerStep, …
    memory   AgentMemory: the system prompt and the steps; save/load/replay
    persist  lossless JSON + PNG files for a memory, and content equality
    events   the typed event stream of a run (RunStart, StepStart, ToolOutput, ActionOutput, RunEnd, Rerun, …)
    result   RunResult: output, outcome, steps, tokens, time
    status   the one status vocabulary: RunOutcome, RunStatus and the map between them
"""

from .events import (
    SMOLAGENTS_EVENTS,
    ActionOutput,
    AgentEvent,
    ChildEvent,
    CodeOutputDelta,
    Rerun,
    RunEnd,
    RunStart,
    StepStart,
    StreamEvent,
    ToolOutput,
)
from .memory import AgentMemory
from .result import RunResult
from .status import RunOutcome, RunStatus, status_of
from .steps import (
    CODE_TOOL_NAME,
    ActionStep,
    FinalAnswerStep,
    MemoryStep,
    PlanningStep,
    SystemPromptStep,
    TaskStep,
    Timing,
    ToolCall,
)

__all__ = [
    "CODE_TOOL_NAME",
    "SMOLAGENTS_EVENTS",
    "StreamEvent",
    "ActionOutput",
    "ActionStep",
    "AgentEvent",
    "AgentMemory",
    "ChildEvent",
    "CodeOutputDelta",
    "FinalAnswerStep",
    "MemoryStep",
    "PlanningStep",
    "Rerun",
    "RunEnd",
    "RunOutcome",
    "RunResult",
    "RunStart",
    "RunStatus",
    "StepStart",
    "SystemPromptStep",
    "TaskStep",
    "Timing",
    "ToolCall",
    "ToolOutput",
    "status_of",
]
