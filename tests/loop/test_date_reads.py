"""Dates written as text, read as dates where the code would fail: read in every format before the step runs
(nbagent/loop/aids/date_reads.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent.loop.aids.date_reads import date_conversion, fix_date_reads

MIXED = date_conversion("orders['order_date']")
SAME = date_conversion("orders['same']")


def orders() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "order_date": ["2024-03-01", "03/02/2024", "March 3, 2024", "", None, "2024-04-01"],
            "same": ["2024-03-01", "2024-03-02", "2024-03-03", "", None, "2024-04-01"],
            "name": ["a", "b", "c", "d", "e", "f"],
        }
    )


def fixed(code: str) -> tuple[str, list[str]]:
    fix = fix_date_reads(code, {"orders": orders(), "pd": pd})
    return fix.code, fix.notes


@pytest.mark.parametrize(
    ("code", "runs", "says"),
    [
        # the messy run's first steps: each failed, and the next step wrote the hint's line
        (
            "march = orders[orders['order_date'].dt.month == 3]",
            f"march = orders[{MIXED}.dt.month == 3]",
            "in 3 formats ('2024-03-01', '03/02/2024', 'March 3, 2024'), and .dt reads only dates",
        ),
        (
            "orders['order_date'] = pd.to_datetime(orders['order_date'])",
            f"orders['order_date'] = {MIXED}",
            "pd.to_datetime without format='mixed' fails on them",
        ),
        (
            "x = pd.to_datetime(orders['order_date'], errors='coerce')",
            f"x = {MIXED}",
            "reads the dates not in its first format as missing (NaT)",
        ),
        ("x = orders['same'].dt.year", f"x = {SAME}.dt.year", ".dt reads only dates"),  # one format: .dt fails too
    ],
)
def test_a_read_of_text_dates_that_would_fail_reads_every_format(code, runs, says):
    code_run, notes = fixed(code)
    assert code_run == runs
    (note,) = notes
    assert says in note


@pytest.mark.parametrize(
    "code",
    [
        "x = pd.to_datetime(orders['same'])",  # one format: pandas reads it
        "x = pd.to_datetime(orders['order_date'], format='%Y-%m-%d')",  # the code chose a format
        "x = pd.to_datetime(orders['order_date'], dayfirst=True)",
        "orders['order_date'] = pd.to_datetime(orders['order_date'], format='mixed')\nx = orders['order_date'].dt.month",
        "orders = orders.head(2)\nx = orders['order_date'].dt.month",  # the frame is the code's own by then
        "x = orders['name'].dt.month",  # no dates: the code's own failure says more
        "x = other['order_date'].dt.month",  # not a frame the code sees
    ],
)
def test_other_reads_run_as_written(code):
    assert fixed(code) == (code, [])


def test_without_pandas_named_pd_the_code_runs_as_written():
    code = "x = orders['order_date'].dt.month"
    assert fix_date_reads(code, {"orders": orders()}).code == code


def test_the_step_reads_the_dates_and_answers_at_once(small_agent):
    agent = small_agent(
        ["import pandas as pd\nfinal_answer(int((orders['order_date'].dt.month == 3).sum()))"], {"orders": orders()}
    )
    assert agent.run("How many orders of `orders` were placed in March?") == 3
    (step,) = agent.memory.action_steps()
    assert step.error is None and MIXED in step.code_action
