"""nbagent: smolagents-style code agents that live in the Jupyter notebook.

`from nbagent import CodeAgent, tool, ...` mirrors `from smolagents import ...`.
In a notebook, `%load_ext nbagent` adds the `%%agent` / `%agent` magics.
Every public name loads on first use, so `import nbagent` stays quick and imports
nothing of Jupyter, rich or the models.

The package is layered; a module imports only from its own package and the layers
below it (tests/test_architecture.py and the import-linter contract enforce it):

    0 base      errors, text, media, _version
    1 parts     sandbox -> tools -> models, prompts
    2 record    steps, memory, persistence, events, status, RunResult
    3 loop      the engine, code and tool steps, sessions, gates, prompting
    4 views     console, widget state, static HTML, gradio messages (no Jupyter)
    5 notebook  the widget, view choice, buttons and their channel, the save hook
    6 agents    MultiStepAgent, CodeAgent, ToolCallingAgent: facades over the loop
    7 doors     magics, cli, gradio_ui, compat, eval, and this root

Modules at the root: errors (the AgentError family), text (truncation policies),
_version, magics (%%agent), cli (`nbagent run`), gradio_ui (GradioUI).
"""

from __future__ import annotations

import importlib
from typing import Any

from nbagent._version import __version__ as __version__

_LAZY: dict[str, str] = {
    # agents
    "MultiStepAgent": "nbagent.agents",
    "CodeAgent": "nbagent.agents",
    "ToolCallingAgent": "nbagent.agents",
    "LogLevel": "nbagent.loop",
    "AgentLogger": "nbagent.loop.monitoring",
    "Monitor": "nbagent.loop.monitoring",
    # memory and events
    "AgentMemory": "nbagent.record",
    "ActionStep": "nbagent.record",
    "PlanningStep": "nbagent.record",
    "TaskStep": "nbagent.record",
    "SystemPromptStep": "nbagent.record",
    "FinalAnswerStep": "nbagent.record",
    "ToolCall": "nbagent.record",
    "Timing": "nbagent.record",
    "RunResult": "nbagent.record",
    "RunStart": "nbagent.record",
    "Rerun": "nbagent.record",
    "RunStatus": "nbagent.record",
    "RunOutcome": "nbagent.record",
    "RunEnd": "nbagent.record",
    "StepStart": "nbagent.record",
    "ToolOutput": "nbagent.record",
    "ActionOutput": "nbagent.record",
    "ChildEvent": "nbagent.record",
    "MemoryStep": "nbagent.record",
    "StreamEvent": "nbagent.record",
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
    "LiteLLMRouterModel": "nbagent.models",
    "OpenAIModel": "nbagent.models",
    "AzureOpenAIModel": "nbagent.models",
    "ApiModel": "nbagent.models",
    "get_clean_message_list": "nbagent.models",
    "REMOVE_PARAMETER": "nbagent.models",
    "default_model": "nbagent.models",
    "RetryPolicy": "nbagent.models",
    "AmazonBedrockModel": "nbagent.models",
    "VLLMModel": "nbagent.models",
    "MLXModel": "nbagent.models",
    "agglomerate_stream_deltas": "nbagent.models",
    "load_model": "nbagent.models",
    # tools
    "Tool": "nbagent.tools",
    "BaseTool": "nbagent.tools",
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
    "AgentImage": "nbagent.media.agent_types",
    "AgentText": "nbagent.media.agent_types",
    "AgentAudio": "nbagent.media.agent_types",
    "AgentType": "nbagent.media.agent_types",
    "handle_agent_output_types": "nbagent.media.agent_types",
    "ToolCollection": "nbagent.tools",
    "MCPClient": "nbagent.tools.mcp_client",
    "launch_gradio_demo": "nbagent.tools",
    # prompts
    "PromptTemplates": "nbagent.prompts",
    "PlanningPromptTemplate": "nbagent.prompts",
    "ManagedAgentPromptTemplate": "nbagent.prompts",
    "FinalAnswerPromptTemplate": "nbagent.prompts",
    "PromptTemplateError": "nbagent.prompts",
    "load_prompt_templates": "nbagent.prompts",
    "populate_template": "nbagent.prompts",
    "EMPTY_PROMPT_TEMPLATES": "nbagent.prompts",
    "merge_prompt_templates": "nbagent.prompts",
    # sandbox
    "LocalPythonExecutor": "nbagent.sandbox",
    "IsolatedPythonExecutor": "nbagent.sandbox",
    "PythonExecutor": "nbagent.sandbox",
    "E2BExecutor": "nbagent.sandbox.remote",
    "DockerExecutor": "nbagent.sandbox.remote",
    "ModalExecutor": "nbagent.sandbox.remote",
    "BlaxelExecutor": "nbagent.sandbox.remote",
    "AgentValue": "nbagent.sandbox",
    "RemoteObject": "nbagent.sandbox",
    "CodeOutput": "nbagent.sandbox",
    "ExecutionError": "nbagent.sandbox",
    "ExecutionStopped": "nbagent.sandbox",
    "ExecutionTimeout": "nbagent.sandbox",
    "PolicyError": "nbagent.sandbox",
    "OperationLimitExceeded": "nbagent.sandbox",
    "FinalAnswerException": "nbagent.sandbox",
    "BASE_BUILTIN_MODULES": "nbagent.sandbox",
    "evaluate_python_code": "nbagent.compat.local_python_executor",
    # notebook
    "AgentWidget": "nbagent.notebook.widget",
    "RunDriver": "nbagent.notebook.driver",
    "RunController": "nbagent.notebook.driver",
    "RunGates": "nbagent.loop",
    "RunControl": "nbagent.loop",
    "CodeRejected": "nbagent.loop",
    "ControlError": "nbagent.loop",
    # smolagents compatibility (see tests/seeds/AUDIT.md)
    "ManagedAgent": "nbagent.compat.legacy",
    "from_hub": "nbagent.compat.legacy",
    "WebSearchTool": "nbagent.tools.web_search",
    "DuckDuckGoSearchTool": "nbagent.tools.web_search",
    "ApiWebSearchTool": "nbagent.tools.web_search",
    "GoogleSearchTool": "nbagent.tools.service_tools",
    "WikipediaSearchTool": "nbagent.tools.service_tools",
    "SpeechToTextTool": "nbagent.tools.service_tools",
    "GradioUI": "nbagent.gradio_ui",
    # evaluation
    "evaluate": "nbagent.eval",
    "EvalResults": "nbagent.eval",
    "Score": "nbagent.eval",
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
    _register_notebook_display()


def _register_notebook_display() -> None:
    """Show `AgentMemory` as the step widget in IPython, registered by type name (the record never imports it)."""
    from nbagent.notebook.kernel import current_shell  # imports nothing of Jupyter

    formatter = getattr(getattr(current_shell(), "display_formatter", None), "mimebundle_formatter", None)
    if formatter is None:
        return

    def show(memory: Any, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from nbagent.notebook.bundle import memory_mimebundle

        return memory_mimebundle(memory)

    formatter.for_type_by_name("nbagent.record.memory", "AgentMemory", show)


_register_notebook_display()

from nbagent.compat.paths import install_module_aliases  # noqa: E402

install_module_aliases()
