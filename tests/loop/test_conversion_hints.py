"""Hints for the mistakes of messy data: numbers and dates written as text (the column, its own values and the one
conversion that reads them all, into a new variable) and final_answer given several values; never an answer to paste."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.hints import execution_hint
from nbagent.sandbox import LocalPythonExecutor

pytestmark = pytest.mark.filterwarnings("ignore::nbagent.sandbox.guards.executor.LocalNotice")


def orders() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "amount": ["$315.92", "1,779.80", "-$18.46", "", None, "42.00"] * 4,
            "order_date": ["2024-03-05", "03/07/2024", "March 9, 2024", "", None, "2024-01-01"] * 4,
            "region": ["North", "north ", "South", "East", "West", "North"] * 4,
        }
    )


def hint_for(code: str, frame: pd.DataFrame | None = None) -> str:
    namespace = {"orders": orders() if frame is None else frame, "pd": pd}
    executor = LocalPythonExecutor(additional_authorized_imports=["pandas", "matplotlib"], namespace=namespace)
    try:
        with pytest.raises(Exception) as failed:
            executor(code)
    finally:  # a chart that failed to draw leaves its figure open in this process (and in workers forked later)
        if "matplotlib.pyplot" in sys.modules:
            sys.modules["matplotlib.pyplot"].close("all")
    return execution_hint(failed.value, code, namespace, "How much?")


@pytest.mark.parametrize(
    "code",
    [
        'x = orders["amount"].str.replace("$", "").astype(float)',
        'x = pd.to_numeric(orders["amount"])',
        'x = orders["amount"].astype(float).sum()',
        "x = orders.amount.mean()",
        'x = orders.groupby("region")["amount"].mean().round(2)',
    ],
)
def test_money_as_text_gets_its_values_and_the_conversion(code):
    hint = hint_for(code)
    assert "orders['amount'] holds numbers written as text" in hint
    assert "'$315.92'" in hint and "'1,779.80'" in hint and "8 blank or missing" in hint
    assert "pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')" in hint
    assert "final_answer" not in hint


def test_a_float_minus_texts_summed_into_one_gets_the_conversion():
    frame = pd.DataFrame({"amount": ["$315.92", "$1,779.80", "-$18.46"] * 4, "price": [1.0, 2.0, 3.0] * 4})
    hint = hint_for('x = orders["price"].sum() - orders["amount"].sum()', frame)
    assert "orders['amount'] holds numbers written as text" in hint and "errors='coerce')" in hint


def test_a_blank_met_after_the_marks_are_out_is_named_with_errors_coerce():
    hint = hint_for("""x = orders["amount"].str.replace(r"[$,]", "", regex=True).astype(float)""")
    assert "the $ and , are out, but orders['amount'] also holds blanks (8 blank or missing)" in hint
    assert "astype(float) cannot read" in hint and "errors='coerce')" in hint
    assert "final_answer" not in hint


@pytest.mark.parametrize(
    "code",
    ['d = pd.to_datetime(orders["order_date"])', 'm = orders[orders["order_date"].dt.month == 3]'],
)
def test_dates_in_several_formats_get_format_mixed(code):
    hint = hint_for(code)
    assert "orders['order_date'] holds dates written as text, in more than one format" in hint
    assert "'03/07/2024'" in hint and "pd.to_datetime(orders['order_date'], format='mixed', errors='coerce')" in hint


def test_a_text_column_of_words_gets_no_conversion_hint():
    assert "written as text" not in hint_for('x = orders["region"].astype(float)')


def test_the_data_is_read_not_changed():
    frame = orders()
    hint_for('x = pd.to_numeric(orders["amount"])', frame)
    pd.testing.assert_frame_equal(frame, orders())


def test_the_next_step_reads_the_hint_and_its_conversion_runs():
    model = ScriptedModel(
        [
            'Thought: total.\n```python\ntotal = orders["amount"].astype(float).sum()\n```',
            "Thought: convert.\n```python\namount = pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', "
            "regex=True), errors='coerce')\nfinal_answer(round(float(amount.sum()), 2))\n```",
        ]
    )
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"orders": orders(), "pd": pd},
        executor_type="local",
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=3,
    )
    answer = agent.run("What is the total amount of `orders`?")
    first = next(step for step in agent.memory.steps if isinstance(step, ActionStep))
    assert "holds numbers written as text" in str(first.error)
    assert "holds numbers written as text" in "\n".join(message.text for message in model.calls[1])
    assert answer == round((315.92 + 1779.80 - 18.46 + 42.00) * 4, 2)


def test_final_answer_given_two_values_is_told_to_pass_one():
    frame = pd.DataFrame({"segment": ["a", "b", "a"]})
    code = "top = frame['segment'].value_counts()\nfinal_answer(top.idxmax(), top.max())"
    namespace = {"frame": frame}
    executor = LocalPythonExecutor(additional_authorized_imports=["pandas", "matplotlib"], namespace=namespace)
    executor.send_tools({})
    with pytest.raises(Exception) as failed:
        executor(code)
    hint = execution_hint(failed.value, code, namespace, "Which segment, and how many?")
    assert hint.startswith("Hint: final_answer takes one value, and the code gave it 2.")
    assert "final_answer((top.idxmax(), top.max()))" in hint


def test_str_on_a_column_an_earlier_step_converted_says_it_holds_numbers_now():
    converted = orders().assign(amount=[1.0, 2.0, 3.0, None, None, 4.0] * 4)
    hint = hint_for("x = orders['amount'].str.replace(r'[$,]', '', regex=True).astype(float)", converted)
    assert hint.startswith("Hint: orders['amount'] already holds numbers (float64), not text")
    assert "without .str" in hint


def test_str_on_a_converted_column_names_that_column_when_the_line_names_another():
    """The messy run's line read `.str` of orders["amount"] (float now) and named "client_id" (int): the hint had
    said client_id."""
    converted = orders().assign(amount=[1.0, 2.0, 3.0, None, None, 4.0] * 4)
    converted.insert(0, "client_id", list(range(24)))  # before `amount`, as in the run's frame
    code = 'x = orders.loc[orders["amount"].str.contains("4.0", na=False), "client_id"].iloc[0]'
    hint = hint_for(code, converted)
    assert hint.startswith("Hint: orders['amount'] already holds numbers (float64), not text"), hint


@pytest.mark.parametrize(
    "code",
    [
        # the total of a text column is text: a float minus it fails in numpy, far from the column
        "total_orders = 100.0\ntotal_refunds = orders['amount'].sum()\nnet = round(total_orders - total_refunds, 2)",
        # and a text has no .round()
        "total_refunds = orders['amount'].sum().round(2)",
        # a chart of totals that joined the texts has nothing to draw
        "import matplotlib\nmatplotlib.use('Agg')\nmonthly = orders.groupby('region')['amount'].sum()\n"
        "monthly.plot(kind='bar')",
    ],
)
def test_a_total_that_stayed_text_is_traced_to_its_column(code):
    """The messy run's net revenue: `orders_total - refunds_total` failed with no hint, and `.sum().round(2)` was
    told "'round' is not a method of a str; did you mean .rfind()?"."""
    hint = hint_for(code)
    assert hint.startswith("Hint: orders['amount'] holds numbers written as text"), hint


@pytest.mark.parametrize(
    "code, column_line",
    [
        # the messy run's merge: the key column's hint was "holds numbers written as text", so it converted all again
        ("m = orders.merge(clients.astype(int), on='client_id')", "clients.assign(client_id=clients['client_id']"),
        ("c = clients.astype(float)", "clients.assign(client_id=clients['client_id'].astype(float))"),
    ],
)
def test_a_whole_frame_converted_is_told_which_column_holds_words_and_which_to_convert(code, column_line):
    clients = pd.DataFrame({"client_id": ["001", "002", "003"], "name": ["Ada Stone", "Bo Li", "Cy Ng"]})
    namespace = {"orders": orders(), "clients": clients, "pd": pd}
    executor = LocalPythonExecutor(additional_authorized_imports=["pandas"], namespace=namespace)
    with pytest.raises(Exception) as failed:
        executor(code)
    hint = execution_hint(failed.value, code, namespace, "Which client spent the most?")
    assert "converts every column of `clients`, and clients['name'] holds words ('Ada Stone')" in hint, hint
    assert column_line in hint
    assert "holds numbers written as text" not in hint
