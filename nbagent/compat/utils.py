"""smolagents' `utils` module: `from nbagent.utils import parse_code_blobs, AgentError, ...`.

The errors, the code parsing and the image helpers are nbagent's own (re-exported); the few helpers smolagents
users call that nbagent had no use for are written here, small.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import keyword
import textwrap
from typing import Any

from nbagent.errors import (
    AgentError,
    AgentExecutionError,
    AgentGenerationError,
    AgentMaxStepsError,
    AgentParsingError,
    AgentToolCallError,
    AgentToolExecutionError,
)
from nbagent.loop.parsing import extract_code_from_text
from nbagent.loop.parsing import parse_code_blobs as _parse_code_blobs
from nbagent.sandbox import BASE_BUILTIN_MODULES as _BASE_MODULES
from nbagent.tools.source import object_source

__all__ = [
    "AGENT_GRADIO_APP_TEMPLATE",
    "BASE_BUILTIN_MODULES",
    "MAX_LENGTH_TRUNCATE_CONTENT",
    "AgentError",
    "AgentExecutionError",
    "AgentGenerationError",
    "AgentMaxStepsError",
    "AgentParsingError",
    "AgentToolCallError",
    "AgentToolExecutionError",
    "create_agent_gradio_app_template",
    "encode_image_base64",
    "extract_code_from_text",
    "get_source",
    "instance_to_source",
    "is_valid_name",
    "make_image_url",
    "parse_code_blobs",
    "parse_json_blob",
    "truncate_content",
]

BASE_BUILTIN_MODULES: list[str] = list(_BASE_MODULES)
MAX_LENGTH_TRUNCATE_CONTENT = 20_000


def is_valid_name(name: Any) -> bool:
    """True for a string that can name a Python variable (an identifier, not a keyword)."""
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def parse_code_blobs(text: str, code_block_tags: tuple[str, str] | None = None) -> str:
    """The code in a model's answer (blocks between `code_block_tags` first, then fenced blocks, then the text
    itself if it is Python); ValueError with a hint for the model when there is none."""
    try:
        return _parse_code_blobs(text, code_block_tags)
    except AgentParsingError as error:
        raise ValueError(str(error)) from None


def parse_json_blob(json_blob: str) -> tuple[dict[str, Any], str]:
    """The JSON object in `json_blob` (from its first `{` to its last `}`) and the text before it.

    Raises ValueError when there is no object or it does not decode (the message quotes where it failed).
    """
    start, end = json_blob.find("{"), json_blob.rfind("}")
    if start < 0 or end < start:
        raise ValueError("The model output does not contain any JSON blob.")
    try:
        data = json.loads(json_blob[start : end + 1], strict=False)
    except json.JSONDecodeError as error:
        where = start + error.pos
        raise ValueError(
            f"The JSON blob you used is invalid: {error.msg}. Decoding failed here: {json_blob[where - 4 : where + 5]!r}"
        ) from None
    return data, json_blob[:start]


def truncate_content(content: str, max_length: int = MAX_LENGTH_TRUNCATE_CONTENT) -> str:
    """`content` with its middle cut when longer than `max_length` (the cut is said in the text)."""
    if len(content) <= max_length:
        return content
    half = max_length // 2
    return (
        f"{content[:half]}\n..._This content has been truncated to stay below {max_length} characters_...\n"
        f"{content[-half:]}"
    )


def get_source(obj: Any) -> str:
    """The source of a class or function, dedented and stripped: from its file, or from the IPython session's
    cells for objects defined in a notebook. TypeError for other objects, ValueError when it cannot be found."""
    if not (isinstance(obj, type) or callable(obj)):
        raise TypeError(f"Expected class or callable, got {type(obj)}")
    source = getattr(obj, "__source__", None) or object_source(obj)
    if source:
        return textwrap.dedent(source).strip()
    return _source_from_ipython_history(obj)


def _source_from_ipython_history(obj: Any) -> str:
    try:
        from IPython import get_ipython
    except ImportError:
        raise OSError(f"Python kept no source for {obj!r}") from None
    shell = get_ipython()
    if shell is None:
        raise OSError(f"Python kept no source for {obj!r} (and no IPython session is running)")
    cells = "\n".join(shell.user_ns.get("In", [])).strip()
    if not cells:
        raise ValueError("No code cells found in IPython session")
    lines = cells.split("\n")
    for node in ast.walk(ast.parse(cells)):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == obj.__name__:
            return textwrap.dedent("\n".join(lines[node.lineno - 1 : node.end_lineno])).strip()
    raise ValueError(f"Could not find source code for {obj.__name__} in IPython history")


def instance_to_source(instance: Any, base_cls: type | None = None) -> str:
    """The code that recreates `instance`: a tool's standalone file (as `Tool.save()` writes it), otherwise its
    class's source. Unlike smolagents, a class is not rebuilt from its attributes (docs/smolagents-compat.md)."""
    to_dict = getattr(instance, "to_dict", None)
    if callable(to_dict):
        code = to_dict().get("code")
        if isinstance(code, str):
            return code
    return get_source(type(instance))


