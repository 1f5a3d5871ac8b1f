"""A chart call that failed on what it was given: Period values, totals that joined texts (hints/charts)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from nbagent.loop.aids.hints import execution_hint

ORDERS = pd.DataFrame(
    {
        "order_date": ["01/05/2024", "2024-01-09", "February 2, 2024", "2024-03-04"],
        "amount": ["$1,891.37", "$315.92", "833.64", "$12.50"],
    }
)
GROUPED = (
    "monthly = orders.groupby(pd.to_datetime(orders['order_date'], format='mixed').dt.to_period('M'))"
    "['amount'].sum().reset_index()"
)


class Failed(Exception):
    cause_type = ""


def hint_for(drawing: str, namespace: dict) -> str:
    """Run `drawing` (one line) on the namespace as the agent's code would, and the hint for its failure."""
    try:
        exec(drawing, {"plt": plt, "pd": pd, **namespace})
    except Exception as error:
        failure = Failed(f"Error on line 2 of the code:\n    {drawing}\n{type(error).__name__}: {error}")
        failure.cause_type = type(error).__name__
        return execution_hint(failure, f"{GROUPED}\n{drawing}", namespace, "Plot the monthly total order amount.")
    finally:
        plt.close("all")
    pytest.fail(f"{drawing} did not fail")


def test_periods_and_a_total_of_texts_passed_to_a_bar_chart_are_both_named():
    monthly = ORDERS.groupby(pd.to_datetime(ORDERS["order_date"], format="mixed").dt.to_period("M"))["amount"]
    namespace = {"orders": ORDERS, "monthly": monthly.sum().reset_index()}
    hint = hint_for("plt.bar(monthly['order_date'], monthly['amount'])", namespace)
    assert hint.startswith("Hint: monthly['order_date'] holds Period values (Period('2024-01', 'M'), ")
    assert "pass monthly['order_date'].astype(str)" in hint
    assert "monthly['amount'] holds text, not numbers ('$1,891.37$315.92" in hint
    assert "pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce')" in hint
    assert "final_answer" not in hint


def test_periods_alone_in_a_line_chart_are_named_and_numbers_are_not_doubted():
    per_month = pd.Series([3.0, 4.0], index=pd.period_range("2024-01", periods=2, freq="M"), name="amount")
    namespace = {"orders": ORDERS, "monthly": per_month.reset_index()}
    hint = hint_for("plt.plot(monthly['index'], monthly['amount'])", namespace)
    assert "monthly['index'] holds Period values" in hint and "holds text" not in hint


def test_a_chart_call_failing_on_anything_else_gets_no_chart_hint():
    namespace = {"orders": ORDERS, "monthly": pd.DataFrame({"month": ["Jan", "Feb"], "amount": [1.0, 2.0]})}
    assert "Period" not in hint_for("plt.bar(monthly['month'], monthly['amount'], colour='red')", namespace)
