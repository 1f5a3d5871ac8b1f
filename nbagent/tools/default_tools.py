"""The default toolbox, with smolagents' tool names."""

from __future__ import annotations

import re
from typing import Any

from .base import Tool

__all__ = [
    "FinalAnswerTool",
    "PythonInterpreterTool",
    "UserInputTool",
    "VisitWebpageTool",
    "TOOL_MAPPING",
    "BASE_TOOLS",
    "get_base_tools",
]


class FinalAnswerTool(Tool):
    name = "final_answer"
    description = "Provides a final answer to the given problem."
    inputs = {"answer": {"type": "any", "description": "The final answer to the problem"}}
    output_type = "any"

    def forward(self, answer: Any) -> Any:
        return answer


class UserInputTool(Tool):
    name = "user_input"
    description = "Asks for user's input on a specific question"
    inputs = {"question": {"type": "string", "description": "The question to ask the user"}}
    output_type = "string"

    def forward(self, question: str) -> str:
        return input(f"{question} => Type your answer here:")


class PythonInterpreterTool(Tool):
    """Runs code in nbagent's sandbox (`nbagent.sandbox.LocalPythonExecutor`), a fresh namespace per call."""

    name = "python_interpreter"
    description = "This is a tool that evaluates python code. It can be used to perform calculations."
    inputs = {"code": {"type": "string", "description": "The python code to run in interpreter"}}
    output_type = "string"

    def __init__(self, *args: Any, authorized_imports: list[str] | None = None, **executor_kwargs: Any) -> None:
        super().__init__()
        self.authorized_imports = sorted(set(authorized_imports or ()))
        self.executor_kwargs = executor_kwargs
        extra = ", ".join(self.authorized_imports) or "no modules beyond the safe standard ones"
        self.inputs = {
            "code": {
                "type": "string",
                "description": (
                    "The Python code to run. Variables do not persist between calls; print what you need. "
                    f"It may also import: {extra}."
                ),
            }
        }

    def forward(self, code: str) -> str:
        # Imported here so that tools import before (and without) the sandbox package.
        from nbagent.sandbox import LocalPythonExecutor, with_last_statement_value

        executor = LocalPythonExecutor(additional_authorized_imports=self.authorized_imports, **self.executor_kwargs)
        # As in smolagents, the output is the last statement's value, a trailing assignment's too.
        result = executor(with_last_statement_value(code))  # ExecutionError propagates: reported with the tool's name
        return f"Stdout:\n{result.logs}\nOutput: {result.output}"


class VisitWebpageTool(Tool):
    name = "visit_webpage"
    description = (
        "Visits a webpage at the given url and reads its content as a markdown string. Use this to browse webpages."
    )
    inputs = {"url": {"type": "string", "description": "The url of the webpage to visit."}}
    output_type = "string"

    def __init__(self, max_output_length: int = 40_000, timeout: float = 20.0) -> None:
        super().__init__()
        self.max_output_length = max_output_length
        self.timeout = timeout

    def forward(self, url: str) -> str:
        import requests

        try:
            response = requests.get(url, timeout=self.timeout, headers={"User-Agent": "nbagent visit_webpage"})
            response.raise_for_status()
        except requests.exceptions.Timeout:
            return f"Error: the request to {url} timed out after {self.timeout:g} s. Try again later or another URL."
        except requests.exceptions.HTTPError as err:
            status = err.response.status_code if err.response is not None else "?"
            reason = err.response.reason if err.response is not None else ""
            return f"Error: {url} answered HTTP {status} {reason}".rstrip() + ". Check the URL."
        except requests.exceptions.ConnectionError as err:
            return f"Error: could not connect to {url} ({type(err).__name__}). Check the URL or the network."
        except requests.exceptions.RequestException as err:
            return f"Error fetching {url}: {err}"
        return self._truncate(self._to_markdown(response))

    @staticmethod
    def _to_markdown(response: Any) -> str:
        content_type = response.headers.get("Content-Type", "")
        text = response.text
        if "html" in content_type or not content_type:
            from markdownify import markdownify

            text = markdownify(text, heading_style="ATX")  # drops <script> and <style> content
        lines = [line.rstrip() for line in text.strip().splitlines()]
        return re.sub(r"\n{3,}", "\n\n", "\n".join(lines))

    def _truncate(self, content: str) -> str:
        if len(content) <= self.max_output_length:
            return content
        return (
            content[: self.max_output_length]
            + f"\n..._This content has been truncated to stay below {self.max_output_length} characters_...\n"
        )


# Every default tool class by name: the agent picks its base tools from here (`add_base_tools=True`),
# the CLI resolves `--tools` names with it.
TOOL_MAPPING: dict[str, type[Tool]] = {
    cls.name: cls for cls in (PythonInterpreterTool, VisitWebpageTool, UserInputTool, FinalAnswerTool)
}
# What smolagents adds for add_base_tools=True and works offline (python_interpreter: ToolCallingAgent only).
BASE_TOOLS: tuple[str, ...] = ("python_interpreter", "visit_webpage")


def get_base_tools(code_agent: bool) -> dict[str, Tool]:
    """Fresh instances of BASE_TOOLS for an agent; a CodeAgent gets no python_interpreter (it runs code itself)."""
    return {name: TOOL_MAPPING[name]() for name in BASE_TOOLS if not (code_agent and name == "python_interpreter")}
