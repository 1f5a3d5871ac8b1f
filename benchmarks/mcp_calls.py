"""What an MCP tool call costs across the boundary: ms per call of the test server's `add` (tests/helpers/mcp_server.py,
stdio), called directly in this process, and from a CodeAgent's code in the isolated worker (the worker's stub ->
the host -> the MCP server and back), beside a plain @tool called the same way. No model: ScriptedModel.

    .venv/bin/python benchmarks/mcp_calls.py [--calls 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mcp import StdioServerParameters

from nbagent import CodeAgent, ScriptedModel, tool
from nbagent.tools.mcp_client import MCPClient

SERVER = Path(__file__).parents[1] / "tests" / "helpers" / "mcp_server.py"


@tool
def plus(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first
        b: the second
    """
    return a + b


def per_call_in_code(tools: list, name: str, calls: int) -> float:
    """ms per call of `name` from the code of one step in the isolated worker (the step's fixed cost taken off)."""
    timings = []
    for count in (0, calls):
        body = f"import time\nt = time.perf_counter()\nfor i in range({count}):\n    {name}(a=i, b=1)\nfinal_answer(time.perf_counter() - t)"
        agent = CodeAgent(
            tools=tools, model=ScriptedModel([f"```python\n{body}\n```"]), verbosity_level=-1, show_widget=False
        )
        timings.append(float(agent.run("time it")))
    return (timings[1] - timings[0]) / calls * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    calls = parser.parse_args().calls
    with MCPClient(StdioServerParameters(command=sys.executable, args=[str(SERVER)])) as mcp_tools:
        add = {t.name: t for t in mcp_tools}["add"]
        add(a=0, b=0)
        started = time.perf_counter()
        for i in range(calls):
            add(a=i, b=1)
        direct = (time.perf_counter() - started) / calls * 1000
        in_worker = per_call_in_code([add], "add", calls)
    plain = per_call_in_code([plus], "plus", calls)
    print("| call | ms per call |\n|---|---|")
    print(f"| MCP tool, called in the kernel | {direct:.2f} |")
    print(f"| MCP tool, from code in the isolated worker | {in_worker:.2f} |")
    print(f"| plain @tool, from code in the isolated worker | {plain:.2f} |")
    print(
        f"An MCP call from agent code costs {in_worker:.2f} ms: {in_worker - plain:.2f} ms the MCP round trip over the boundary's {plain:.2f} ms."
    )


if __name__ == "__main__":
    main()
