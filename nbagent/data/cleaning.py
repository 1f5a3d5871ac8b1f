"""Cleaning helpers: numbers, dates, labels and gaps read from text as people's notebooks hold it.

    from nbagent.data import to_number, to_dates, clean_labels, is_missing

    to_number(orders["amount"])      # '$1,234.50' -> 1234.5, '-$18.46' and '(18.46)' -> -18.46, '12%' -> 12.0
    to_dates(orders["order_date"])   # '2024-03-05', '03/07/2024', 'March 9, 2024' -> datetime64 (format="mixed")
    clean_labels(orders["region"])   # 'north ', ' NORTH', 'North' -> 'North' (the most common spelling)
    is_missing(orders["amount"])     # None, NaN, NaT and '' or '   ' -> True

Each takes a Series (or a list or array) and returns a new Series with the same index and name; blanks become
missing (NaN or NaT) and the input is never changed. Text that cannot be read as a number or a date becomes missing
too, silently, as with pandas' `errors="coerce"`: count `result.isna()` against `is_missing(values)` to see how many.

Agent code can call them as well: the sandbox shows agent code only the functions of modules it was granted, and
nbagent is never granted (it is the host's library), while an object the notebook holds is shown like any other
value. So each helper is a `Helper`, a thin object around its function, called, documented and pickled like the
function; a call runs plain pandas where the agent's code runs (the confined worker), never in the kernel.

`looks_like_number` and `date_format` tell what a single text value holds: the data card uses them to say which
columns these helpers would read.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Helper", "to_number", "to_dates", "clean_labels", "is_missing", "looks_like_number", "date_format"]

_NUMBER = re.compile(
    r"""\s*(?P<open>\()?\s*
    (?P<sign>[-+\u2212])?\s*(?P<currency>[$€£¥₹])?\s*(?P<sign2>[-+\u2212])?\s*
    (?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)(?P<exponent>[eE][-+]?\d+)?
    \s*(?P<percent>%)?\s*(?P<close>\))?\s*""",
    re.VERBOSE,
)
_WHOLE_NUMBER = re.compile(rf"\A(?:{_NUMBER.pattern})\Z", re.VERBOSE)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_TIME = r"(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[ap]m)?(?:z|[+-]\d{2}:?\d{2})?)?"
#: date formats as people type them, each named by an example
_DATE_FORMATS = [
    ("2024-03-05", re.compile(rf"\d{{4}}-\d{{1,2}}-\d{{1,2}}{_TIME}", re.IGNORECASE)),
    ("2024/03/05", re.compile(rf"\d{{4}}/\d{{1,2}}/\d{{1,2}}{_TIME}", re.IGNORECASE)),
    ("03/05/2024", re.compile(rf"\d{{1,2}}/\d{{1,2}}/\d{{2}}(?:\d{{2}})?{_TIME}", re.IGNORECASE)),
    ("05.03.2024", re.compile(rf"\d{{1,2}}\.\d{{1,2}}\.\d{{4}}{_TIME}", re.IGNORECASE)),
    ("05-03-2024", re.compile(rf"\d{{1,2}}-\d{{1,2}}-\d{{4}}{_TIME}", re.IGNORECASE)),
    ("March 5, 2024", re.compile(rf"{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}{_TIME}", re.IGNORECASE)),
    ("5 March 2024", re.compile(rf"\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}{_TIME}", re.IGNORECASE)),
]


class Helper:
    """A cleaning function as an object agent code can call (see the module's docstring); it reads like the function.

    Pickled by its name in this module, so a helper sent to the agent's worker is the worker's own copy of it.
    """

    def __init__(self, function: Callable[..., Any]) -> None:
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def __repr__(self) -> str:
        parameters = inspect.signature(self.__wrapped__).parameters.values()
        return f"<cleaning helper {self.__name__}({', '.join(str(p.replace(annotation=p.empty)) for p in parameters)})>"

    def __reduce__(self) -> str:
        return self.__name__


def _series(values: Any) -> pd.Series:
    if isinstance(values, pd.Series):
        return values
    if isinstance(values, pd.DataFrame):
        raise TypeError("pass one column (a Series), e.g. frame['price'], not the whole DataFrame")
    return pd.Series(list(values) if not isinstance(values, np.ndarray) else values, dtype=object)


def _text_cells(series: pd.Series) -> np.ndarray:
    """Where `series` holds a str (a bool per row)."""
    values = series.to_numpy(dtype=object)
    return np.fromiter((isinstance(v, str) for v in values), dtype=bool, count=len(values))


def _blank_text(series: pd.Series, text: np.ndarray) -> np.ndarray:
    blank = np.zeros(len(series), dtype=bool)
    if text.any():
        blank[text] = [not value.strip() for value in series.to_numpy(dtype=object)[text]]
    return blank


@Helper
def is_missing(values: Any) -> pd.Series | pd.DataFrame:
    """True where a value is missing: None, NaN, NaT, pd.NA, or text that is empty or only spaces ('', '  ').

    `isna()` misses the blank text; `is_missing(frame['col']).sum()` counts every gap. A DataFrame gives a frame of
    booleans (`is_missing(frame).sum()`: the gaps per column).
    """
    if isinstance(values, pd.DataFrame):
        return values.apply(is_missing) if len(values.columns) else values.isna()
    series = _series(values)
    missing = series.isna().to_numpy(dtype=bool)
    return pd.Series(missing | _blank_text(series, _text_cells(series)), index=series.index, name=series.name)


@Helper
def to_number(values: Any) -> pd.Series:
    """Numbers written as text, as floats: '$1,234.50' -> 1234.5, '-$18.46' and '(18.46)' -> -18.46, '1,234' -> 1234.0.

    A currency sign ($ € £ ¥ ₹) and thousands commas are dropped; parentheses or a minus sign make it negative; a
    percent sign is dropped and the number kept as written ('12%' -> 12.0: divide by 100 for a fraction). Numbers
    already numbers stay as they are. Blanks, and text that is not a number ('n/a'), become NaN. Commas are read as
    thousands separators only in groups of three ('1,5' is not a number).
    """
    series = _series(values)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(float)
    if pd.api.types.is_numeric_dtype(series.dtype):
        return series.astype(float)
    result = np.full(len(series), np.nan)
    text = _text_cells(series)
    if text.any():
        result[text] = _parse_numbers(pd.Series(series.to_numpy(dtype=object)[text], dtype=object))
    others = ~text & ~series.isna().to_numpy(dtype=bool)
    if others.any():
        result[others] = pd.to_numeric(pd.Series(series.to_numpy(dtype=object)[others]), errors="coerce")
    return pd.Series(result, index=series.index, name=series.name)


def _parse_numbers(text: pd.Series) -> np.ndarray:
    found = text.str.extract(_WHOLE_NUMBER)  # no match: every part missing
    balanced = found["open"].isna() == found["close"].isna()
    digits = found["digits"].str.replace(",", "", regex=False) + found["exponent"].fillna("")
    numbers = pd.to_numeric(digits.where(balanced), errors="coerce").to_numpy(dtype=float)
    negative = (
        found["sign"].isin(["-", "\u2212"]) | found["sign2"].isin(["-", "\u2212"]) | found["open"].notna()
    ).to_numpy(dtype=bool)
    return np.where(negative, -numbers, numbers)


@Helper
def to_dates(values: Any, dayfirst: bool = False) -> pd.Series:
    """Dates written as text in any mix of formats, as datetime64: '2024-03-05', '03/07/2024', 'March 9, 2024'.

    pandas' `to_datetime(..., format="mixed")` reads each value on its own; a slash date is month/day/year unless
    `dayfirst=True`. Blanks, and text that is not a date, become NaT. Dates already dates stay as they are; text
    with time zones comes back in UTC.
    """
    series = _series(values)
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return series.copy()
    cells = series.to_numpy(dtype=object).copy()
    blank = is_missing(series).to_numpy(dtype=bool)
    cells[blank] = None
    numbers = np.fromiter(
        (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in cells),
        dtype=bool,
        count=len(cells),
    )
    cells[numbers & ~blank] = [str(v) for v in cells[numbers & ~blank]]  # 20240305 is read as its text
    text = pd.Series(cells, index=series.index, name=series.name, dtype=object)
    try:
        return pd.to_datetime(text, format="mixed", errors="coerce", dayfirst=dayfirst)
    except (ValueError, TypeError):  # offsets that differ (pandas asks for utc=True)
        return pd.to_datetime(text, format="mixed", errors="coerce", dayfirst=dayfirst, utc=True)


@Helper
def clean_labels(values: Any) -> pd.Series:
    """Labels written several ways as one: 'North', 'north ', ' NORTH' -> 'North'.

    Spaces around a label are dropped and runs of spaces inside it made one; labels that differ only in case are
    the same label, written in its most common spelling (the first seen on a tie). Blanks become NaN; values that
    are not text stay as they are.
    """
    series = _series(values)
    text = _text_cells(series)
    cells = series.to_numpy(dtype=object).copy()
    tidy = {value: " ".join(value.split()) for value in set(cells[text])}
    counts = Counter(tidy[value] for value in cells[text])
    spelling: dict[str, str] = {}
    for label, _ in sorted(counts.items(), key=lambda item: -item[1]):  # a stable sort: ties stay first seen
        spelling.setdefault(label.casefold(), label)
    cells[text] = [spelling[tidy[value].casefold()] if tidy[value] else np.nan for value in cells[text]]
    return pd.Series(cells, index=series.index, name=series.name, dtype=object)


def looks_like_number(text: str) -> bool:
    """Would `to_number` read this text as a number? ('$1,234.50', '-18.46', '(18.46)', '12%': yes; 'n/a': no)."""
    match = _NUMBER.fullmatch(text)
    return match is not None and (match["open"] is None) == (match["close"] is None)


def date_format(text: str) -> str | None:
    """The format of a date written as text, named by an example ('2024-03-05', '03/05/2024', 'March 5, 2024'), or
    None when it is no date in a format people type."""
    text = text.strip()
    return next((name for name, pattern in _DATE_FORMATS if pattern.fullmatch(text)), None)
