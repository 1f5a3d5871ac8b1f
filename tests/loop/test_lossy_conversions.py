"""A conversion with errors="coerce" that would read some of a column's numbers as missing runs as the one that
reads them all, before the step writes the lost numbers over the frame (nbagent/loop/aids/coercions.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent import ActionStep
from nbagent.loop.aids.coercions import fix_lossy_conversions, number_conversion

FULL = number_conversion("orders['amount']")


def orders() -> pd.DataFrame:
    return pd.DataFrame({"amount": ["$1,891.37", "$12.50", "-$18.46", None, "", "$3.00", "1,000"]})


@pytest.mark.parametrize(
    ("cleaning", "lost", "left"),
    [
        ("orders['amount'].str.replace('$', '')", 2, "','"),  # the messy run's chart step
        ("orders['amount'].str.replace('$', '', regex=True)", 5, "'$', ','"),  # '$' is the end of the text
        ("orders['amount'].astype(str).str.strip().str.replace(',', '')", 4, "'$'"),
        ("orders['amount'].str.replace(pat=',', repl='')", 4, "'$'"),
    ],
)
def test_a_conversion_that_would_lose_numbers_runs_as_the_full_one(cleaning, lost, left):
    fix = fix_lossy_conversions(f"orders['amount'] = pd.to_numeric({cleaning}, errors='coerce')", {"orders": orders()})
    assert fix.code == f"orders['amount'] = {FULL}"
    (note,) = fix.notes
    assert f"would read {lost} numbers of orders['amount'] as missing" in note
    assert f"their text would still hold {left}," in note


@pytest.mark.parametrize(
    ("conversion", "failing", "held"),
    [
        # the messy run's first steps in three questions: each failed, and the next step wrote the hint's line
        (
            "orders['amount'].str.replace(',', '').astype(float)",
            "'$1,891.37', '$12.50'",
            " (their text would still hold '$')",
        ),
        ("orders['amount'].astype('float64')", "'$1,891.37', '$12.50'", " (their text would still hold '$', ',')"),
        (
            "pd.to_numeric(orders['amount'].str.replace('$', ''))",
            "'$1,891.37', '1,000'",
            " (their text would still hold ',')",
        ),
        ("orders['amount'].str.replace(r'[$,]', '', regex=True).astype(float)", "''", ""),  # only the blank fails
    ],
)
def test_a_conversion_that_would_fail_on_the_columns_numbers_runs_as_the_full_one(conversion, failing, held):
    fix = fix_lossy_conversions(f"total = {conversion}.sum()", {"orders": orders(), "pd": pd})
    assert fix.code == f"total = {FULL}.sum()"
    (note,) = fix.notes
    assert f"it would fail on {failing} of orders['amount']{held}" in note
    assert note.endswith("the full conversion reads every number and leaves the blanks missing")


def test_a_conversion_of_a_column_of_words_fails_as_written():
    names = pd.DataFrame({"name": ["Ada Stone", "Bo Li", ""]})
    code = "x = clients['name'].astype(float)"
    assert fix_lossy_conversions(code, {"clients": names, "pd": pd}).code == code


@pytest.mark.parametrize(
    "code",
    [
        "x = pd.to_numeric(orders['amount'].str.replace('$', '').str.replace(',', ''), errors='coerce')",  # reads all
        "x = pd.to_numeric(orders['amount'].str.replace(r'[^0-9.-]', '', regex=True), errors='coerce')",
        f"x = {FULL}",
        "x = orders['amount'].astype(float)",  # no pandas named `pd` where the code runs: as written
        "x = orders['amount'].str.replace(r'[$,]', '', regex=True).astype(int)",  # whole numbers: not read as floats
        "x = pd.to_numeric(orders['amount'].str.replace('$', '').str.lower(), errors='coerce')",  # not played
        "x = pd.to_numeric(orders['amount'].str.replace('$', '', n=1), errors='coerce')",  # not played
        "x = pd.to_numeric(orders['amount'].str.replace(r'(', '', regex=True), errors='coerce')",  # no pattern
        # the code changed the column, or the frame, before: its values are no longer the notebook's
        "orders['amount'] = orders['amount'].str.replace('$', '')\n"
        "x = pd.to_numeric(orders['amount'].str.replace(',', ''), errors='coerce')",
        "orders = orders.head(1)\nx = pd.to_numeric(orders['amount'].str.replace('$', ''), errors='coerce')",
        "x = pd.to_numeric(other['amount'].str.replace('$', ''), errors='coerce')",  # not a frame the code sees
    ],
)
def test_other_conversions_run_as_written(code):
    assert fix_lossy_conversions(code, {"orders": orders()}).code == code


def test_a_column_of_numbers_is_left_to_the_reconversion_fix():
    frame = pd.DataFrame({"amount": [1.5, 2.0]})
    code = "x = pd.to_numeric(orders['amount'].str.replace('$', ''), errors='coerce')"
    assert fix_lossy_conversions(code, {"orders": frame}).code == code


def test_a_pattern_never_runs_on_the_data_only_on_single_characters():
    """A pattern that backtracks for ages on long text cannot hold the kernel: it is tried on one character."""
    frame = pd.DataFrame({"amount": ["$" + "a" * 5000 + "!", "$1,000"]})
    code = "x = pd.to_numeric(orders['amount'].str.replace(r'(a|a)*$', '', regex=True), errors='coerce')"
    fix = fix_lossy_conversions(code, {"orders": frame})
    assert fix.code == f"x = {FULL}"


def test_the_step_runs_the_full_conversion_and_the_total_keeps_every_amount(small_agent):
    frame = pd.DataFrame({"amount": ["$1,000.50", "$2.00", "$3.25"]})
    convert = "orders['amount'] = pd.to_numeric(orders['amount'].str.replace('$', ''), errors='coerce')"
    agent = small_agent(
        [f"import pandas as pd\n{convert}\nr = round(orders['amount'].sum(), 2)", "final_answer(r)"],
        {"orders": frame},
        max_steps=3,
    )
    assert agent.run("What is the total amount of `orders`?") == 1005.75
    first = next(s for s in agent.memory.steps if isinstance(s, ActionStep))
    assert "str.replace('$', '')" in first.model_code_action and FULL in first.code_action
    assert "would read 1 number of orders['amount'] as missing ('$1,000.50')" in first.observations


def test_the_step_that_would_fail_runs_the_full_conversion_and_answers_at_once(small_agent):
    frame = pd.DataFrame({"amount": ["$1,000.50", "$2.00", "", "$3.25"]})
    agent = small_agent(
        ["import pandas as pd\nfinal_answer(round(orders['amount'].str.replace(',', '').astype(float).sum(), 2))"],
        {"orders": frame},
    )
    assert agent.run("What is the total amount of `orders`?") == 1005.75
    (first,) = agent.memory.action_steps()
    assert first.error is None and FULL in first.code_action
