"""A notebook variable the task did not give, bound by a small model's code: the code gets a name of its own
(nbagent/loop/aids/own_names.py); the notebook's variable is never read or changed."""

from __future__ import annotations

import pandas as pd

from nbagent import CodeAgent, ScriptedModel
from nbagent.errors import AgentExecutionError
from nbagent.loop.aids.own_names import rename_kept_names

TASK = "How many different customers placed an order in `sales`?"


def frames() -> dict[str, pd.DataFrame]:
    return {
        "sales": pd.DataFrame({"customer_id": [1, 2, 2, 3], "units": [1, 2, 3, 4]}),
        "customers": pd.DataFrame({"customer_id": [1, 2, 3], "name": ["Ada", "Bo", "Cy"]}),
    }


def test_a_bound_kept_name_and_its_later_uses_get_a_free_name_for_the_task():
    renamed: dict[str, str] = {}
    code = "customers = sales['customer_id'].unique()\nn = len(customers)\nfor customers_ in []: pass"
    fix = rename_kept_names(code, {"customers"}, renamed, taken={"sales", "customers_"})
    assert renamed == {"customers": "customers__"}  # customers_ is taken (the code binds it)
    assert fix.code.startswith("customers__ = sales['customer_id'].unique()\nn = len(customers__)")
    (note,) = fix.notes
    assert note.startswith("nbagent ran your code with `customers` as `customers__`: `customers` is one of the")
    later = rename_kept_names("final_answer(len(customers))", {"customers"}, renamed, taken=())
    assert later.code == "final_answer(len(customers__))"  # the code's own value, read in a later step


def test_a_kept_name_only_read_is_left_as_written():
    renamed: dict[str, str] = {}
    code = "n = len(customers)"  # the notebook's frame, not given: the sandbox refuses it, as it should
    assert rename_kept_names(code, {"customers"}, renamed, taken=()).code == code and renamed == {}
    assert rename_kept_names("x = (", {"customers"}, renamed, taken=()).code == "x = ("


def test_the_small_models_run_answers_and_the_notebooks_variable_is_untouched(small_agent):
    """The clean run's `customers = sales["customer_id"].unique()` was refused four times and the run ended."""
    data = frames()
    bodies = ["customers = sales['customer_id'].unique()\nprint(len(customers))", "final_answer(len(customers))"]
    agent = small_agent(bodies, dict(data))
    assert agent.run(TASK, additional_args={"sales": data["sales"]}) == 3
    first, second = agent.memory.action_steps()
    assert first.error is None and "customers_ = sales" in first.code_action
    assert "`customers` is one of the notebook's variables the task did not give" in first.observations
    assert second.code_action == "final_answer(len(customers_))"
    assert list(data["customers"]["name"]) == ["Ada", "Bo", "Cy"]  # the notebook's own, as it was


def test_other_models_are_told_the_name_is_taken():
    data = frames()
    model = ScriptedModel(["Thought: go.\n```python\ncustomers = sales['customer_id'].unique()\n```", "3"])
    agent = CodeAgent(tools=[], model=model, namespace=dict(data), verbosity_level=-1, show_widget=False, max_steps=1)
    agent.run(TASK, additional_args={"sales": data["sales"]})
    step = agent.memory.action_steps()[0]
    assert isinstance(step.error, AgentExecutionError) and "cannot bind 'customers'" in str(step.error)
