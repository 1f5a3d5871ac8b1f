"""smolagents' `memory` module: `from nbagent.memory import ActionStep, AgentMemory, CallbackRegistry, ...`.

The steps and the memory are nbagent's record (`nbagent.record`); smolagents' memory module also
re-exports the chat message types and the step callback registry, so this one does too.
"""

from __future__ import annotations

from nbagent.loop.callbacks import CallbackRegistry
from nbagent.models import ChatMessage, MessageRole, TokenUsage
from nbagent.record import (
    ActionOutput,
    ActionStep,
    AgentMemory,
    FinalAnswerStep,
    MemoryStep,
    PlanningStep,
    RunResult,
    SystemPromptStep,
    TaskStep,
    Timing,
    ToolCall,
    ToolOutput,
)

__all__ = [
    "ActionOutput",
    "ActionStep",
    "AgentMemory",
    "CallbackRegistry",
    "ChatMessage",
    "FinalAnswerStep",
    "MemoryStep",
    "MessageRole",
    "PlanningStep",
    "RunResult",
    "SystemPromptStep",
    "TaskStep",
    "Timing",
    "TokenUsage",
    "ToolCall",
    "ToolOutput",
]
