"""`%%agent --step`: a prepared run the controller drives, with the kernel free in between."""

from __future__ import annotations

import pytest
from control_helpers import code, wait_until

from nbagent import ActionStep, ScriptedModel


@pytest.fixture
def ip(ip):
    """The shared shell (tests/conftest.py), without names other tests left, and no stepped run left active."""
    for name in ("m", "total", "answer"):  # other tests share this shell
        ip.user_ns.pop(name, None)
    yield ip
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    if agent is not None and agent.driver.active:
        agent.stop()
        agent.driver.join(30)
    for name in ("m", "total", "answer"):
        ip.user_ns.pop(name, None)


def test_step_option_prepares_a_paused_run_and_returns_at_once(ip):
    ip.user_ns["m"] = ScriptedModel([code("total = 40"), code("final_answer(total + 2)")])
    value = ip.run_cell_magic("agent", "-m m --quiet --step -o answer", "Count.")
    assert value is None
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    wait_until(lambda: agent.gates.status == "paused")
    assert "total" not in ip.user_ns and agent.driver.active
    agent.driver.step()
    assert ip.user_ns["total"] == 40  # the step ran in the notebook namespace
    assert [s.step_number for s in agent.memory.steps if isinstance(s, ActionStep)] == [1]
    assert "answer" not in ip.user_ns
    assert agent.driver.run() == 42
    wait_until(lambda: "answer" in ip.user_ns)
    assert ip.user_ns["answer"] == 42


def test_a_prepared_run_can_be_stopped_from_code(ip):
    ip.user_ns["m"] = ScriptedModel([code("total = 1")])
    ip.run_cell_magic("agent", "-m m --quiet --step", "Do nothing yet.")
    agent = ip.magics_manager.registry["AgentMagics"].last_agent
    wait_until(lambda: agent.gates.status == "paused")
    agent.stop()
    assert agent.driver.join(30)
    assert agent.gates.status == "stopped" and agent.last_result.state == "stopped"
    assert agent.memory.steps[0].task == "Do nothing yet."
