"""smolagents' module paths under `nbagent.`: one representative import per path, and what each resolves to."""

from __future__ import annotations

import importlib

import pytest

# (smolagents module, a name users import from it, where nbagent's real object lives)
PATHS = [
    ("agent_types", "AgentImage", "nbagent.media.agent_types"),
    ("agent_types", "_AGENT_TYPE_MAPPING", "nbagent.media.agent_types"),
    ("monitoring", "AgentLogger", "nbagent.loop.monitoring"),
    ("monitoring", "LogLevel", "nbagent.loop.view"),
    ("memory", "CallbackRegistry", "nbagent.loop.callbacks"),
    ("memory", "ActionStep", "nbagent.record"),
    ("memory", "MessageRole", "nbagent.models"),
    ("utils", "AgentToolExecutionError", "nbagent.errors"),
    ("utils", "extract_code_from_text", "nbagent.loop.parsing"),
    ("default_tools", "FinalAnswerTool", "nbagent.tools.default_tools"),
    ("default_tools", "DuckDuckGoSearchTool", "nbagent.tools.web_search"),
    ("local_python_executor", "LocalPythonExecutor", "nbagent.sandbox"),
    ("local_python_executor", "InterpreterError", "nbagent.sandbox"),
    ("tool_validation", "validate_tool_attributes", "nbagent.tools.validation"),
    ("_function_type_hints_utils", "get_json_schema", "nbagent.tools"),
    ("tools", "ToolCollection", "nbagent.tools"),
]


@pytest.mark.parametrize(("module", "name", "home"), PATHS, ids=[f"{m}.{n}" for m, n, _ in PATHS])
def test_a_smolagents_path_gives_nbagents_own_object(module: str, name: str, home: str) -> None:
    aliased = getattr(importlib.import_module(f"nbagent.{module}"), name)
    real = importlib.import_module(home)
    expected = getattr(real, "validate_tool_class" if name == "validate_tool_attributes" else name)
    assert aliased is expected


def test_an_aliased_module_is_one_module_under_both_names() -> None:
    import nbagent.utils

    import nbagent.compat.utils

    assert nbagent.utils is nbagent.compat.utils
    assert nbagent.utils.__name__ == "nbagent.compat.utils"  # its own name, for tracebacks and pickling


def test_utils_helpers_behave_as_in_smolagents() -> None:
    from nbagent.utils import is_valid_name, parse_code_blobs, parse_json_blob

    assert is_valid_name("valid_name") and not is_valid_name("class") and not is_valid_name(None)
    assert parse_json_blob('Thought: x {"name": "f", "arguments": {}} trailing') == (
        {"name": "f", "arguments": {}},
        "Thought: x ",
    )
    with pytest.raises(ValueError, match="does not contain any JSON"):
        parse_json_blob("no json here")
    assert parse_code_blobs("<code>\na = 1\n</code>\n<code>\nb = 2\n</code>", ("<code>", "</code>")) == "a = 1\n\nb = 2"
    with pytest.raises(ValueError):
        parse_code_blobs("Just prose, no code.", ("<code>", "</code>"))


def test_the_agent_app_template_renders_python() -> None:
    import ast

    from nbagent.utils import create_agent_gradio_app_template

    agent_dict = {"model": {"class": "InferenceClientModel", "data": {"model_id": "m"}}, "class": "CodeAgent"}
    app = create_agent_gradio_app_template().render(
        agent_name="boss",
        class_name="CodeAgent",
        agent_dict={**agent_dict, "max_steps": 3},
        tools={},
        managed_agents={},
        managed_agent_relative_path="",
    )
    ast.parse(app)
    assert "max_steps=3," in app and "class=" not in app and "InferenceClientModel(**{'model_id': 'm'})" in app


def test_agent_image_takes_a_torch_tensor() -> None:
    torch = pytest.importorskip("torch")
    from nbagent.agent_types import AgentImage

    tensor = torch.randint(0, 256, (8, 6, 3))
    image = AgentImage(tensor)
    assert image.to_raw().size == (6, 8)
    assert image._tensor is tensor  # smolagents keeps the tensor under this name
