"""Errors raised while defining, saving or calling tools.

`ToolDefinitionError` and `ToolArgumentError` are both `ValueError` and `TypeError`: smolagents
raises one or the other for the same mistakes (a missing attribute is a `TypeError` there, an
unknown type a `ValueError`), and code written for it catches either.
"""

from __future__ import annotations

__all__ = [
    "ToolDefinitionError",
    "DocstringParsingException",
    "TypeHintParsingException",
    "ToolSerializationError",
    "ToolArgumentError",
]


class ToolDefinitionError(ValueError, TypeError):
    """A tool is defined wrongly. The message names the tool, the field and the fix.

    `ToolDefinitionError("message")` (one argument) is accepted too, as smolagents' exceptions are.
    """

    def __init__(self, tool: str, field: str | None = None, problem: str | None = None, fix: str | None = None):
        self.tool = tool
        self.field = field
        self.problem = problem
        self.fix = fix
        if field is None and problem is None and fix is None:
            super().__init__(tool)
        else:
            super().__init__(f"Tool {tool}: {field} {problem}. Fix: {fix}")


class DocstringParsingException(ToolDefinitionError):
    """A function's docstring lacks what a tool needs (a description, one line per argument)."""


class TypeHintParsingException(ToolDefinitionError):
    """A function's type hints cannot be turned into tool types (missing, or no JSON-schema equivalent)."""


class ToolSerializationError(ValueError):
    """A tool cannot be written as standalone code, or loaded back from code."""


class ToolArgumentError(ValueError, TypeError):
    """A tool was called with arguments that do not match its `inputs`."""
