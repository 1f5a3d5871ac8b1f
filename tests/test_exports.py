"""Every public name of `nbagent` resolves (they load lazily, so a typo would only show on use)."""

import importlib

import pytest

import nbagent


@pytest.mark.parametrize("name", sorted(set(nbagent.__all__) - {"__version__"}))
def test_public_name_resolves(name):
    assert getattr(nbagent, name) is not None


def test_smolagents_top_level_names_exist():
    smolagents_names = [
        "CodeAgent",
        "ToolCallingAgent",
        "MultiStepAgent",
        "tool",
        "Tool",
        "TransformersModel",
        "InferenceClientModel",
        "HfApiModel",
        "OpenAIServerModel",
        "LiteLLMModel",
        "ActionStep",
        "TaskStep",
        "PlanningStep",
        "FinalAnswerStep",
        "SystemPromptStep",
        "AgentMemory",
        "LogLevel",
        "LocalPythonExecutor",
        "FinalAnswerTool",
        "PythonInterpreterTool",
        "VisitWebpageTool",
        # the rest of smolagents 1.26's top level (issue 30; tests/compat/test_smolagents_surface.py uses each)
        "PythonExecutor",
        "AmazonBedrockModel",
        "VLLMModel",
        "MLXModel",
        "DockerExecutor",
        "E2BExecutor",
        "ModalExecutor",
        "BlaxelExecutor",
        "agglomerate_stream_deltas",
        "load_model",
        "handle_agent_output_types",
        "StreamEvent",
        "MemoryStep",
        "BaseTool",
        "ApiWebSearchTool",
    ]
    missing = [name for name in smolagents_names if not hasattr(nbagent, name)]
    assert not missing


def test_unknown_name_is_a_clear_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        _ = importlib.import_module("nbagent").NoSuchThing


def test_the_executors_and_the_boundarys_values_are_public():
    """The sandbox's public surface: both executors, what the boundary hands back, the errors (issue 19, item 8)."""
    from nbagent import sandbox

    surface = ["IsolatedPythonExecutor", "LocalPythonExecutor", "CodeOutput", "AgentValue", "RemoteObject",
               "ExecutionError", "ExecutionTimeout", "ExecutionStopped", "PolicyError"]  # fmt: skip
    for name in surface:
        assert getattr(nbagent, name) is getattr(sandbox, name), name
    executor = nbagent.IsolatedPythonExecutor(timeout_seconds=30)
    try:
        assert executor("1 + 1").output == 2
    finally:
        executor.close()
