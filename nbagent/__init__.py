"""nbagent: smolagents-style code agents that live in the Jupyter notebook.

`from nbagent import CodeAgent, tool, ...` mirrors `from smolagents import ...`.
In a notebook, `%load_ext nbagent` adds the `%%agent` / `%agent` magics.
Heavy parts (models, widget) load on first use, so `import nbagent` stays quick.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    # agents
    "MultiStepAgent": "nbagent.agents",
    "CodeAgent": "nbagent.agents",
    "ToolCallingAgent": "nbagent.agents",
    "LogLevel": "nbagent.console",
    # memory and events
    "AgentMemory": "nbagent.memory",
    "ActionStep": "nbagent.memory",
    "PlanningStep": "nbagent.memory",
    "TaskStep": "nbagent.memory",
    "SystemPromptStep": "nbagent.memory",
    "FinalAnswerStep": "nbagent.memory",
    "ToolCall": "nbagent.memory",
    "Timing": "nbagent.memory",
    "RunResult": "nbagent.events",
    "RunStart": "nbagent.events",
    "RunEnd": "nbagent.events",
    "StepStart": "nbagent.events",
    "ToolOutput": "nbagent.events",
    "ActionOutput": "nbagent.events",
    "ChildEvent": "nbagent.events",
    # errors
    "AgentError": "nbagent.errors",
    "AgentParsingError": "nbagent.errors",
    "AgentExecutionError": "nbagent.errors",
    "AgentToolCallError": "nbagent.errors",
    "AgentToolExecutionError": "nbagent.errors",
    "AgentGenerationError": "nbagent.errors",
    "AgentMaxStepsError": "nbagent.errors",
    # models
    "Model": "nbagent.models",
    "ChatMessage": "nbagent.models",
    "ChatMessageStreamDelta": "nbagent.models",
    "MessageRole": "nbagent.models",
    "TokenUsage": "nbagent.models",
    "ModelError": "nbagent.models",
    "ScriptedModel": "nbagent.models",
    "TransformersModel": "nbagent.models",
    "LlamaCppModel": "nbagent.models",
    "OpenAIServerModel": "nbagent.models",
    "AzureOpenAIServerModel": "nbagent.models",
    "InferenceClientModel": "nbagent.models",
    "HfApiModel": "nbagent.models",
    "LiteLLMModel": "nbagent.models",
    "default_model": "nbagent.models",
    "RetryPolicy": "nbagent.models",
    # tools
    "Tool": "nbagent.tools",
    "tool": "nbagent.tools",
    "FinalAnswerTool": "nbagent.tools",
    "PythonInterpreterTool": "nbagent.tools",
    "UserInputTool": "nbagent.tools",
    "VisitWebpageTool": "nbagent.tools",
    "load_tool": "nbagent.tools",
    "TOOL_MAPPING": "nbagent.tools",
    "BASE_TOOLS": "nbagent.tools",
    "AUTHORIZED_TYPES": "nbagent.tools",
    "ToolDefinitionError": "nbagent.tools",
    "ToolSerializationError": "nbagent.tools",
    "ToolArgumentError": "nbagent.tools",
    "get_tool_json_schema": "nbagent.tools",
    "validate_tool_arguments": "nbagent.tools",
    "AgentImage": "nbagent.agent_types",
    "AgentText": "nbagent.agent_types",
    "AgentAudio": "nbagent.agent_types",
    # prompts
    "PromptTemplates": "nbagent.prompts",
    "PlanningPromptTemplate": "nbagent.prompts",
    "ManagedAgentPromptTemplate": "nbagent.prompts",
    "FinalAnswerPromptTemplate": "nbagent.prompts",
    "PromptTemplateError": "nbagent.prompts",
    "load_prompt_templates": "nbagent.prompts",
    "populate_template": "nbagent.prompts",
    "merge_prompt_templates": "nbagent.prompts",
    # sandbox
    "LocalPythonExecutor": "nbagent.sandbox",
    "CodeOutput": "nbagent.sandbox",
    "ExecutionError": "nbagent.sandbox",
    "ExecutionStopped": "nbagent.sandbox",
    "ExecutionTimeout": "nbagent.sandbox",
    "PolicyError": "nbagent.sandbox",
    "OperationLimitExceeded": "nbagent.sandbox",
    "FinalAnswerException": "nbagent.sandbox",
    "BASE_BUILTIN_MODULES": "nbagent.sandbox",
    # notebook
    "AgentWidget": "nbagent.widget",
    "RunController": "nbagent.runner",
    "RunControl": "nbagent.control",
    "CodeRejected": "nbagent.control",
    "ControlError": "nbagent.control",
    # smolagents compatibility (see tests/seeds/AUDIT.md)
    "ManagedAgent": "nbagent.compat",
    "from_hub": "nbagent.compat",
    "WebSearchTool": "nbagent.web_search",
    "DuckDuckGoSearchTool": "nbagent.web_search",
    "GradioUI": "nbagent.gradio_ui",
    "stream_to_gradio": "nbagent.gradio_ui",
}

__all__ = sorted([*_LAZY, "__version__", "load_ipython_extension"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nbagent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext nbagent`: register the `%%agent` and `%agent` magics."""
    from nbagent.magics import AgentMagics

    ipython.register_magics(AgentMagics)
