"""What a pandas or numpy error names: the missing keys of a `KeyError`, the shapes of a numpy error.

pandas 3 words a missing column in many ways — `'value'`, `"['value'] not in index"`, `'Column not found:
value'`, `"Columns not found: 'value'"`, `"Label(s) ['value'] do not exist"`, `"None of [Index(['x', 'y'],
dtype='str')] are in the [columns]"`, `"The following 'index' labels are not columns of the DataFrame:
['value']"` — and numpy 2 writes scalars as `np.int64(5)`. Reading the quoted words of such a message
took "Column not found: value" for a column name; these functions read the message by its form instead.
A row label that is a date is written `datetime.date(2024, 4, 19)` or `Timestamp('2024-04-19 00:00:00')`;
a merge on keys of two types, "You are trying to merge on int64 and str columns for key 'id'"; a comparison
of text with a number, "'>' not supported between instances of 'str' and 'int'" or "Invalid comparison
between dtype=float64 and str".
"""

from __future__ import annotations

import ast
import datetime
import re
from typing import Any

__all__ = [
    "error_line",
    "missing_keys",
    "is_label_key",
    "missing_attribute",
    "merge_types",
    "compared_types",
    "AxisProblem",
    "axis_problem",
    "shape_problem",
]

_NUMPY_SCALAR = re.compile(r"^np\.(?:int|uint|float|complex|str_|bool)\w*\((.*)\)$")
_AFTER_COLON = re.compile(r"^(?:Columns? not found|Column\(s\)|Label\(s\))\s*:?\s*(.+?)(?:\s+do not exist)?$")
_LIST = re.compile(r"\[([^\[\]]*)\]")
_QUOTED_ITEM = re.compile(r"""'([^']*)'|"([^"]*)\"""")
_AXIS = re.compile(r"axis (-?\d+) is out of bounds for array of dimension (\d+)")
_BROADCAST = re.compile(r"operands could not be broadcast together with (?:remapped )?shapes ((?:\([\d, ]*\)\s*)+)")
_NOT_ALIGNED = re.compile(r"shapes (\([\d, ]*\)) and (\([\d, ]*\)) not aligned")
_RESHAPE = re.compile(r"cannot reshape array of size (\d+) into shape (\([\d, ]*\))")
_LENGTHS = re.compile(r"Length of values \((\d+)\) does not match length of index \((\d+)\)")
_DATE = re.compile(r"^datetime\.(date|datetime)\(([\d, ]+)\)$")
_TIMESTAMP = re.compile(r"^Timestamp\('([^']+)'(?:, tz='[^']*')?\)$")
_NO_ATTRIBUTE = re.compile(r"'([\w.]+)' object has no attribute '(\w+)'")
_MERGE_TYPES = re.compile(r"trying to merge on (\S+) and (\S+) columns(?: for key '([^']*)')?")
_COMPARED = re.compile(
    r"not supported between instances of '(\w+)' and '(\w+)'|Invalid comparison between dtype=(\S+) and (\w+)"
)


