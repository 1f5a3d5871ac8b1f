"""A small model's text cleaning of a column that already holds numbers or dates runs as the column itself
(nbagent/loop/aids/reconversions.py), and the step says so."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent import ActionStep, CodeAgent, ScriptedModel
from nbagent.loop.aids.reconversions import fix_reconversions
from nbagent.loop.prompting import SMALL

CLEAN = "orders['amount'].str.replace('$', '').str.replace(',', '')"


def orders() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "amount": [1.5, 2.0, 3.25],
            "when": pd.to_datetime(["2024-01-01", "2024-02-01", "2024-03-01"]),
            "label": [" a", "b ", "c"],
        }
    )


@pytest.mark.parametrize(
    ("written", "ran"),
    [
        (f"orders['amount'] = {CLEAN}.astype(float)", "orders['amount'] = orders['amount'].astype(float)"),
        (
            "net = pd.to_numeric(orders['amount'].str.replace(r'[$,]', '', regex=True), errors='coerce').sum() - 1",
            "net = pd.to_numeric(orders['amount'], errors='coerce').sum() - 1",
        ),
        (
            "d = pd.to_datetime(orders['when'].str.strip(), format='mixed')",
            "d = pd.to_datetime(orders['when'], format='mixed')",
        ),
    ],
)
def test_cleaning_a_column_that_is_no_longer_text_runs_as_the_column(written, ran):
    fix = fix_reconversions(written, {"orders": orders()})
    assert fix.code == ran
    assert len(fix.notes) == 1 and "already holds" in fix.notes[0] and ".str is for text" in fix.notes[0]


@pytest.mark.parametrize(
    ("written", "ran"),
    [
        (
            f"once = orders.drop_duplicates()\nonce['amount'] = {CLEAN.replace('orders', 'once')}.astype(float)",
            "once = orders.drop_duplicates()\nonce['amount'] = once['amount'].astype(float)",
        ),
        (
            "big = orders[orders['amount'] > 1].copy()\nx = big['amount'].str.strip()",
            "big = orders[orders['amount'] > 1].copy()\nx = big['amount']",
        ),
    ],
)
def test_rows_selected_from_a_notebook_frame_keep_its_column_types(written, ran):
    """The messy run: `once = orders.drop_duplicates()`, then the column of `once` cleaned as text again."""
    assert fix_reconversions(written, {"orders": orders()}).code == ran


@pytest.mark.parametrize(
    "code",
    [
        "x = orders['label'].str.strip()",  # text: the cleaning is what it needs
        "x = orders['amount'].str.contains('1')",  # a test, not a cleaning
        "x = orders['amount'].astype(str).str.replace('.', ',')",  # made text first
        f"orders['amount'] = orders['amount'].astype(str)\ny = {CLEAN}",  # made text by an earlier line
        f"orders = pd.read_csv('orders.csv')\ny = {CLEAN}",  # the frame read anew
        f"y = {CLEAN.replace('orders', 'refunds')}",  # not a notebook frame
        f"once = orders.groupby('label').sum()\ny = {CLEAN.replace('orders', 'once')}",  # not a selection of rows
        f"once = orders.copy()\nonce['amount'] = once['amount'].astype(str)\ny = {CLEAN.replace('orders', 'once')}",
        f"for once in [orders]:\n    y = {CLEAN.replace('orders', 'once')}",  # bound by a loop
        "y = orders['amount'].str.replace('$', '')  (",  # cannot be read: left to fail as it is
    ],
)
def test_other_cleanings_are_left_as_written(code):
    assert fix_reconversions(code, {"orders": orders()}).code == code


def test_a_second_step_converting_again_runs_and_the_step_says_why():
    frame = pd.DataFrame({"amount": ["$1,000.50", "$2.00", "$3.25"]})
    convert = "orders['amount'] = pd.to_numeric(orders['amount'].str.replace('$', '').str.replace(',', ''))"
    model = ScriptedModel(
        [
            f"Thought: convert.\n```python\nimport pandas as pd\n{convert}\nprint(orders.dtypes)\n```",
            f"Thought: total.\n```python\nimport pandas as pd\n{convert}\nr = round(orders['amount'].sum(), 2)\n```",
            "Thought: done.\n```python\nfinal_answer(r)\n```",
        ]
    )
    model.prompt_profile = SMALL
    agent = CodeAgent(
        tools=[],
        model=model,
        namespace={"orders": frame},
        additional_authorized_imports=["pandas"],
        verbosity_level=-1,
        show_widget=False,
        max_steps=4,
    )
    answer = agent.run("What is the total amount of `orders`?")
    assert answer == 1005.75
    second = [s for s in agent.memory.steps if isinstance(s, ActionStep)][1]
    assert second.error is None
    assert second.model_code_action.count(".str.replace") == 2
    assert ".str" not in second.code_action
    assert "orders['amount'] already holds float64, not text" in second.observations


def test_a_merge_keeps_the_column_types_of_the_side_that_has_the_column():
    """The messy run's offered program: the cleaned orders merged in twice, then their amounts cleaned as text."""
    namespace = {"orders": orders(), "refunds": pd.DataFrame({"k": [1], "label": ["x"]})}
    merged = "m = refunds.merge(orders, left_on='k', right_on='label')\n"
    again = "w = m[m['label'] == 'x']\nw = w.merge(orders[['label', 'amount']].drop_duplicates(), on='label')\n"
    code = merged + again + f"w['amount'] = pd.to_numeric({CLEAN.replace('orders', 'w')}, errors='coerce')"
    fix = fix_reconversions(code, namespace)
    assert fix.code == merged + again + "w['amount'] = pd.to_numeric(w['amount'], errors='coerce')"
    both = "m = pd.merge(refunds, orders, on='k')\nx = m['when'].str.strip()"  # pd.merge(left, right)
    assert fix_reconversions(both, namespace).code.endswith("x = m['when']")
    text = "m = refunds.merge(orders, on='k')\nx = m['label'].str.strip()"  # 'label' is text on the side that has it
    assert fix_reconversions(text, {**namespace, "refunds": pd.DataFrame({"k": [1]})}).code == text
