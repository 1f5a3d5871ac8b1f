"""A row label missed in an index (`.loc[label]`, `s[label]`): not a missing column.

The hint says the index's kind and a few of its labels, the label in another type if it is there (a
Timestamp for a date, 17 for '17'), else the column that holds the value, to find the row by that column.
"""

from __future__ import annotations

import ast
from typing import Any

from ..data_card import value_kind
from .code_names import UNKNOWN, known_value, series_of
from .failure import Failure, parsed, segment
from .values import DISTINCT, EXAMPLES, SCANNED, as_code, examples, first_values, one_form, plain, type_of, values_kind

__all__ = ["row_lookup", "row_label_hint"]


def row_lookup(found: Failure, keys: list[Any]) -> tuple[Any, str, Any] | None:
    """(the missed label, the code of what was looked up, its frame or Series or None), or None.

    `x.loc[row]` only looks up rows; in `x.loc[row, column]` the key the error names tells which part missed.
    `s[label]` of a Series looks up a row too.
    """
    text, namespace = found.statement.strip(), found.namespace
    tree = parsed(text)
    for node in ast.walk(tree) if tree else ():
        if not isinstance(node, ast.Subscript):
            continue
        base, parts = node.value, node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(base, ast.Attribute) and base.attr in ("loc", "at"):
            looked_up, row, column = base.value, parts[0], parts[1] if len(parts) > 1 else None
        elif series_of(base, namespace) is not None:
            looked_up, row, column = base, node.slice, None
        else:
            continue
        label = _missed_label(row, column, keys, namespace)
        if label is not UNKNOWN:
            return label, segment(text, looked_up), _looked_up_value(looked_up, namespace)
    return None


def _missed_label(row: ast.AST, column: ast.AST | None, keys: list[Any], namespace: dict[str, Any]) -> Any:
    """The row label the error names as missing, when it is `row`'s (not `column`'s); else `UNKNOWN`."""
    if isinstance(row, (ast.Slice, ast.Compare, ast.BoolOp)):
        return UNKNOWN
    if column is not None and any(_same(known_value(column, namespace), key) for key in keys):
        return UNKNOWN  # the column part missed
    value = known_value(row, namespace)
    if value is UNKNOWN:  # computed (a call, an attribute): the key is the row's unless it is a text column name
        return keys[0] if column is None or not isinstance(keys[0], str) else UNKNOWN
    values = value if isinstance(value, (list, tuple)) else [value]
    for key in keys:
        for candidate in values:
            if _same(candidate, key):
                return candidate
    return UNKNOWN


def _same(value: Any, key: Any) -> bool:
    if value is UNKNOWN:
        return False
    try:
        if type(value) is type(key) and bool(value == key):
            return True
    except (TypeError, ValueError):
        pass
    return repr(plain(value)) == repr(plain(key)) or (isinstance(key, str) and key == repr(value))


def _looked_up_value(node: ast.AST, namespace: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) in ("DataFrame", "Series") else None
    return series_of(node, namespace)


def row_label_hint(key: Any, name: str, looked_up: Any) -> str:
    """A label missed in an index: the index's kind and a few labels, the label in another type if it is there,
    else the column that holds the value (to find the row by that column)."""
    where = f" of `{name}`" if name else ""
    head = (
        f"Hint: {as_code(key)} is not a row label{where}; .loc[] looks rows up by label in the index, not in a column."
    )
    if looked_up is None:
        return (
            f"{head} .iloc[] looks rows up by position; to get the rows where a column has a value, "
            "write df[df['column'] == value]."
        )
    index = looked_up.index
    if type(index).__name__ == "RangeIndex":
        labels = f"`{name}`'s rows are labelled {index.start} to {index.stop - 1} (row numbers)."
    else:
        named = f" {index.name!r}" if index.name is not None else ""
        span = (
            f", from {as_code(index[0])} to {as_code(index[-1])}"
            if len(index) > EXAMPLES and index.is_monotonic_increasing
            else ""
        )
        labels = f"Its index{named} holds {_index_kind(index)} such as {examples(index)}{span}."
    other = _label_in_other_type(key, index)
    if other is not UNKNOWN:
        return f"{head} {labels}\nThe label is there as {as_code(other)} ({type_of(other)}, not {type_of(key)}): look it up as {as_code(other)}."
    column = _column_holding(looked_up, key) if value_kind(looked_up) == "DataFrame" else None
    if column is not None:
        title, value = column
        return f"{head} {labels}\nThe value is in the column {title!r}: write {name}[{name}[{title!r}] == {as_code(value)}]."
    if value_kind(looked_up) == "Series":
        return f"{head} {labels}\nTo select by value instead, write {name}[{name} == value]; .iloc[] picks by position."
    return f"{head} {labels}\nTo find a row by a column's value, write {name}[{name}['column'] == value]."


def _index_kind(index: Any) -> str:
    kind = values_kind(index)
    return {"number": f"numbers ({index.dtype})", "date": f"dates ({index.dtype})", "text": "text labels"}.get(
        kind, f"labels ({index.dtype})"
    )


def _label_in_other_type(key: Any, index: Any) -> Any:
    """The label of `index` that is `key` written with another type (a Timestamp for a date, 17 for '17'), else `UNKNOWN`."""
    wanted = one_form(key)
    for label in first_values(index, SCANNED):
        if one_form(label) == wanted:
            return plain(label)
    return UNKNOWN


def _column_holding(frame: Any, key: Any) -> tuple[str, Any] | None:
    """(the column, its value) of the first column of `frame` that holds `key` (in any type), else None."""
    wanted = one_form(key)
    head = frame.iloc[:SCANNED]
    for title in list(frame.columns)[:40]:
        for value in head[title].dropna().unique()[:DISTINCT]:
            if one_form(value) == wanted:
                return str(title), plain(value)
    return None
