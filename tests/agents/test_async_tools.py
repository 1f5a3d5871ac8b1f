"""Async tools (`async def` under `@tool`, a `Tool` subclass with `async def forward`): awaited in every kind of run."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from control_helpers import Kernel, code

from nbagent import CodeAgent, ScriptedModel, Tool, ToolCallingAgent, tool


@tool
async def slow_double(x: int) -> int:
    """Double a number, after an asynchronous pause.

    Args:
        x: the number.
    """
    await asyncio.sleep(0.01)
    seen_loops.append(asyncio.get_running_loop())
    return 2 * x


class AsyncGreeter(Tool):
    name = "greet"
    description = "Greets someone, asynchronously."
    inputs = {"who": {"type": "string", "description": "whom to greet"}}
    output_type = "string"

    async def forward(self, who: str) -> str:
        await asyncio.sleep(0.01)
        return f"hello {who}"


seen_loops: list[Any] = []


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"content": f"calling {name}", "tool_calls": [{"function": {"name": name, "arguments": arguments}}]}


def tool_agent() -> ToolCallingAgent:
    model = ScriptedModel([call("slow_double", x=21), call("final_answer", answer="done")])
    return ToolCallingAgent(tools=[slow_double], model=model, verbosity_level=-1, show_widget=False)


def test_an_async_tool_is_awaited_when_called_directly() -> None:
    assert slow_double(x=4) == 8
    assert AsyncGreeter()(who="Ada") == "hello Ada"


def test_a_sync_run_awaits_async_tools_from_code_and_tool_calls() -> None:
    agent = tool_agent()
    assert agent.run("double 21") == "done"
    assert agent.memory.action_steps()[0].observations.endswith("42")
    code_agent = CodeAgent(
        tools=[slow_double, AsyncGreeter()],
        model=ScriptedModel([code("final_answer(f\"{greet(who='Bo')} {slow_double(x=5)}\")")]),
        verbosity_level=-1,
        show_widget=False,
    )
    assert code_agent.run("greet and double") == "hello Bo 10"


def test_arun_awaits_async_tools_on_the_callers_event_loop() -> None:
    async def main() -> tuple[Any, Any]:
        seen_loops.clear()
        answer = await tool_agent().arun("double 21")
        return answer, asyncio.get_running_loop()

    answer, caller_loop = asyncio.run(main())
    assert answer == "done" and seen_loops == [caller_loop]


def test_a_sync_run_inside_a_running_event_loop_needs_no_nested_loop() -> None:
    # what a notebook cell is: the kernel's event loop runs in this thread while the cell's code runs
    async def cell() -> Any:
        seen_loops.clear()
        return tool_agent().run("double 21"), asyncio.get_running_loop()

    answer, cell_loop = asyncio.run(cell())
    assert answer == "done" and len(seen_loops) == 1 and seen_loops[0] is not cell_loop
    assert not [t for t in threading.enumerate() if t.name.startswith("nbagent-async-tool")]  # helper gone


@pytest.mark.slow
def test_async_tools_in_a_real_kernel_with_await_and_without() -> None:
    kernel = Kernel(cwd=str(Path(__file__).resolve().parents[2]))
    try:
        kernel.run(
            "import asyncio\n"
            "from nbagent import CodeAgent, ScriptedModel, tool\n"
            "@tool\n"
            "async def fetch(n: int) -> int:\n"
            '    """Fetch a number.\n\n    Args:\n        n: the number.\n    """\n'
            "    await asyncio.sleep(0.01)\n"
            "    return n + 1\n"
            "fence = '`' * 3\n"
            "def agent():\n"
            "    step = f'{fence}python\\nfinal_answer(fetch(n=41))\\n{fence}'\n"
            "    return CodeAgent(tools=[fetch], model=ScriptedModel([step]), show_widget=False, verbosity_level=-1)\n"
        )
        out = kernel.run("print(await agent().arun('fetch'), agent().run('fetch'))\n")
        assert out.split() == ["42", "42"]
    finally:
        kernel.close()
