"""Tools: the `Tool` class, the `@tool` decorator, the default toolbox, schemas and hub sharing.

Modules:
    base             Tool (and BaseTool): attributes, call, prompt texts, save/load, hub methods, from_langchain/space/gradio
    foreign          a tool defined elsewhere as parts Tool wraps; JSON-schema properties as inputs
    langchain        a LangChain tool read as those parts (Tool.from_langchain)
    spaces           a Gradio app or Space through gradio_client 2.x (Tool.from_space, Tool.from_gradio)
    decorator        @tool and FunctionTool (a typed, documented function as a tool)
    function_schema  a function's inputs from its hints and docstring; smolagents' get_json_schema
    forward_schema   a Tool subclass's inputs/output_type read from its forward()
    validation       the definition checks run when a tool is instantiated
    types            the tool type vocabulary and Python hints -> tool types
    docstring        Google-style docstring parsing
    schema           tools as OpenAI function schemas; checks of a model's arguments
    source           a tool as one standalone Python file; get_imports
    collection       ToolCollection (from_hub, from_mcp) and load_tool
    mcp_client       MCPClient: MCP servers' tools on the mcp 2.x SDK (stdio started and stopped here, streamable HTTP)
    mcp_session      the MCP connections on a thread of their own; sync calls awaited in slices
    calls            the limits of the tool call under way (the step's deadline, Stop) for a tool that waits
    hub              Hugging Face Hub upload/download (duck-typed, below base)
    gradio_demo      launch_gradio_demo and the app.py of a Space
    default_tools    final_answer, python_interpreter, user_input, visit_webpage
    web_search       web search tools
    service_tools    GoogleSearchTool, WikipediaSearchTool, SpeechToTextTool (a web service or a model each)
    errors           ToolDefinitionError (+ DocstringParsingException, TypeHintParsingException), ...
"""

from .base import BaseTool, Tool, render_code_signature, render_tool_calling_prompt
from .collection import ToolCollection, load_tool
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
from .errors import (
    DocstringParsingException,
    ToolArgumentError,
    ToolDefinitionError,
    ToolSerializationError,
    TypeHintParsingException,
)
from .function_schema import get_json_schema
from .gradio_demo import launch_gradio_demo
from .schema import get_tool_json_schema, validate_tool_arguments
from .source import get_imports
from .types import AUTHORIZED_TYPES
from .validation import validate_tool_class

__all__ = [
    "AUTHORIZED_TYPES",
    "BASE_TOOLS",
    "BaseTool",
    "TOOL_MAPPING",
    "DocstringParsingException",
    "FinalAnswerTool",
    "FunctionTool",
    "PythonInterpreterTool",
    "Tool",
    "ToolArgumentError",
    "ToolCollection",
    "ToolDefinitionError",
    "ToolSerializationError",
    "TypeHintParsingException",
    "UserInputTool",
    "VisitWebpageTool",
    "get_base_tools",
    "get_imports",
    "get_json_schema",
    "get_tool_json_schema",
    "launch_gradio_demo",
    "load_tool",
    "render_code_signature",
    "render_tool_calling_prompt",
    "tool",
    "validate_tool_arguments",
    "validate_tool_class",
]
