"""A step records what its code did to the namespace (ActionStep.namespace_changes): through the loop, into the
widget's state, and through a save and load of the memory."""

from __future__ import annotations

import pytest

from nbagent import AgentMemory, CodeAgent, ScriptedModel
from nbagent.views.state import memory_to_state

pd = pytest.importorskip("pandas")


def code(body: str) -> str:
    return f"Thought: go on.\n```python\n{body}\n```"


STEPS = [
    code("sales['total_revenue'] = sales.units * sales.price\nregion_data = sales[sales.units > 1]"),
    code("x = x + 1\nundefined_name"),  # fails: its changes are still recorded
    code("final_answer(round(sales.total_revenue.sum(), 1))"),
]


def run(namespace: dict, executor_type: str, **executor_kwargs) -> CodeAgent:
    agent = CodeAgent(
        model=ScriptedModel(list(STEPS)),
        namespace=namespace,
        executor_type=executor_type,
        executor_kwargs=executor_kwargs,
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
    )
    agent.run("Add a revenue column to `sales` (and count in `x`)")
    return agent


@pytest.fixture
def namespace() -> dict:
    return {"sales": pd.DataFrame({"units": [1, 2, 3], "price": [2.0, 3.0, 4.0]}), "x": 1}


@pytest.mark.parametrize("executor_type", ["isolated", "local"])
def test_each_step_records_its_changes(namespace: dict, executor_type: str, tmp_path) -> None:
    agent = run(namespace, executor_type)
    first, failed, last = agent.memory.action_steps()[:3]
    assert first.namespace_changes == [
        {
            "name": "sales",
            "change": "modified",
            "type": "DataFrame 3×3",
            "detail": "+1 column total_revenue",
            "yours": True,  # the notebook's frame: a warning in the views
        },
        {"name": "region_data", "change": "created", "type": "DataFrame 2×3", "detail": ""},
    ]
    assert failed.error is not None
    assert failed.namespace_changes == [{"name": "x", "change": "rebound", "type": "int", "detail": "", "yours": True}]
    assert last.namespace_changes == []

    run_state, _ = memory_to_state(agent.memory)
    steps = [s for s in run_state["steps"] if s["kind"] == "action"]
    assert steps[0]["changes"][0]["detail"] == "+1 column total_revenue"

    path = agent.memory.save(tmp_path / "run.json")
    loaded = AgentMemory.load(path)
    assert [s.namespace_changes for s in loaded.action_steps()] == [
        s.namespace_changes for s in agent.memory.action_steps()
    ]


@pytest.mark.parametrize("executor_type", ["isolated", "local"])
def test_copy_inputs_keeps_the_users_frame(namespace: dict, executor_type: str) -> None:
    original = namespace["sales"]
    agent = run(namespace, executor_type, copy_inputs=True)
    assert agent.memory.action_steps()[-1].action_output == 20.0  # the agent saw its own new column
    assert namespace["sales"] is original and "total_revenue" not in original.columns
    made = agent.scratch["region_data"]  # its result came back (to the agent's scope: a name the task did not ask for)
    assert list(made.columns) == ["units", "price", "total_revenue"]
    first = agent.memory.action_steps()[0]
    assert first.namespace_changes[0]["kept"] is True


def test_a_step_that_ran_no_code_records_none() -> None:
    agent = CodeAgent(
        model=ScriptedModel(["no code here", "Sorry, no answer."]), max_steps=1, verbosity_level=-1, show_widget=False
    )
    agent.run("Say hi")
    assert agent.memory.action_steps()[0].namespace_changes is None
