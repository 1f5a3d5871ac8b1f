"""Tools: the `Tool` class, the `@tool` decorator, the default toolbox, schemas and hub sharing."""

from .base import Tool, render_code_signature, render_tool_calling_prompt
from .decorator import FunctionTool, tool
from .default_tools import (
    BASE_TOOLS,
    TOOL_MAPPING,
    FinalAnswerTool,
    PythonInterpreterTool,
    UserInputTool,
    VisitWebpageTool,
    get_base_tools,
)
from .errors import ToolArgumentError, ToolDefinitionError, ToolSerializationError
from .hub import load_tool
from .schema import get_tool_json_schema, validate_tool_arguments
from .types import AUTHORIZED_TYPES

__all__ = [
    "AUTHORIZED_TYPES",
    "BASE_TOOLS",
    "TOOL_MAPPING",
    "FinalAnswerTool",
    "FunctionTool",
    "PythonInterpreterTool",
    "Tool",
    "ToolArgumentError",
    "ToolDefinitionError",
    "ToolSerializationError",
    "UserInputTool",
    "VisitWebpageTool",
    "get_base_tools",
    "get_tool_json_schema",
    "load_tool",
    "render_code_signature",
    "render_tool_calling_prompt",
    "tool",
    "validate_tool_arguments",
]
