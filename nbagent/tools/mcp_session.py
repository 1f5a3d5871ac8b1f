"""Connections to MCP servers held open on a thread of their own, for synchronous tool calls (`MCPClient`).

The `mcp` SDK is async (anyio); tools are called synchronously by the agent's code and the loop. So the
connections live on one helper thread running an event loop, and a call is a coroutine handed to that loop
and awaited in slices (`calls.wait_for`: the step's deadline and Stop end the wait and cancel the request,
which the SDK tells the server). Opened and closed as one: `open()` starts every server and lists its tools,
`close()` ends the connections — the SDK closes a stdio server's stdin, then terminates its process group —
and waits for the thread, so no server process outlives it. What a stdio server writes on stderr is kept in a
file of our own (a kernel's stderr may have no file descriptor), and its last lines go into the error when the
server dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from .calls import wait_for

__all__ = ["MCPConnectionError", "MCPSession", "describe_server"]

_CLOSE_WAIT = 15.0  # seconds close() waits for the thread: the SDK's own escalation ends within ~6 s
_STDERR_TAIL = 1_500  # characters of a dead server's stderr quoted in the error


class MCPConnectionError(RuntimeError):
    """An MCP server could not be reached, or died: the message names it and quotes its last stderr lines."""


def describe_server(server: Any) -> str:
    """How a person recognises the server: its command line, or its URL."""
    if isinstance(server, dict):
        return str(server.get("url"))
    command = [str(getattr(server, "command", server)), *map(str, getattr(server, "args", []) or [])]
    return " ".join(command)


class MCPSession:
    """Open connections to `servers` (`StdioServerParameters`, or dicts with a `url`) on a helper thread."""

    def __init__(self, servers: list[Any], connect_timeout: float = 30.0, call_timeout: float | None = None):
        self.servers = servers
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.tools: list[tuple[int, Any]] = []  # (server index, mcp.types.Tool)
        self._clients: list[Any] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._stderr = [tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") for _ in servers]

    # -- lifetime ---------------------------------------------------------------------------------------------------

    def open(self) -> None:
        """Start and connect every server and list its tools; `MCPConnectionError` if one cannot be reached."""
        self._thread = threading.Thread(target=self._run, name="nbagent-mcp", daemon=True)
        self._thread.start()
        try:
            while not self._ready.wait(0.05):
                pass
        except BaseException:  # Ctrl-C while a server starts: nothing is left behind
            self.close()
            raise
        if self._failure is not None:
            message, self._failure = self._connect_message(self._failure), None
            self.close()
            raise MCPConnectionError(message) from None

    def close(self) -> None:
        """End the connections and wait until the servers nbagent started are gone (idempotent)."""
        loop, closing, thread = self._loop, self._closing, self._thread
        if loop is not None and closing is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(closing.set)
            except RuntimeError:  # the loop ended meanwhile
                pass
        if thread is not None and thread is not threading.current_thread():
            thread.join(_CLOSE_WAIT)
        self._thread = None
        for log in self._stderr:
            log.close()

    @property
    def open_now(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._failure is None

    def _run(self) -> None:
        try:
            # the SDK checks a tool's result against its output schema with jsonschema, whose first import took
            # 1.2 s here (rfc3987_syntax builds a grammar): paid while connecting, not in a step's first tool call
            with contextlib.suppress(ImportError):
                import jsonschema  # noqa: F401
            asyncio.run(self._main())
        except BaseException as failure:  # told to the caller of open()
            self._failure = self._failure or failure
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._closing = asyncio.Event()
        async with AsyncExitStack() as stack:
            try:
                await asyncio.wait_for(self._connect_all(stack), self.connect_timeout)
            except BaseException as failure:
                self._failure = failure
                self._ready.set()
                return
            self._ready.set()
            await self._closing.wait()

    async def _connect_all(self, stack: AsyncExitStack) -> None:
        from mcp import Client

        for index, server in enumerate(self.servers):
            self._connecting = index
            client = Client(self._transport(index, server))
            await stack.enter_async_context(client)
            self._clients.append(client)
            cursor = None
            while True:
                listed = await client.list_tools(cursor=cursor)
                self.tools += [(index, tool) for tool in listed.tools]
                cursor = listed.next_cursor
                if not cursor:
                    break

    def _transport(self, index: int, server: Any) -> Any:
        if isinstance(server, dict):
            return _http_transport(server)
        from mcp.client.stdio import stdio_client

        return stdio_client(server, errlog=self._stderr[index])

    # -- calls ------------------------------------------------------------------------------------------------------

    def call(self, index: int, name: str, arguments: dict[str, Any]) -> Any:
        """`tools/call` on server `index`: the `CallToolResult`; `MCPConnectionError` when the server is gone,
        `ToolCallAbandoned` when the step's deadline passes or the run is stopped first."""
        loop = self._loop
        if loop is None or loop.is_closed() or not self.open_now:
            raise MCPConnectionError(
                f"the MCP server {describe_server(self.servers[index])} is not connected{self._closed_hint()}"
            )
        client = self._clients[index]
        coroutine = client.call_tool(name, arguments, read_timeout_seconds=self.call_timeout)
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return wait_for(future, f"the MCP tool {name}")
        except Exception as failure:
            if type(failure).__name__ == "MCPError" and "closed" in str(failure).lower():
                raise MCPConnectionError(self._died_message(index, name)) from None
            raise

    def _closed_hint(self) -> str:
        return "" if self._thread is None else " (its connection ended)"

    # -- messages ---------------------------------------------------------------------------------------------------

    def _stderr_tail(self, index: int) -> str:
        log = self._stderr[index]
        try:
            log.flush()
            log.seek(0)
            text = log.read()
        except (ValueError, OSError):
            return ""
        tail = text.strip()[-_STDERR_TAIL:]
        return f"\nIts last output on stderr:\n{tail}" if tail else ""

    def _died_message(self, index: int, name: str) -> str:
        return (
            f"The MCP server {describe_server(self.servers[index])} closed the connection during the call to {name}: "
            f"it crashed or exited. Its tools cannot be called any more in this `with` block.{self._stderr_tail(index)}"
        )

    def _connect_message(self, failure: BaseException) -> str:
        index = getattr(self, "_connecting", 0)
        server = describe_server(self.servers[index]) if self.servers else "?"
        if isinstance(failure, (asyncio.TimeoutError, TimeoutError)):
            why = f"it did not answer within {self.connect_timeout:g} s"
        else:
            why = _first_line(failure)
        return f"Could not connect to the MCP server {server}: {why}{self._stderr_tail(index)}"


def _first_line(failure: BaseException) -> str:
    """`Type: first line` of an error, looking inside exception groups (anyio's task groups raise them)."""
    inner = getattr(failure, "exceptions", None)
    while inner:
        failure = inner[0]
        inner = getattr(failure, "exceptions", None)
    lines = str(failure).strip().splitlines()
    return f"{type(failure).__name__}: {lines[0]}" if lines else type(failure).__name__


def _http_transport(server: dict[str, Any]) -> Any:
    """A streamable-HTTP transport for `{"url": ..., "headers"?: {...}}` (smolagents' dict form)."""
    from mcp.client.streamable_http import streamable_http_client

    headers = server.get("headers")
    if not headers:
        return streamable_http_client(server["url"])
    return _with_headers(server["url"], dict(headers))


@asynccontextmanager
async def _with_headers(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """The transport over an HTTP client that sends `headers` (e.g. a token), closed with it."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
