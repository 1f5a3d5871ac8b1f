"""The agent's tool set: tools by name with `final_answer` always present, and how a managed agent is called."""

from __future__ import annotations

from typing import Any

from nbagent.tools import FinalAnswerTool, Tool, get_base_tools

__all__ = ["setup_tools", "managed_agent_inputs"]


def setup_tools(
    tools: list[Any], add_base_tools: bool, managed_agents: dict[str, Any], code_agent: bool
) -> dict[str, Any]:
    """Tools by name, with `final_answer` always present; clear errors for clashes."""
    by_name: dict[str, Any] = {}
    for tool in tools:
        if not isinstance(tool, Tool):
            raise TypeError(
                f"Every tool must be a nbagent Tool (use the @tool decorator or subclass Tool), got {type(tool).__name__}: {tool!r}"
            )
        if tool.name in by_name:
            raise ValueError(f"Two tools are named {tool.name!r}; tool names must be unique")
        by_name[tool.name] = tool
    if add_base_tools:
        for name, base_tool in get_base_tools(code_agent).items():
            by_name.setdefault(name, base_tool)
    by_name.setdefault("final_answer", FinalAnswerTool())
    for name, agent in managed_agents.items():
        if not name:
            raise ValueError("A managed agent needs a name (and a description) so the manager can call it")
        if name in by_name:
            raise ValueError(f"The managed agent {name!r} has the same name as a tool; rename one of them")
        if not getattr(agent, "description", None):
            raise ValueError(f"The managed agent {name!r} needs a description so the manager knows when to call it")
    return by_name


def managed_agent_inputs() -> dict[str, Any]:
    return {
        "task": {"type": "string", "description": "Long detailed description of the task."},
        "additional_args": {
            "type": "object",
            "description": "Dictionary of extra inputs to pass to the managed agent, e.g. images, dataframes, or any other contextual data it may need.",
            "nullable": True,
        },
    }
