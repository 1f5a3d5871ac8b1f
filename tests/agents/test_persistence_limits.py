"""nbagent's own options survive to_dict()/from_dict(): the run's time limit and a permission policy word."""

from __future__ import annotations

from nbagent import CodeAgent, ScriptedModel


def test_max_time_and_on_permission_are_saved_and_loaded() -> None:
    agent = CodeAgent(tools=[], model=ScriptedModel([]), max_time="90s", on_permission="deny")
    loaded = CodeAgent.from_dict(agent.to_dict())
    assert loaded.max_time == 90 and loaded.on_permission == "deny"


def test_no_time_limit_stays_none_and_a_policy_function_falls_back_to_asking() -> None:
    agent = CodeAgent(tools=[], model=ScriptedModel([]), max_time=0, on_permission=lambda ask: "once")
    data = agent.to_dict()
    assert data["max_time"] == 0 and data["on_permission"] is None
    loaded = CodeAgent.from_dict(data)
    assert loaded.max_time is None and loaded.on_permission == "ask"
