"""smolagents' `default_tools` module: `from nbagent.default_tools import FinalAnswerTool, BASE_PYTHON_TOOLS, ...`.

The tools are nbagent's (`nbagent.tools.default_tools`, `nbagent.tools.web_search`,
`nbagent.tools.service_tools`).
"""

from __future__ import annotations

from nbagent.compat.local_python_executor import BASE_PYTHON_TOOLS
from nbagent.tools.default_tools import (
    BASE_TOOLS,
    TOOL_MAPPING,
    FinalAnswerTool,
    PythonInterpreterTool,
    UserInputTool,
    VisitWebpageTool,
)
from nbagent.tools.service_tools import GoogleSearchTool, SpeechToTextTool, WikipediaSearchTool
from nbagent.tools.web_search import ApiWebSearchTool, DuckDuckGoSearchTool, WebSearchTool

__all__ = [
    "ApiWebSearchTool",
    "BASE_PYTHON_TOOLS",
    "BASE_TOOLS",
    "TOOL_MAPPING",
    "DuckDuckGoSearchTool",
    "FinalAnswerTool",
    "GoogleSearchTool",
    "PythonInterpreterTool",
    "SpeechToTextTool",
    "UserInputTool",
    "VisitWebpageTool",
    "WebSearchTool",
    "WikipediaSearchTool",
]
