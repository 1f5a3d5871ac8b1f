"""A text test that selects rows, on a column with gaps, leaves the gaps out instead of failing
(nbagent/loop/aids/text_masks.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from nbagent.loop.aids.text_masks import fix_text_masks


def clients() -> pd.DataFrame:
    dates = ["2023-09-03", "08/08/2022", "March 5, 2023", None, "", "2024-01-02"]
    return pd.DataFrame(
        {
            "signup_date": pd.Series(dates, dtype=object),  # as a notebook's mixed data often is
            "as_str": dates,  # pandas 3's str: a test gives False for a gap
            "as_string": pd.Series(dates, dtype="string"),  # pandas' NA strings: a test gives NA
            "name": ["Ann", "Bo", "Cy", "Di", "Ed", "Flo"],
        }
    )


TESTS = ("contains", "startswith", "endswith")


def fixed(code: str) -> tuple[str, list[str]]:
    fix = fix_text_masks(code, {"clients": clients(), "pd": pd})
    return fix.code, fix.notes


@pytest.mark.parametrize(
    ("code", "runs"),
    [
        # the messy run's first step, which failed on the column's blank
        (
            'count = clients[clients["signup_date"].str.contains("2023")].shape[0]',
            "count = clients[clients['signup_date'].str.contains('2023', na=False)].shape[0]",
        ),
        (
            "x = clients.loc[clients['signup_date'].str.startswith('2023'), 'name']",
            "x = clients.loc[clients['signup_date'].str.startswith('2023', na=False), 'name']",
        ),
        (
            "x = clients[~clients['signup_date'].str.endswith('2022') & (clients['name'] != 'Bo')]",
            "x = clients[~clients['signup_date'].str.endswith('2022', na=False) & (clients['name'] != 'Bo')]",
        ),
        (
            "x = clients[clients['as_string'].str.contains('2023')]",
            "x = clients[clients['as_string'].str.contains('2023', na=False)]",
        ),
    ],
)
def test_a_text_test_selecting_rows_of_a_column_with_gaps_leaves_them_out(code, runs):
    code_run, notes = fixed(code)
    assert code_run == runs
    (note,) = notes
    column, test = next((c, t) for c in ("signup_date", "as_string") for t in TESTS if f"['{c}'].str.{t}(" in runs)
    assert note.endswith(
        f"clients['{column}'] has 1 missing value, where .str.{test} gives NaN, and NaN cannot select rows; na=False "
        "leaves those rows out"
    )


@pytest.mark.parametrize(
    "code",
    [
        "x = clients[clients['name'].str.contains('o')]",  # no gaps: it runs
        "x = clients[clients['as_str'].str.contains('2023')]",  # False for a gap: it runs
        "x = clients[clients['signup_date'].str.contains('2023', na=True)]",  # the code chose
        "x = clients['signup_date'].str.contains('2023').sum()",  # a sum skips the gaps
        "clients = clients.fillna('')\nx = clients[clients['signup_date'].str.contains('2023')]",  # the code's own frame
        "x = other[other['signup_date'].str.contains('2023')]",  # not a frame the code sees
    ],
)
def test_other_text_tests_run_as_written(code):
    assert fixed(code) == (code, [])


def test_the_step_selects_the_rows_and_answers_at_once(small_agent):
    agent = small_agent(
        ["final_answer(len(clients[clients['signup_date'].str.contains('2023')]))"], {"clients": clients()}
    )
    assert agent.run("How many clients in `clients` signed up in 2023?") == 2
    (step,) = agent.memory.action_steps()
    assert step.error is None and "na=False" in step.code_action
