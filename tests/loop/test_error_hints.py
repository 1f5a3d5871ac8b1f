"""The hints after a failed step read the installed pandas' and numpy's real error messages.

Every message here comes from raising the real error (through the executor the agent uses, or in pandas
itself); none is pasted as text, so a new pandas or numpy wording shows up as a failing test.
"""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import pandas as pd
import pytest

from nbagent.loop.aids.error_keys import compared_types, merge_types, missing_attribute, missing_keys
from nbagent.loop.aids.hints import execution_hint
from nbagent.sandbox import ExecutionError, LocalPythonExecutor

COLUMNS = "a, b, region"


@pytest.fixture(scope="module")
def run_failing():
    """Run `code` in a real executor over `df` (columns a, b, region); the `ExecutionError` it raises and the namespace."""
    namespace = {"df": pd.DataFrame({"a": [1, 2], "b": [3.0, 4.0], "region": ["x", "y"]}), "pd": pd, "np": np}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the local executor's notice
        executor = LocalPythonExecutor(additional_authorized_imports=["pandas", "numpy"], namespace=namespace)
    executor.send_tools({})

    def run(code: str) -> tuple[ExecutionError, dict]:
        with pytest.raises(ExecutionError) as failure:
            executor(code)
        return failure.value, namespace

    return run


@pytest.mark.parametrize(
    "code",
    [
        'df["value"]',
        'df.loc[:, "value"]',
        'df[["a", "value"]]',
        'df.groupby("value").sum()',
        'df.sort_values("value")',
        'df.groupby("region")["value"].sum()',  # pandas 3: "Column not found: value"
        'df.groupby("region")[["a", "value"]].sum()',  # "Columns not found: 'value'"
        'df.groupby("region").agg({"value": "sum"})',  # "Label(s) ['value'] do not exist"
        'df.drop(columns=["value"])',
        'df.set_index("value")',
        'df.pivot(index="value", columns="a")',
        'df.dropna(subset=["value"])',
        'df.query("value > 1")',
        "df.value",
    ],
)
def test_a_missing_column_is_named_with_the_real_columns(run_failing, code):
    failure, namespace = run_failing(code)
    hint = execution_hint(failure, code, namespace, "task")
    assert f"`df` has the columns: {COLUMNS}." in hint
    assert "There is no column 'value' in `df`" in hint
    assert "not found" not in hint.split("There is")[1] and "Column(s)" not in hint  # no message text as a column


def test_several_missing_columns_and_the_nearest_one(run_failing):
    failure, namespace = run_failing('df[["x", "y"]]')  # "None of [Index(['x', 'y'], dtype=…)] are in the [columns]"
    assert "There are no columns 'x', 'y' in `df`" in execution_hint(failure, 'df[["x", "y"]]', namespace, "t")
    failure, namespace = run_failing('df["regoin"]')
    assert "(did you mean 'region'?)" in execution_hint(failure, 'df["regoin"]', namespace, "t")


@pytest.mark.parametrize("code", ["df.loc[5]", "df.loc[np.int64(5)]", 'df["a"][np.float64(2.5)]'])
def test_a_number_looked_up_as_a_row_is_a_row_label_not_a_column(run_failing, code):
    failure, namespace = run_failing(code)  # numpy 2 writes the key as np.int64(5) / np.float64(2.5)
    hint = execution_hint(failure, code, namespace, "t")
    assert "is not a row label" in hint and "rows are labelled 0 to 1" in hint
    assert "np." not in hint and "no column" not in hint


def test_numpy_axis_and_shape_errors_are_said_in_terms_of_the_data(run_failing):
    failure, namespace = run_failing("np.sum(np.ones(3), axis=2)")  # numpy 2: AxisError
    hint = execution_hint(failure, "np.sum(np.ones(3), axis=2)", namespace, "t")
    assert "1 dimension, so axis=2 does not exist" in hint
    failure, namespace = run_failing("np.ones((2, 3)) + np.ones((4, 5))")
    hint = execution_hint(failure, "", namespace, "t")
    assert "shapes (2, 3) and (4, 5) cannot be combined element by element" in hint
    failure, namespace = run_failing('df["c"] = [1, 2, 3]')
    hint = execution_hint(failure, 'df["c"] = [1, 2, 3]', namespace, "t")
    assert "3 values were given for 2 rows" in hint and "`df` has 2 rows" in hint
    failure, namespace = run_failing("np.ones((2, 3)).reshape(4, 4)")
    assert "6 values cannot be laid out as (4, 4)" in execution_hint(failure, "", namespace, "t")


def key_error_line(action) -> str:
    """The executor's last line for a KeyError raised by `action` in pandas itself: "KeyError: <its text>"."""
    with pytest.raises(KeyError) as raised:
        action()
    return f"KeyError: {raised.value}"


def test_missing_keys_reads_each_wording_pandas_raises():
    df = pd.DataFrame({"a": [1], "region": ["x"]})
    cases = {
        "value": lambda: df["value"],
        "group column": lambda: df.groupby("region")["value"],
        "group columns": lambda: df.groupby("region")[["a", "value"]],
        "agg": lambda: df.groupby("region").agg({"value": "sum"}),
        "list": lambda: df[["a", "value"]],
        "melt": lambda: df.melt(id_vars=["value"]),
        "set_index": lambda: df.set_index("value"),
    }
    for name, action in cases.items():
        assert missing_keys(key_error_line(action)) == ["value"], name
    assert missing_keys(key_error_line(lambda: df[["x", "y"]])) == ["x", "y"]
    assert missing_keys(key_error_line(lambda: df.loc[np.int64(7)])) == [7]


def error_text(action) -> str:
    """The executor's last line for any error `action` raises in pandas itself: "<Type>: <its text>"."""
    with pytest.raises(Exception) as raised:
        action()
    return f"{raised.type.__name__}: {raised.value}"


def test_the_keys_a_hint_reads_are_read_from_each_wording():
    daily = pd.DataFrame({"units": [1]}, index=pd.to_datetime(["2024-04-18"]))
    date = datetime.date(2024, 4, 19)
    assert missing_keys(key_error_line(lambda: daily.loc[date])) == [date]  # "KeyError: datetime.date(2024, 4, 19)"
    assert missing_keys(key_error_line(lambda: daily.loc[pd.Timestamp("2024-04-21")])) == [pd.Timestamp("2024-04-21")]
    frame = pd.DataFrame({"id": [1, 2], "total": [1.5, 2.5]})
    assert missing_attribute(error_text(lambda: frame.summ())) == ("DataFrame", "summ")
    assert missing_attribute(error_text(lambda: frame.groupby("id").summ())) == ("DataFrameGroupBy", "summ")
    text = pd.DataFrame({"id": ["001", "002"]})
    left, right, key = merge_types(error_text(lambda: frame.merge(text, on="id")))
    assert (left, key) == ("int64", "id") and right in ("str", "object")
    assert compared_types(error_text(lambda: text[text["id"] > 1])) == ("str", "int")
    assert compared_types(error_text(lambda: frame[frame["total"] > "1"])) == ("float64", "str")
