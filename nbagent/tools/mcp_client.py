"""`MCPClient`: the tools of MCP servers as nbagent tools, on the official `mcp` SDK (2.x), as in smolagents.

smolagents wraps `mcpadapt`, which cannot import from mcp 2.x; this is our own adapter. A server is a stdio
command (`mcp.StdioServerParameters`: nbagent starts the process and stops it when the `with` block ends) or a
streamable-HTTP endpoint (`{"url": "http://127.0.0.1:8000/mcp"}`, optionally `"headers"`); a list connects several.
Each MCP tool becomes a `Tool` with the server's name (made a valid Python name), description and JSON-schema
arguments, run in the kernel like every tool (`mcp_session` holds the connections on a thread of their own).

`structured_output=True` makes a tool that declares an output schema return its structured content (a dict,
output type "object"); otherwise a tool returns its text (an image content is an `AgentImage`), as smolagents.
An MCP error result is raised as `MCPToolError` with the server's text; a server that died is an
`MCPConnectionError` quoting its stderr. Differences from smolagents: no legacy SSE transport; `structured_output`
left unset means False without a warning; `adapter_kwargs` takes `connect_timeout` (30 s) and
`client_session_timeout_seconds` (a per-call limit, none by default: the step's deadline and Stop end a call).
"""

from __future__ import annotations

import base64
import json
import keyword
import re
from types import TracebackType
from typing import Any

from .base import Tool, _ForeignToolWrapper
from .foreign import ForeignTool, json_schema_inputs
from .mcp_session import MCPConnectionError, MCPSession

__all__ = ["MCPClient", "MCPConnectionError", "MCPToolError"]

INSTALL = "pip install 'jupyter-nbagent[mcp]'"
_ADAPTER_KEYS = {"connect_timeout", "client_session_timeout_seconds"}


class MCPToolError(RuntimeError):
    """The MCP server answered a tool call with an error (`isError`); the message is the server's text."""


