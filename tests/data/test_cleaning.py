"""The cleaning helpers (nbagent/data/cleaning.py): numbers, dates, labels and gaps read from messy text."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pandas as pd
import pytest

from nbagent.data import clean_labels, is_missing, to_dates, to_number
from nbagent.data.cleaning import Helper, date_format, looks_like_number


def test_money_thousands_percent_and_negatives_become_floats():
    text = pd.Series(["$1,234.50", "-$18.46", "(18.46)", "1,234", "12%", "€ 7", "$-3.5", "−2", ".5", "1e3"], name="p")
    assert to_number(text).tolist() == [1234.5, -18.46, -18.46, 1234.0, 12.0, 7.0, -3.5, -2.0, 0.5, 1000.0]


def test_blanks_and_text_that_is_no_number_become_nan():
    values = pd.Series(["", "   ", None, np.nan, "n/a", "1,5", "(5", "12 apples", "$3"], dtype=object)
    result = to_number(values)
    assert result.isna().tolist() == [True] * 8 + [False]
    assert result.iloc[-1] == 3.0


def test_numbers_stay_numbers_with_the_index_and_the_name():
    prices = pd.Series([3, 4, 5], index=[10, 20, 20], name="price")
    result = to_number(prices)
    assert result.dtype == float and result.tolist() == [3.0, 4.0, 5.0]
    assert result.index.tolist() == [10, 20, 20] and result.name == "price"
    mixed = pd.Series([1.5, "$2", 3, None, [1]], index=list("abcde"), dtype=object)
    assert to_number(mixed).tolist()[:3] == [1.5, 2.0, 3.0] and to_number(mixed).iloc[3:].isna().all()


def test_a_list_is_read_too_and_a_frame_is_refused_with_a_hint():
    assert to_number(["$1", "2"]).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="one column"):
        to_number(pd.DataFrame({"a": ["1"]}))


def test_dates_in_mixed_formats_become_datetimes():
    text = pd.Series(["2024-03-05", "03/07/2024", "March 9, 2024", "9 March 2024", "", None, "soon"], dtype=object)
    result = to_dates(text)
    assert pd.api.types.is_datetime64_any_dtype(result)
    assert [d.strftime("%Y-%m-%d") for d in result.iloc[:4]] == ["2024-03-05", "2024-03-07", "2024-03-09", "2024-03-09"]
    assert result.iloc[4:].isna().all()


def test_dates_day_first_when_asked_and_dates_already_dates_and_numbers_as_their_text():
    assert to_dates(pd.Series(["03/07/2024"]), dayfirst=True).iloc[0] == pd.Timestamp("2024-07-03")
    days = pd.Series(pd.date_range("2024-01-01", periods=3))
    assert to_dates(days).equals(days)
    assert to_dates(pd.Series([20240305, "2024-03-06"], dtype=object)).tolist() == [
        pd.Timestamp("2024-03-05"),
        pd.Timestamp("2024-03-06"),
    ]


def test_labels_are_written_in_their_most_common_spelling():
    labels = pd.Series(
        ["North", "north ", " NORTH", "North", "south", "South ", "  new   york", "New York", "", None, 7]
    )
    result = clean_labels(labels)
    assert result.iloc[:8].tolist() == ["North"] * 4 + ["south", "south", "new york", "new york"]  # ties: first seen
    assert pd.isna(result.iloc[8]) and result.iloc[9] is None and result.iloc[10] == 7


def test_missing_counts_none_nan_nat_and_blank_text():
    values = pd.Series([None, np.nan, pd.NaT, "", "  ", "x", 0, False], dtype=object)
    assert is_missing(values).tolist() == [True] * 5 + [False] * 3
    frame = pd.DataFrame({"a": ["", "x", None], "b": [1.0, np.nan, 2.0]})
    assert is_missing(frame).sum().to_dict() == {"a": 2, "b": 1}


def test_the_input_is_never_changed():
    values = pd.Series(["$1", " North", "", None, "03/07/2024"], dtype=object)
    before = values.copy()
    for helper in (to_number, to_dates, clean_labels, is_missing):
        helper(values)
    pd.testing.assert_series_equal(values, before)


def test_a_helper_reads_like_its_function_and_pickles_to_itself():
    assert isinstance(to_number, Helper) and not inspect.isfunction(to_number)  # what agent code may see
    assert to_number.__name__ == "to_number" and "'$1,234.50'" in to_number.__doc__
    assert list(inspect.signature(to_dates).parameters) == ["values", "dayfirst"]
    assert repr(to_dates) == "<cleaning helper to_dates(values, dayfirst=False)>"
    assert pickle.loads(pickle.dumps(clean_labels)) is clean_labels


def test_what_a_single_value_holds():
    assert [looks_like_number(v) for v in ["$1,234.50", "(18.46)", "12%", "n/a", "(5", "1,5"]] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    assert [date_format(v) for v in ["2024-03-05", "03/07/2024", "March 9, 2024", "Mar. 9 2024", "2024", "x"]] == [
        "2024-03-05",
        "03/05/2024",
        "March 5, 2024",
        "March 5, 2024",
        None,
        None,
    ]
