"""`%%agent --copy`: the agent's code works on copies of the notebook's variables (through a real IPython shell)."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from nbagent import ScriptedModel


def code(body: str) -> str:
    return f"Thought: go.\n```python\n{body}\n```"


@pytest.mark.parametrize("executor", ["isolated", "local"])
def test_copy_keeps_the_notebooks_list_and_returns_new_names(ip, executor: str) -> None:
    ip.run_cell("prices = [1, 2, 3]")
    original = ip.user_ns["prices"]
    ip.user_ns["m"] = ScriptedModel(
        [code("prices.append(4)\ndoubled = [2 * p for p in prices]"), code("final_answer(len(prices))")]
    )
    value = ip.run_cell_magic("agent", f"-m m --quiet --copy --executor {executor} -o answer", "Double the `prices`")
    assert value == 4  # the agent saw its own change across steps
    assert ip.user_ns["prices"] is original and original == [1, 2, 3]
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    assert agent.scratch["doubled"] == [2, 4, 6, 8]  # what it created: the agent's scope (`--keep` brings it in)
    first = agent.memory.action_steps()[0].namespace_changes
    assert {c["name"]: c.get("kept", False) for c in first} == {"prices": True, "doubled": False}


def test_copy_needs_a_code_agent(ip) -> None:
    from nbagent import ToolCallingAgent

    ip.user_ns["m"] = ScriptedModel(["x"])
    ip.user_ns["my_tool_agent"] = ToolCallingAgent(tools=[], model=ip.user_ns["m"], show_widget=False)
    try:
        with pytest.raises(UsageError, match="--copy needs a CodeAgent"):
            ip.run_cell_magic("agent", "--agent my_tool_agent --copy --quiet", "Hi")
    finally:
        ip.user_ns.pop("my_tool_agent", None)
