"""What a small model reads after a step that ran without error, besides its output (Coach.step_notes): a
comparison no row of the data meets (nbagent/loop/aids/selections.py), also as a doubt about an answer made from
it and as the hint when the empty selection fails later; a total of numbers written as text."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.selections import empty_selections
from nbagent.loop.prompting import SMALL


def sales() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "date": pd.to_datetime(["2024-05-03", "2024-06-01", "2024-06-09"]),
            "region": [" North", "South", "south"],
            "customer_id": [1, 2, 2],
        }
    )


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ('x = sales[sales["date"].dt.strftime("%Y-%m") == "June"]', "'2024-05', '2024-06'"),
        ('x = sales[sales["date"].dt.month_name() == "Jun"]', "'May', 'June'"),
        ('x = sales[sales["region"].str.strip().str.lower() == "nort"]', "'north', 'south'"),
        ('x = sales[sales["customer_id"] == 7]', "1, 2"),
        ('x = sales[sales["customer_id"].astype(str) == "7"]', "'1', '2'"),
        ('x = sales[sales["date"].dt.month == 13]', "5, 6"),
    ],
)
def test_a_value_the_column_never_takes_is_said_with_what_it_does_take(code, said):
    note = empty_selections(code, {"sales": sales()})
    assert note.startswith("Note: no row has ") and "selection is empty" in note
    assert f"like {said}." in note


@pytest.mark.parametrize(
    "code",
    [
        'x = sales[sales["date"].dt.strftime("%Y-%m") == "2024-06"]',
        'x = sales[sales["region"].str.strip().str.lower() == "north"]',
        'x = sales[sales["region"].str.contains("x") == True]',  # not a pure step this module knows
        'sales = sales[sales["region"] == "West"]',  # the frame is rebound: it is not the one in the namespace
        'x = others[others["region"] == "West"]',  # not a notebook frame
        'x = sales[sales["nothing"] == "West"]',
        "x = (",
    ],
)
def test_a_selection_that_meets_rows_or_cannot_be_worked_out_says_nothing(code):
    assert empty_selections(code, {"sales": sales()}) == ""


def run(*bodies: str, profile: str | None = SMALL) -> CodeAgent:
    model = ScriptedModel([f"Thought: go.\n```python\n{body}\n```" for body in bodies])
    model.prompt_profile = profile
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"sales": sales()},
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=len(bodies),
    )
    agent.run("How many different customers placed an order in June 2024, according to `sales`?")
    return agent


LOOK = 'june = sales[sales["date"].dt.strftime("%Y-%m") == "June"]\nprint(june["customer_id"].nunique())'


def test_the_step_that_selected_nothing_says_so_after_what_it_printed():
    agent = run(LOOK, "final_answer(1)", "final_answer(1)")
    first = agent.memory.action_steps()[0]
    assert first.observations.startswith("Execution logs:\n0")
    assert "no row has sales['date'].dt.strftime('%Y-%m') == 'June'" in first.observations


def test_an_answer_from_a_selection_of_no_rows_is_doubted():
    agent = run(LOOK + "\nfinal_answer(int(june['customer_id'].nunique()))", "final_answer(2)", "final_answer(2)")
    steps: list[ActionStep] = agent.memory.action_steps()
    assert "was refused" in str(steps[0].error) and "no row has" in str(steps[0].error)


def test_other_models_read_only_what_the_code_printed():
    agent = run(LOOK, "final_answer(1)", "final_answer(1)", profile=None)
    assert "no row has" not in agent.memory.action_steps()[0].observations


def test_a_name_holding_one_value_is_compared_like_a_literal():
    namespace = {"sales": sales(), "max_amount": np.float64(27001.5), "best": np.int64(2)}
    note = empty_selections("n = sales[sales['customer_id'] == max_amount]['region'].values[0]", namespace)
    assert "no row has sales['customer_id'] == max_amount (27001.5)" in note and "like 1, 2." in note
    assert "`max_amount` is none of them" in note
    assert empty_selections("n = sales[sales['customer_id'] == best]['region'].values[0]", namespace) == ""


def test_a_key_written_as_text_compared_with_a_number_is_named_with_the_comparison_to_write():
    clients = pd.DataFrame({"client_id": ["001", "085", "007"]})
    orders = pd.DataFrame({"order_id": [5001, 5002]})
    namespace = {"clients": clients, "orders": orders, "best": np.int64(85), "wanted": "5002", "nobody": 99}
    note = empty_selections("n = clients[clients['client_id'] == best]", namespace)
    assert "holds text and best a number" in note
    assert note.rstrip().endswith("pd.to_numeric(clients['client_id'], errors='coerce') == best")
    note = empty_selections("n = orders[orders['order_id'] == wanted]", namespace)
    assert note.rstrip().endswith("compare them as numbers: orders['order_id'] == int(wanted)")
    assert note_ends(empty_selections("n = orders[orders['order_id'] == '5001']", namespace), "== 5001")
    # converted, still no row: the plain note, no conversion offered
    assert "is none of them" in empty_selections("n = clients[clients['client_id'] == nobody]", namespace)


def note_ends(note: str, end: str) -> bool:
    return note.rstrip().endswith(end)


def test_a_selection_of_no_rows_that_fails_later_gets_the_hint():
    failing = (
        "best = sales.groupby('customer_id').size().max() * 1000\n"
        "who = sales[sales['customer_id'] == best]['region'].values[0]\nfinal_answer(who)"
    )
    agent = run(failing, "final_answer(1)", "final_answer(1)")
    error = str(agent.memory.action_steps()[0].error)
    assert "IndexError" in error
    assert "Hint: nothing was selected: no row has sales['customer_id'] == best (2000)" in error


def test_a_total_of_numbers_written_as_text_is_said_after_the_step():
    frame = pd.DataFrame({"amount": ["-$34.44", "-$1,236.79"]})
    model = ScriptedModel(["Thought: go.\n```python\ntotal = refunds['amount'].sum()\n```"] * 2)
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[], model=model, namespace={"refunds": frame}, verbosity_level=-1, show_widget=False, max_steps=1
    )
    agent.run("How much was refunded in `refunds`?")
    said = agent.memory.action_steps()[0].observations
    assert "`total` is now" in said  # what the step made, as before
    assert "Note: refunds['amount'] still holds numbers written as text, so .sum() works on the texts" in said


@pytest.mark.parametrize(
    "conversion",
    [
        "orders['amount'] = pd.to_numeric(orders['amount'].str.replace('$', '', n=1), errors='coerce')",
        "amount = pd.to_numeric(orders['amount'].str.replace('$', '', regex=False).str.upper(), errors='coerce')",
    ],
)
def test_numbers_a_coerced_conversion_read_as_missing_are_said_after_the_step(conversion):
    """The messy run took out the '$' and left the ',': every amount of a thousand or more became NaN, silently.
    (A cleaning nbagent can play ahead runs as the full conversion instead: tests/loop/test_lossy_conversions.py.)"""
    frame = pd.DataFrame({"amount": ["$98.10", "$1,234.00", "", "$2,000.50"]})
    model = ScriptedModel([f"Thought: go.\n```python\nimport pandas as pd\n{conversion}\n```"] * 2)
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=1,
    )
    agent.run("What is the total amount in `orders`?", additional_args={"orders": frame})  # the task's frame
    said = agent.memory.action_steps()[0].observations
    assert (
        "Note: the conversion of orders['amount'] read 2 of its numbers as missing ('$1,234.00', '$2,000.50')" in said
    )
    assert "pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')" in said


def test_a_conversion_that_read_every_number_says_nothing():
    from nbagent.loop.aids.coercions import numbers_lost

    given = {"orders": pd.DataFrame({"amount": ["$98.10", "$1,234.00", ""]})}
    code = "amount = pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')"
    namespace = {**given, "amount": pd.Series([98.1, 1234.0, np.nan])}
    assert numbers_lost(ast.parse(code), namespace, given) == []  # the blank is no number lost
    namespace["amount"] = pd.Series([98.1, np.nan, np.nan])
    assert len(numbers_lost(ast.parse(code), namespace, given)) == 1
