"""`ToolCollection` (several tools loaded at once) and `load_tool` (one tool from the Hub)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .base import Tool

__all__ = ["ToolCollection", "load_tool"]


def load_tool(repo_id: str, token: str | None = None, trust_remote_code: bool = False, **kwargs: Any) -> Tool:
    """smolagents' `load_tool`: a tool from a Hub Space's `tool.py` (needs `trust_remote_code=True`)."""
    return Tool.from_hub(repo_id, token=token, trust_remote_code=trust_remote_code, **kwargs)


class ToolCollection:
    """A set of tools loaded together; `tools` is the list to give an agent (`CodeAgent(tools=[*c.tools])`)."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = list(tools)

    def __repr__(self) -> str:
        return f"ToolCollection({[t.name for t in self.tools]})"

    @classmethod
    def from_hub(
        cls, collection_slug: str, token: str | None = None, trust_remote_code: bool = False
    ) -> ToolCollection:
        """Every Space of a Hub collection, each loaded as a tool (models and datasets in it are ignored).

        Loading runs the Spaces' code: pass `trust_remote_code=True` once you have read it.
        """
        from huggingface_hub import get_collection

        collection = get_collection(collection_slug, token=token)
        spaces = sorted({item.item_id for item in collection.items if item.item_type == "space"})
        return cls([Tool.from_hub(repo_id, token=token, trust_remote_code=trust_remote_code) for repo_id in spaces])

    @classmethod
    @contextmanager
    def from_mcp(
        cls, server_parameters: Any, trust_remote_code: bool = False, structured_output: bool | None = None
    ) -> Iterator[ToolCollection]:
        """The tools of MCP servers for the `with` block (smolagents' signature): `server_parameters` as for
        `MCPClient` (an `mcp.StdioServerParameters`, a dict with a streamable-HTTP `url`, or a list). A stdio
        server is a program nbagent runs on this machine, so `trust_remote_code=True` is required; its process
        ends with the block. Needs `pip install 'jupyter-nbagent[mcp]'`."""
        if not trust_remote_code:
            raise ValueError(
                "Loading tools from MCP runs the server's code (a stdio server is a program started here) and lets it "
                "answer your agent: pass trust_remote_code=True once you trust the server."
            )
        from .mcp_client import MCPClient

        with MCPClient(server_parameters, structured_output=structured_output) as tools:
            yield cls(tools)
