"""A product of totals in a small model's code is run as the total of the products, and says so."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.code_checks import code_warning, fix_totals
from nbagent.loop.prompting import SMALL

SALES = "What is the revenue of `sales`?\n- `sales`: pandas DataFrame, 3 rows × 3 columns"


def sales() -> pd.DataFrame:
    return pd.DataFrame({"region": ["East", "West", "East"], "units": [1, 2, 3], "unit_price": [2.0, 3.0, 4.0]})


def run_small(body: str, then: str = "final_answer(r)", profile: str | None = SMALL):
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```", f"Thought: done.\n```python\n{then}\n```"])
    if profile:
        model.prompt_profile = profile
    agent = CodeAgent(
        tools=[], model=model, namespace={"sales": sales()}, verbosity_level=-1, show_widget=False, max_steps=3
    )
    return agent, agent.run(SALES), model


@pytest.mark.parametrize(
    ("written", "ran"),
    [
        ("r = sales['units'] * sales['unit_price'].sum()", "r = (sales['units'] * sales['unit_price']).sum()"),
        (
            "r = sales['units'] * sales['unit_price'].sum().round(2)",
            "r = (sales['units'] * sales['unit_price']).sum().round(2)",
        ),
        ("r = sales['units'].sum() * sales['unit_price'].sum()", "r = (sales['units'] * sales['unit_price']).sum()"),
        ("r = sales.units.sum() * sales.unit_price", "r = (sales.units * sales.unit_price).sum()"),
        (
            "r = sales.loc[m, 'units'] * sales.loc[m, 'unit_price'].sum()",
            "r = (sales.loc[m, 'units'] * sales.loc[m, 'unit_price']).sum()",
        ),
        (  # through names the code gave the totals
            "u = sales['units'].sum()\np = sales['unit_price'].sum()\nr = u * p",
            "u = sales['units'].sum()\np = sales['unit_price'].sum()\nr = (sales['units'] * sales['unit_price']).sum()",
        ),
        (  # grouped afterwards: the per-row product was meant
            "t = sales['unit_price'].sum()\nv = sales['units'] * t\nr = v.groupby(sales['region']).sum()",
            "t = sales['unit_price'].sum()\nv = sales['units'] * sales['unit_price']\nr = v.groupby(sales['region']).sum()",
        ),
        (
            "v = sales['units'] * sales['unit_price'].sum()\nr = v.idxmax()",
            "v = sales['units'] * sales['unit_price']\nr = v.idxmax()",
        ),
        (
            "r = 'é' + str(sales['units'] * sales['unit_price'].sum())",
            "r = 'é' + str((sales['units'] * sales['unit_price']).sum())",
        ),
    ],
)
def test_a_product_of_totals_of_the_same_rows_is_rewritten(written, ran):
    fix = fix_totals(written)
    assert fix.code == ran
    assert len(fix.notes) == 1 and "the total of a product is (a * b).sum()" in fix.notes[0]
    assert code_warning(fix.code) == ""


@pytest.mark.parametrize(
    "code",
    [
        "r = (sales['units'] * sales['unit_price']).sum()",
        "r = sales['units'] / sales['units'].sum()",
        "r = sales['units'].sum() * 100",
        "r = 2 * sales['units'].sum()",
        "r = sales['units'] * other['unit_price'].sum()",  # other rows: not sure, so warned, not fixed
        "r = sales['units'] * sales['unit_price'].mean()",  # a mean: maybe meant
        "r = sales.groupby('region')['units'] * sales['unit_price'].sum()",
        "r = sales[",  # not Python: left as it is
    ],
)
def test_other_code_is_left_as_written(code):
    assert fix_totals(code).code == code and fix_totals(code).notes == []


def test_the_fixed_code_runs_and_the_step_keeps_what_the_model_wrote():
    agent, answer, model = run_small("r = sales['units'] * sales['unit_price'].sum()")
    assert answer == 1 * 2.0 + 2 * 3.0 + 3 * 4.0
    step = next(s for s in agent.memory.steps if isinstance(s, ActionStep))
    assert step.error is None
    assert step.model_code_action == "r = sales['units'] * sales['unit_price'].sum()"
    assert step.code_action == "r = (sales['units'] * sales['unit_price']).sum()"
    assert step.observations.startswith("nbagent ran `sales['units'] * sales['unit_price'].sum()` (line 1) as")
    second_prompt = "\n".join(message.text for message in model.calls[1])
    assert (
        "This code was edited before it ran" in second_prompt
        and "(sales['units'] * sales['unit_price']).sum()" in second_prompt
    )


def test_api_models_code_runs_as_written():
    agent, answer, _ = run_small("r = float((sales['units'] * sales['unit_price'].sum()).sum())", profile=None)
    assert answer == 6 * 9.0


def test_a_grouped_column_times_a_total_is_warned_with_the_lines_to_write():
    said = code_warning("r = sales.groupby('region')['units'] * sales['unit_price'].sum().round(2)")
    assert "write value = sales['units'] * sales['unit_price'] first, then value.groupby(sales['region']).sum()" in said
    assert said.endswith("The code did not run.")
