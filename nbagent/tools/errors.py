"""Errors raised while defining, saving or calling tools."""

from __future__ import annotations

__all__ = ["ToolDefinitionError", "ToolSerializationError", "ToolArgumentError"]


class ToolDefinitionError(ValueError):
    """A tool is defined wrongly. The message names the tool, the field and the fix."""

    def __init__(self, tool: str, field: str, problem: str, fix: str) -> None:
        self.tool = tool
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"Tool {tool}: {field} {problem}. Fix: {fix}")


class ToolSerializationError(ValueError):
    """A tool cannot be written as standalone code, or loaded back from code."""


class ToolArgumentError(ValueError):
    """A tool was called with arguments that do not match its `inputs`."""
