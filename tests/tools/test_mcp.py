"""`ToolCollection.from_mcp` and `MCPClient` on the official mcp SDK (2.x), against real MCP servers written with the
SDK (tests/helpers/mcp_server.py): on stdio (nbagent starts and stops the process) and on streamable HTTP on
127.0.0.1 (started and stopped by this module). A server that dies at start, one that crashes mid-call and a call
that never answers; agents calling MCP tools from code in the isolated worker, each call shown in the step, a hung
call ended by the step's deadline and by Stop, and a tool with side effects behind the approval gate."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from nbagent import AgentImage, CodeAgent, ScriptedModel, ToolCollection
from nbagent.loop.tool_uses import ToolNotApproved, ToolUses
from nbagent.views.console import tool_call_line
from nbagent.views.html import run_to_html
from nbagent.views.state import memory_to_state

mcp = pytest.importorskip("mcp")
from nbagent.tools.mcp_client import MCPClient, MCPConnectionError, MCPToolError  # noqa: E402

SERVER = str(Path(__file__).parents[1] / "helpers" / "mcp_server.py")
STDIO = mcp.StdioServerParameters(command=sys.executable, args=[SERVER])


def _code(body: str) -> str:
    return f"Thought: I call the tool.\n```python\n{body}\n```"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture(scope="module")
def client() -> Iterator[MCPClient]:
    """One stdio connection shared by the tests that only call tools (each server start costs ~1 s)."""
    shared = MCPClient(STDIO)
    try:
        yield shared
    finally:
        shared.disconnect()


def _tools(client: MCPClient) -> dict:
    return {tool.name: tool for tool in client.get_tools()}


# -- what a server's tools become -----------------------------------------------------------------------------------


def test_tools_keep_the_servers_names_descriptions_and_argument_schemas(client: MCPClient) -> None:
    tools = _tools(client)
    assert {"add", "weather", "shout_text", "fail", "swatch", "pid", "crash", "hang"} <= set(tools)
    add, shout = tools["add"], tools["shout_text"]  # "shout-text" on the server: a name the code can call
    assert add.description.startswith("Add two integers")
    assert add.inputs["a"]["type"] == "integer" and not add.inputs["a"].get("nullable")
    assert shout.inputs["times"] == {"type": "integer", "description": "Times", "nullable": True}
    assert add(a=2, b=3) == "5" and add(2, b=40) == "42"
    assert shout("hi") == "HI" and shout(text="hi", times=2) == "HI HI"  # the optional argument left out, then given


def test_an_error_result_raises_with_the_servers_text(client: MCPClient) -> None:
    with pytest.raises(MCPToolError, match="the MCP tool fail failed"):
        _tools(client)["fail"](reason="no")


def test_an_image_result_is_an_agent_image(client: MCPClient) -> None:
    picture = _tools(client)["swatch"](red=200, green=10, blue=30)
    assert isinstance(picture, AgentImage)
    assert picture.to_raw().size == (4, 3) and picture.to_raw().convert("RGB").getpixel((0, 0)) == (200, 10, 30)


def test_structured_output_returns_the_structured_content() -> None:
    with MCPClient(STDIO, structured_output=True) as tools:
        weather = {tool.name: tool for tool in tools}["weather"]
        assert weather.output_type == "object" and weather.output_schema["properties"]["celsius"]["type"] == "number"
        assert weather(city="Oslo") == {"city": "Oslo", "celsius": 21.5}


# -- the server's process: started and stopped by nbagent -------------------------------------------------------------


def test_from_mcp_needs_trust_and_the_server_is_gone_after_the_block() -> None:
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        with ToolCollection.from_mcp(STDIO):
            pass
    with ToolCollection.from_mcp(STDIO, trust_remote_code=True) as collection:
        pid = int({t.name: t for t in collection.tools}["pid"]())
        assert not _gone(pid)
    assert _gone(pid)  # nothing outlives the with block
    with pytest.raises(RuntimeError, match="inside"), MCPClient(STDIO) as tools:
        pid = int({t.name: t for t in tools}["pid"]())
        raise RuntimeError("inside")
    assert _gone(pid)  # nor a block that raised


def test_a_server_that_cannot_start_is_a_clear_error() -> None:
    broken = mcp.StdioServerParameters(command=sys.executable, args=[SERVER, "crash-at-start"])
    with pytest.raises(MCPConnectionError, match="Could not connect to the MCP server") as failure:
        MCPClient(broken, adapter_kwargs={"connect_timeout": 20})
    assert "this server cannot start: no configuration" in str(failure.value)  # its stderr, quoted
    missing = mcp.StdioServerParameters(command="/nonexistent/mcp-server")
    with pytest.raises(MCPConnectionError, match="/nonexistent/mcp-server"):
        MCPClient(missing)


def test_a_server_that_crashes_mid_call_is_a_clear_error() -> None:
    with MCPClient(STDIO) as tools:
        by_name = {t.name: t for t in tools}
        pid = int(by_name["pid"]())
        with pytest.raises(MCPConnectionError, match="closed the connection during the call to crash") as failure:
            by_name["crash"](code=3)
        assert "crash: exiting with code 3" in str(failure.value)
        with pytest.raises(MCPConnectionError):
            by_name["add"](a=1, b=2)
    assert _gone(pid)


def test_bad_server_parameters_say_what_is_accepted() -> None:
    with pytest.raises(TypeError, match="StdioServerParameters, a dict with a 'url'"):
        MCPClient("python server.py")
    with pytest.raises(ValueError, match="streamable HTTP"):
        MCPClient({"url": "http://127.0.0.1:1/sse", "transport": "sse"})
    with pytest.raises(ValueError, match="needs a 'url'"):
        MCPClient({"transport": "streamable-http"})
    with pytest.raises(TypeError, match="connect_timeout"):
        MCPClient(STDIO, adapter_kwargs={"retries": 3})


def test_streamable_http_server(http_url: str) -> None:
    with MCPClient({"url": http_url, "transport": "streamable-http"}) as tools:
        by_name = {t.name: t for t in tools}
        assert by_name["add"](a=20, b=22) == "42"
    with pytest.raises(ValueError, match="Two MCP tools are named 'add'"):  # a list connects several servers
        with ToolCollection.from_mcp([{"url": http_url}, STDIO], trust_remote_code=True):
            pass


def test_an_unreachable_http_server_is_a_clear_error() -> None:
    with pytest.raises(MCPConnectionError, match=r"Could not connect to the MCP server http://127\.0\.0\.1"):
        MCPClient({"url": f"http://127.0.0.1:{_free_port()}/mcp"}, adapter_kwargs={"connect_timeout": 10})


# -- agents: the tools run here, the code calls them from the worker ------------------------------------------------


def test_code_in_the_isolated_worker_calls_an_mcp_tool_and_the_step_shows_the_call(client: MCPClient) -> None:
    agent = CodeAgent(
        tools=client.get_tools(),
        model=ScriptedModel([_code("import os\ntotal = add(a=2, b=3)\nfinal_answer((total, os.getpid()))")]),
        additional_authorized_imports=["os"],
        verbosity_level=-1,
        show_widget=False,
    )
    assert agent.executor_type == "isolated"
    total, worker_pid = agent.run("Add 2 and 3.")
    assert total == "5" and worker_pid != os.getpid()  # the code ran in the worker, the tool here
    [call] = agent.memory.action_steps()[0].code_tool_calls
    assert call["name"] == "add" and call["arguments"] == {"a": "2", "b": "3"} and call["result"] == "5"
    assert call["seconds"] > 0
    run, _ = memory_to_state(agent.memory)  # what the widget shows
    [shown] = [step for step in run["steps"] if step["kind"] == "action"][0]["tool_calls"]
    assert shown["name"] == "add" and shown["result"] == "5" and shown["seconds"] == call["seconds"]
    page = run_to_html(run, [])  # the run saved with the notebook says the same
    assert '<span class="nba-tool-name">add</span>' in page and "→ 5" in page and " ms</span>" in page
    assert tool_call_line(call).startswith("Tool call: add(a=2, b=3) → 5 (")  # and the console


def test_a_hung_mcp_call_ends_at_the_steps_deadline(client: MCPClient) -> None:
    agent = CodeAgent(
        tools=client.get_tools(),
        model=ScriptedModel([_code("print(hang())"), _code("final_answer(add(a=1, b=1))")]),
        executor_kwargs={"timeout_seconds": 2},
        verbosity_level=-1,
        show_widget=False,
    )
    started = time.monotonic()
    assert agent.run("Wait for it.") == "2"  # the connection still serves the next step
    assert time.monotonic() - started < 15
    first = agent.memory.action_steps()[0]
    assert first.error is not None
    [hung] = first.code_tool_calls
    # the deadline is the step's: a worker slow to start under load leaves the call less than the 2 s
    assert hung["name"] == "hang" and "time limit" in hung["error"] and hung["seconds"] < 6


def test_a_hung_mcp_call_ends_on_stop(client: MCPClient) -> None:
    agent = CodeAgent(
        tools=client.get_tools(),
        model=ScriptedModel([_code("print(hang())")]),
        executor_kwargs={"timeout_seconds": 600},
        verbosity_level=-1,
        show_widget=False,
    )
    stopped_at: list[float] = []

    def stop_while_it_hangs() -> None:  # Stop once the call waits for the server, however slow the worker's start
        deadline = time.monotonic() + 60
        while agent.tool_uses.running != "hang" and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        stopped_at.append(time.monotonic())
        agent.stop()

    stopper = threading.Thread(target=stop_while_it_hangs, daemon=True)
    stopper.start()
    result = agent.run("Wait for it.", return_full_result=True)
    assert stopped_at and time.monotonic() - stopped_at[0] < 10
    assert result.state == "stopped"
    [hung] = agent.memory.action_steps()[0].code_tool_calls
    assert "the run was stopped" in hung["error"]


def test_an_mcp_tool_with_side_effects_waits_for_a_persons_approval(client: MCPClient) -> None:
    agent = CodeAgent(
        tools=client.get_tools(),
        approve_tools=["write_note"],
        model=ScriptedModel([_code("n = add(a=1, b=1)"), _code("final_answer(write_note(text='hello'))")]),
        verbosity_level=-1,
        show_widget=False,
    )
    seen: list[str] = []

    def person(snapshot: dict) -> None:
        if snapshot.get("status") == "awaiting_approval":
            seen.append(agent.gates.pending_code or "")
            threading.Timer(0.05, agent.gates.approve).start()

    agent.gates.add_listener(person)
    assert int(agent.run("Write a note.")) >= 1
    assert len(seen) == 1 and "write_note" in seen[0]  # the step that calls add did not ask; this one did


def test_approve_tools_refuses_a_call_no_person_saw() -> None:
    uses = ToolUses(["write_note"])
    wrapped = uses.wrap({"write_note": lambda text: "written", "final_answer": print})
    assert wrapped["final_answer"] is print
    uses.begin(None, lambda: False, approved=False)
    with pytest.raises(ToolNotApproved, match="runs only in code a person approved"):
        wrapped["write_note"]("x")
    assert "ToolNotApproved" in uses.calls[0]["error"]
    uses.begin(None, lambda: False, approved=True)
    assert wrapped["write_note"]("x") == "written"
    assert uses.needs_approval("w = write_note\nw('x')") and not uses.needs_approval("rewrite_notes()")
    with pytest.raises(ValueError, match="no tool of"):
        CodeAgent(tools=[], approve_tools=["write_note"], model=ScriptedModel([]), show_widget=False)
