"""`ToolCallingAgent`: the public agent whose actions are tool calls."""

from __future__ import annotations

from nbagent.loop import ToolCallingLoop

from .base import MultiStepAgent

__all__ = ["ToolCallingAgent"]


class ToolCallingAgent(ToolCallingLoop, MultiStepAgent):
    """An agent whose actions are tool calls (native tool calling, or JSON in the text).

    Args (beyond `MultiStepAgent`'s):
        max_tool_threads: how many tool calls of one step may run at once (default: one per call, up to 4).
    """