def error_line(message: str, kind: str = "") -> str:
    """The last line of `message` that names the exception (`kind`, e.g. "KeyError", or any), else its last line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    pattern = re.compile(rf"^{re.escape(kind)}:" if kind else r"^[A-Za-z_][\w.]*(Error|Exception):")
    named = [line for line in lines if pattern.match(line)]
    return (named or lines or [""])[-1]


def missing_keys(message: str) -> list[Any]:
    """The keys a `KeyError` in `message` says are missing (column names as str, row labels as numbers)."""
    line = error_line(message, "KeyError")
    if not line.startswith("KeyError:"):
        return []
    text = line.partition(":")[2].strip()
    value = _literal(text)
    if isinstance(value, (list, tuple)):
        return list(value)
    if not isinstance(value, str):
        return [] if value is None else [value]
    return _keys_in_text(value)


def _keys_in_text(text: str) -> list[Any]:
    """The keys of pandas' wording of a missing key (the text inside the KeyError's quotes)."""
    listed = [_literal(f"[{inner}]") for inner in _LIST.findall(text)]
    listed = [items for items in listed if isinstance(items, list) and items]
    if listed:  # "['value'] not in index", "None of [Index(['x'], dtype='str')] are …", "… DataFrame: ['value']"
        return listed[0]
    after = _AFTER_COLON.match(text)
    if after:  # "Column not found: value", "Columns not found: 'a', 'b'"
        quoted = [single or double for single, double in _QUOTED_ITEM.findall(after.group(1))]
        return quoted or [after.group(1).strip()]
    return [text]


def _literal(text: str) -> Any:
    """`text` as a Python literal (numpy 2's `np.int64(5)` as 5, a date's repr as the date); a text that is none, as itself."""
    scalar = _NUMPY_SCALAR.match(text)
    if scalar:
        text = scalar.group(1)
    date = _date(text)
    if date is not None:
        return date
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _date(text: str) -> Any:
    """`datetime.date(2024, 4, 19)`, `datetime.datetime(…)` or `Timestamp('2024-04-19 00:00:00')` as that value, else None."""
    found = _DATE.match(text)
    try:
        if found:
            parts = [int(part) for part in found.group(2).split(",") if part.strip()]
            return (datetime.date if found.group(1) == "date" else datetime.datetime)(*parts)
        found = _TIMESTAMP.match(text)
        if found:
            import pandas as pd  # a pandas error: pandas is loaded

            return pd.Timestamp(found.group(1))
    except (ValueError, TypeError, ImportError):
        return None
    return None


def is_label_key(key: Any) -> bool:
    """True for a key that is a row label (a number), not a column name."""
    return isinstance(key, (int, float)) and not isinstance(key, bool)


def missing_attribute(message: str) -> tuple[str, str] | None:
    """(the type, the attribute) of "'DataFrame' object has no attribute 'summ'" in `message`, or None."""
    found = _NO_ATTRIBUTE.search(error_line(message))
    return (found.group(1), found.group(2)) if found else None


def merge_types(message: str) -> tuple[str, str, str] | None:
    """(the left key's dtype, the right key's, the left key's name or "") of a merge on keys of two types, or None."""
    found = _MERGE_TYPES.search(message)
    return (found.group(1), found.group(2), found.group(3) or "") if found else None


def compared_types(message: str) -> tuple[str, str] | None:
    """The two types a failed comparison names ("str", "int"; "float64", "str"), or None."""
    found = _COMPARED.search(message)
    if not found:
        return None
    return (found.group(1), found.group(2)) if found.group(1) else (found.group(3), found.group(4))


class AxisProblem:
    """numpy's `AxisError`: the axis asked for and the dimensions the array has."""

    def __init__(self, axis: int, ndim: int) -> None:
        self.axis, self.ndim = axis, ndim


def axis_problem(message: str) -> AxisProblem | None:
    found = _AXIS.search(message)
    return AxisProblem(int(found.group(1)), int(found.group(2))) if found else None


def shape_problem(message: str) -> str:
    """One sentence on a numpy shape mismatch in `message` (broadcasting, dot, reshape, a column's length), or ""."""
    if found := _BROADCAST.search(message):
        shapes = re.findall(r"\([\d, ]*\)", found.group(1))
        return (
            f"arrays of shapes {' and '.join(_shape(s) for s in shapes)} cannot be combined element by element: "
            "give them the same length (select matching rows, or join two tables on a key with merge)"
        )
    if found := _NOT_ALIGNED.search(message):
        return (
            f"a matrix product needs the inner sizes to match, and {_shape(found.group(1))} and "
            f"{_shape(found.group(2))} do not: for element-wise products use *, not dot or @"
        )
    if found := _RESHAPE.search(message):
        return f"{found.group(1)} values cannot be laid out as {_shape(found.group(2))}: the sizes must multiply out"
    if found := _LENGTHS.search(message):
        return (
            f"a new column needs one value per row: {found.group(1)} values were given for {found.group(2)} rows "
            "(compute it from the frame's own columns)"
        )
    return ""


def _shape(text: str) -> str:
    sizes = [part.strip() for part in text.strip("()").split(",") if part.strip()]
    return "(" + ", ".join(sizes) + ("," if len(sizes) == 1 else "") + ")"
