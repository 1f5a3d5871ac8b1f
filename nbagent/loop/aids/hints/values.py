"""Values, said: what a column or an index holds (numbers, dates, text), a few values written as code.

A hint that names a value writes it as the model would (`pd.Timestamp('2024-04-19')`, 17) and compares
values written with another type in one form (17, 17.0, '17' and '017' alike), so a key held as a number
on one side and as text on the other is seen as the same key.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

__all__ = [
    "values_kind",
    "plain",
    "as_code",
    "first_values",
    "examples",
    "one_form",
    "type_of",
    "as_number",
    "all_whole_numbers",
    "all_numbers",
    "NUMBER",
    "SCANNED",
    "DISTINCT",
    "EXAMPLES",
]


_WHOLE_NUMBER = re.compile(r"[+-]?\d+(?:\.0*)?")


NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")


SCANNED = 50_000  # the labels (and a column's values) a hint reads at most


DISTINCT = 2_000  # the distinct values of a column a hint compares at most


EXAMPLES = 3


def values_kind(series: Any) -> str:
    """ "number", "date", "text" or "" for what a Series (or an index) holds."""
    dtype = series.dtype
    if dtype.kind in "iuf":
        return "number"
    if dtype.kind == "M":
        return "date"
    if dtype.kind in "OTU" or str(dtype) in ("str", "string"):
        values = [value for value in first_values(series, 200) if value == value and value is not None]
        if values and all(isinstance(value, str) for value in values):
            return "text"
        if values and all(isinstance(value, datetime.date) for value in values):
            return "date"
    return ""


def plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def as_code(value: Any) -> str:
    """A value as code: `pd.Timestamp('2024-04-19')` for a Timestamp, the repr of other values."""
    value = plain(value)
    if type(value).__name__ == "Timestamp":
        text = value.isoformat()
        return f"pd.Timestamp({(text[:10] if text.endswith('T00:00:00') else text)!r})"
    return repr(value)


def first_values(values: Any, count: int) -> list[Any]:
    """The first values of a Series (by position) or an index."""
    return list(values.iloc[:count] if hasattr(values, "iloc") else values[:count])


def examples(values: Any, count: int = EXAMPLES) -> str:
    """A few distinct values of a Series or an index, as code."""
    seen = list(dict.fromkeys(plain(value) for value in first_values(values, 200) if value == value))[:count]
    return ", ".join(as_code(value) for value in seen)


def one_form(value: Any) -> str:
    """One form for a value written with another type: 17, 17.0, '17' and '017' as "17"; a date as "2024-04-19"."""
    value = plain(value)
    if isinstance(value, datetime.date):
        text = value.isoformat()
        return text[:10] if text[10:].strip("T0:.") == "" else text
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, (int, float)):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    text = " ".join(str(value).split())
    if _WHOLE_NUMBER.fullmatch(text):
        return str(int(text.split(".")[0]))
    date = re.fullmatch(r"(\d{4}-\d\d-\d\d)(?:[ T]00:00(?::00)?)?", text)
    return date.group(1) if date else text.casefold()


def type_of(value: Any) -> str:
    value = plain(value)
    if isinstance(value, str):
        return "text"
    if type(value).__name__ == "Timestamp":
        return "a Timestamp"
    if isinstance(value, datetime.datetime):
        return "a datetime.datetime"
    if isinstance(value, datetime.date):
        return "a datetime.date"
    return "a number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def as_number(text: str) -> str:
    """A number written as text ('017', '2.50') as the number's code (17, 2.5)."""
    value = float(text)
    return str(int(value)) if value.is_integer() else repr(value)


def all_whole_numbers(series: Any) -> bool:
    values = [str(value).strip() for value in first_values(series.dropna(), SCANNED)]
    return bool(values) and all(_WHOLE_NUMBER.fullmatch(value) for value in values)


def all_numbers(series: Any) -> bool:
    values = [str(value).strip() for value in first_values(series.dropna(), SCANNED)]
    return bool(values) and all(NUMBER.fullmatch(value) for value in values)