# The app.py of a saved agent's Space (smolagents' template variables: agent_name, class_name, agent_dict, tools,
# managed_agents, managed_agent_relative_path). nbagent's own `save()` writes no app; this is for code that renders one.
AGENT_GRADIO_APP_TEMPLATE = """\
\"\"\"Gradio app of the agent {{ agent_name }}.\"\"\"
import os

import yaml

from nbagent import GradioUI, {{ class_name }}, {{ agent_dict['model']['class'] }}

HERE = os.path.dirname(os.path.abspath(__file__))
{% for tool in tools.values() -%}
from {{ managed_agent_relative_path }}tools.{{ tool.name }} import {{ tool.__class__.__name__ }} as {{ tool.name | camelcase }}
{% endfor -%}
{% for agent in managed_agents.values() -%}
from {{ managed_agent_relative_path }}managed_agents.{{ agent.name }}.app import agent_{{ agent.name }}
{% endfor %}
model = {{ agent_dict['model']['class'] }}(**{{ agent_dict['model']['data'] | pyrepr }})
with open(os.path.join(HERE, "prompts.yaml")) as stream:
    prompt_templates = yaml.safe_load(stream)

agent_{{ agent_name }} = {{ class_name }}(
    model=model,
    tools=[{% for name in tools %}{{ name | camelcase }}(), {% endfor %}],
    managed_agents=[{% for name in managed_agents %}agent_{{ name }}, {% endfor %}],
{% for key, value in agent_dict.items() if key not in skipped %}    {{ key }}={{ value | pyrepr }},
{% endfor %}    prompt_templates=prompt_templates,
)

if __name__ == "__main__":
    GradioUI(agent_{{ agent_name }}).launch()
"""
_NOT_KEYWORDS = ("class", "model", "tools", "managed_agents", "requirements", "prompt_templates", "authorized_imports")


def create_agent_gradio_app_template() -> Any:
    """`AGENT_GRADIO_APP_TEMPLATE` as a jinja2 Template (filters `camelcase`, `pyrepr`): `.render(...)` gives app.py."""
    import jinja2

    environment = jinja2.Environment(autoescape=False, keep_trailing_newline=True)
    environment.filters["camelcase"] = lambda name: "".join(part.title() for part in str(name).split("_"))
    environment.filters["pyrepr"] = repr
    return environment.from_string(AGENT_GRADIO_APP_TEMPLATE, globals={"skipped": _NOT_KEYWORDS})


def encode_image_base64(image: Any) -> str:
    """A PIL image as base64-encoded PNG."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("utf-8")


def make_image_url(base64_image: str) -> str:
    return f"data:image/png;base64,{base64_image}"
