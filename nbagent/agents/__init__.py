"""Layer 6, agents: the public agents — small facades that wire the loop, views, notebook and persistence.

`from nbagent.agents import CodeAgent` works as `from smolagents.agents import CodeAgent` does.

Modules:
    base         MultiStepAgent: run/step/start, which views watch a run, display, save/load
    code         CodeAgent: actions are Python code run in the sandbox
    toolcalling  ToolCallingAgent: actions are tool calls
    aio          async runs: arun/astream drive the loop on a worker thread for the caller's event loop
    persistence  agent.json / prompts.yaml / tools/*.py folders, to_dict/from_dict, the Hub
    legacy       old smolagents options and `agent.logs`, kept for old code
"""

from pathlib import Path  # noqa: F401  (smolagents.agents has it; from_folder looks it up here)

# smolagents' `agents` module also hands out these names (its tests and users import them from there).
from nbagent.errors import (
    AgentError,
    AgentExecutionError,
    AgentGenerationError,
    AgentMaxStepsError,
    AgentParsingError,
    AgentToolCallError,
    AgentToolExecutionError,
)
from nbagent.loop import LogLevel
from nbagent.prompts import (
    EMPTY_PROMPT_TEMPLATES,
    FinalAnswerPromptTemplate,
    ManagedAgentPromptTemplate,
    PlanningPromptTemplate,
    PromptTemplates,
    populate_template,
)
from nbagent.record import ActionOutput, ActionStep, FinalAnswerStep, RunResult, ToolCall, ToolOutput

from .base import MultiStepAgent
from .code import CodeAgent
from .toolcalling import ToolCallingAgent

__all__ = [
    "EMPTY_PROMPT_TEMPLATES",
    "ActionOutput",
    "ActionStep",
    "AgentError",
    "AgentExecutionError",
    "AgentGenerationError",
    "AgentMaxStepsError",
    "AgentParsingError",
    "AgentToolCallError",
    "AgentToolExecutionError",
    "CodeAgent",
    "FinalAnswerPromptTemplate",
    "FinalAnswerStep",
    "LogLevel",
    "ManagedAgentPromptTemplate",
    "MultiStepAgent",
    "PlanningPromptTemplate",
    "PromptTemplates",
    "RunResult",
    "ToolCall",
    "ToolCallingAgent",
    "ToolOutput",
    "populate_template",
]