class MCPClient:
    """Connects to MCP servers and makes their tools nbagent tools (smolagents' `MCPClient`).

    Args:
        server_parameters: an `mcp.StdioServerParameters` (a command nbagent starts), a dict with a `"url"` of a
            streamable-HTTP server (and optionally `"transport": "streamable-http"`, `"headers"`), or a list of them.
        adapter_kwargs: `connect_timeout` (seconds to start and list the tools, default 30) and
            `client_session_timeout_seconds` (a limit per tool call; default none).
        structured_output: tools with an output schema return their structured content (a dict).

    Use it as a context manager, `with MCPClient(params) as tools: ...`, or call `disconnect()` in a `finally`:
    the servers nbagent started end with the block.
    """

    def __init__(
        self,
        server_parameters: Any,
        adapter_kwargs: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        _require_sdk()
        servers = [
            _checked_server(s)
            for s in (server_parameters if isinstance(server_parameters, list) else [server_parameters])
        ]
        if not servers:
            raise ValueError("MCPClient needs at least one server (an mcp.StdioServerParameters or a dict with a url)")
        options = dict(adapter_kwargs or {})
        unknown = sorted(set(options) - _ADAPTER_KEYS)
        if unknown:
            raise TypeError(
                f"MCPClient adapter_kwargs takes {', '.join(sorted(_ADAPTER_KEYS))}; not {', '.join(unknown)}"
            )
        self.structured_output = bool(structured_output)
        self._servers = servers
        self._timeouts = (
            float(options.get("connect_timeout", 30)),
            _seconds(options.get("client_session_timeout_seconds")),
        )
        self._session: MCPSession | None = None
        self._tools: list[Tool] | None = None
        self.connect()

    def connect(self) -> None:
        """Start the servers and read their tools (done by the constructor, as in smolagents); again after
        `disconnect()`, a new connection."""
        if self._session is not None and self._session.open_now:
            return
        session = MCPSession(self._servers, connect_timeout=self._timeouts[0], call_timeout=self._timeouts[1])
        session.open()
        try:
            tools = _unique(
                [_ForeignToolWrapper(mcp_parts(spec, session, i, self.structured_output)) for i, spec in session.tools]
            )
        except Exception:
            session.close()
            raise
        self._session, self._tools = session, tools

    def disconnect(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        exc_traceback: TracebackType | None = None,
    ) -> None:
        """End the connections; the servers nbagent started are gone when this returns."""
        if self._session is not None:
            self._session.close()

    def get_tools(self) -> list[Tool]:
        """The servers' tools, as listed when the connection opened."""
        if self._tools is None:
            raise ValueError("The MCP client is not connected: call connect() first")
        return self._tools

    def __enter__(self) -> list[Tool]:
        return self.get_tools()

    def __exit__(self, exc_type: Any, exc_value: Any, exc_traceback: Any) -> None:
        self.disconnect(exc_type, exc_value, exc_traceback)


def mcp_parts(spec: Any, session: MCPSession, index: int, structured_output: bool) -> ForeignTool:
    """An MCP tool (`mcp.types.Tool`) as the parts of a `Tool` whose call goes to server `index`."""
    schema = dict(spec.input_schema or {})
    required = set(schema.get("required") or ())
    structured = structured_output and bool(spec.output_schema)
    server_name = spec.name

    def call(**arguments: Any) -> Any:
        sent = {key: value for key, value in arguments.items() if value is not None or key in required}
        result = session.call(index, server_name, sent)
        return _result(server_name, result, structured_output)

    description = (spec.description or "").strip() or f"The MCP tool {server_name}."
    return ForeignTool(
        name=python_name(server_name),
        description=description,
        inputs=json_schema_inputs(schema),
        output_type="object" if structured else "string",
        call=call,
        attributes={"output_schema": spec.output_schema if structured else None, "mcp_name": server_name},
    )


def python_name(name: str) -> str:
    """An MCP tool's name as a name the agent's code can call (`get-weather` -> `get_weather`, `class` ->
    `class_`); the case is kept."""
    cleaned = re.sub(r"\W", "_", str(name).strip()) or "tool"
    cleaned = f"_{cleaned}" if cleaned[0].isdigit() else cleaned
    return f"{cleaned}_" if keyword.iskeyword(cleaned) else cleaned


def _result(name: str, result: Any, structured_output: bool) -> Any:
    """What the tool returns: the structured content (structured output), else the text, else an image."""
    texts = [block.text for block in result.content or [] if getattr(block, "type", "") == "text"]
    if result.is_error:
        raise MCPToolError(f"the MCP tool {name} failed: {' '.join(texts).strip() or 'no message'}")
    if structured_output:
        if result.structured_content is not None:
            return result.structured_content
        if len(texts) == 1:
            try:
                return json.loads(texts[0])
            except ValueError:
                return texts[0]
    images = [block for block in result.content or [] if getattr(block, "type", "") == "image"]
    if not texts and images:
        from nbagent.media.agent_types import AgentImage

        return AgentImage(base64.b64decode(images[0].data))
    return "\n".join(texts)


def _unique(tools: list[Tool]) -> list[Tool]:
    """Tools of several servers with the same name: an error that names them (the code calls tools by name)."""
    seen: dict[str, str] = {}
    for tool in tools:
        if tool.name in seen:
            raise ValueError(f"Two MCP tools are named {tool.name!r}: connect those servers with separate clients")
        seen[tool.name] = tool.name
    return tools


def _checked_server(server: Any) -> Any:
    if isinstance(server, dict):
        url = server.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"An MCP server given as a dict needs a 'url' (http:// or https://), got {server!r}")
        transport = server.get("transport", "streamable-http")
        if transport not in ("streamable-http", "streamable_http", "http"):
            raise ValueError(
                f"MCP transport {transport!r} is not supported: nbagent speaks streamable HTTP (the legacy SSE "
                "transport is deprecated by MCP); give the server's streamable-HTTP endpoint, often <host>/mcp"
            )
        return server
    if hasattr(server, "command") and hasattr(server, "args"):
        return server
    raise TypeError(
        "MCPClient takes an mcp.StdioServerParameters, a dict with a 'url' (streamable HTTP) or a list of them, "
        f"got {type(server).__name__}"
    )


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    return float(value.total_seconds() if hasattr(value, "total_seconds") else value)


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ModuleNotFoundError(f"MCPClient needs the MCP SDK: {INSTALL}") from None
