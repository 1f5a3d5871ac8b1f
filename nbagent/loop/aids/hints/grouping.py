"""Grouping mistakes: a groupby multiplied, a Series grouped by a column name, a whole table totalled.

`s.groupby("region")` of a Series looks for "region" in its index, so the hint gives the table's line;
a groupby's total of a whole table fails on its dates and text, so the hint picks the column first.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..code_checks import is_method_call, is_text
from ..data_card import frames_in, owner_frame, split_task, value_kind
from ..error_keys import missing_keys
from .code_names import after_call, column_of, frame_code, is_series_code, texts
from .failure import Failure, parsed, segment

__all__ = ["product_grouped", "series_grouped_by_name", "column_of_a_grouped_series", "grouped_total", "column_picked"]


_CANNOT_TOTAL = re.compile(r"does not support operation|agg function failed|[Cc]ould not convert|unsupported operand")
# what pandas says when a whole table's total reaches its text columns ('a' + 1, or a mean of text)
_TEXT_IN_TOTAL = re.compile(
    r"can only concatenate str|unsupported operand|[Cc]ould not convert|does not support|str doesn't define __round__"
)
_TOTALS = ("sum", "mean", "median")


def product_grouped(found: Failure) -> str:
    if ".groupby(" in found.source and re.search(r"\)\s*\[[^\]]+\]\s*[*/]", found.source):
        return (
            "Hint: a groupby(...) cannot be multiplied. Compute the product first, value = df['a'] * df['b'], "
            "then value.groupby(df['key']).sum()."
        )
    return ""


def series_grouped_by_name(found: Failure) -> str:
    """`s.groupby("region")` of a Series looks for "region" in its index: give the table's line instead.

    A frame's column (`sales["units"].groupby("product")`) is grouped by the table and picked after it
    (`sales.groupby("product")["units"].sum()`); another Series (a variable, a product of columns) by the
    table's column (`value.groupby(sales["product"])`).
    """
    text = found.statement.strip()
    tree = parsed(text)
    for node in ast.walk(tree) if tree else ():
        if not (is_method_call(node, "groupby") and node.args and texts(node.args[0])):
            continue
        columns, receiver = texts(node.args[0]), node.func.value
        rest = after_call(tree, node, text)
        hint = _grouped_series_hint(found, text, receiver, columns, segment(text, node.args[0]), rest)
        if hint:
            return hint
    return ""


def _grouped_series_hint(found: Failure, text: str, receiver: ast.AST, columns: list[str], by: str, rest: str) -> str:
    namespace, shown = found.namespace, segment(text, receiver)
    column = columns[0]
    if isinstance(receiver, ast.Name):
        series = namespace.get(receiver.id)
        if value_kind(series) != "Series":
            return ""
        return (
            f"Hint: `{shown}` is a Series, not a table, so it has no column {column!r}. Group it by the column of "
            f"the table it came from: {shown}.groupby({_owner_of(series, column, namespace)}[{column!r}])."
        )
    if not set(columns) & {str(key) for key in missing_keys(found.message)}:
        return ""  # a Series expression grouped by a name that is not what the error misses
    picked = _picked_from(receiver, text, namespace)
    if picked and all(name in map(str, picked[1].columns) for name in columns):
        table, _, picked_column = picked
        return (
            f"Hint: `{shown}` is one column (a Series), so it has no column {column!r} to group by. Group the "
            f"table, then pick the column: {table}.groupby({by})[{picked_column}]{rest}"
        )
    if not is_series_code(receiver, namespace):
        return ""
    owners = [name for name, frame in frames_in(shown, namespace) if column in map(str, frame.columns)]
    if not owners:
        return ""
    wrapped = f"({shown})" if isinstance(receiver, (ast.BinOp, ast.UnaryOp)) else shown
    return (
        f"Hint: `{shown}` is a Series, not a table, so it has no column {column!r}. Group it by the table's "
        f"column: {wrapped}.groupby({owners[0]}[{column!r}]){rest}"
    )


def column_of_a_grouped_series(found: Failure) -> str:
    """`amount.groupby(key)["amount"]` of a Series: it is already the one column, so there is none to pick.

    The messy run converted a column into a Series as it was told, then kept the frame's `["amount"]` after its
    groupby; told only the frame's columns, it decided the column was gone and wrote comments instead of code."""
    missing = {str(key) for key in missing_keys(found.message)}
    text = found.statement.strip()
    tree = parsed(text)
    for node in ast.walk(tree) if tree and missing else ():
        if not (isinstance(node, ast.Subscript) and is_text(node.slice) and node.slice.value in missing):
            continue
        grouped = node.value
        if not (is_method_call(grouped, "groupby") and is_series_code(grouped.func.value, found.namespace)):
            continue
        shown, picked = segment(text, grouped.func.value), segment(text, node)
        fixed = text.replace(picked, segment(text, grouped), 1)
        return (
            f"Hint: `{shown}` is already one column (a Series), so its groupby has no column "
            f"{node.slice.value!r} to pick: total it as it is: {fixed}"
        )
    return ""


def _picked_from(node: ast.AST, text: str, namespace: dict[str, Any]) -> tuple[str, Any, str] | None:
    """(the table's code, its frame, the column's code) of a column picked from a table: `sales["units"]`,
    `sales[mask]["units"]`, `sales.units`; else None."""
    if isinstance(node, ast.Subscript) and is_text(node.slice):
        frame = frame_code(node.value, namespace)
        return (segment(text, node.value), frame, segment(text, node.slice)) if frame is not None else None
    column = column_of(node, namespace) if isinstance(node, ast.Attribute) else None
    return (column[0], column[1], repr(column[2])) if column else None


def _owner_of(series: Any, column: str, namespace: dict[str, Any]) -> str:
    # no table with these rows has the column: do not send the model to another table
    return owner_frame(series, namespace, column) or "the_table"


def grouped_total(found: Failure) -> str:
    if not (".groupby(" in found.source and _CANNOT_TOTAL.search(found.message)):
        return ""
    fixed = column_picked(found.source, found.code, found.namespace, found.task)
    example = f"write `{fixed}`" if fixed else 'df.groupby("key")["column"].sum()'
    return (
        f"Hint: pick the column before the total: {example}; "
        "a whole table's other columns (dates, text) cannot be totalled."
    )


def table_total(found: Failure) -> str:
    """`frame.sum()` of a whole table that failed on its text columns: the column to total instead (the messy run
    totalled every column of its refunds, got "can only concatenate str", and was told nothing)."""
    if not _TEXT_IN_TOTAL.search(found.message):
        return ""
    line = parsed(found.source.strip())
    for node in ast.walk(line) if line is not None else ():
        if not (is_method_call(node, *_TOTALS) and isinstance(node.func.value, ast.Name)):
            continue
        name = node.func.value.id
        if value_kind(found.namespace.get(name)) != "DataFrame":
            continue
        column = _wanted_column(name, found.code, found.namespace, found.task)
        pick = f"{name}[{column!r}].{node.func.attr}()" if column else f"{name}['<the column>'].{node.func.attr}()"
        return (
            f"Hint: {name}.{node.func.attr}() totals every column of the table, its text columns too: pick the "
            f"column first, {pick}."
        )
    return ""


def column_picked(source: str, code: str, namespace: dict[str, Any], task: str) -> str:
    """`source` with a column picked between `frame.groupby(...)` and its total, or "" if none is clear.

    The column: the last one the code assigned to the frame (`sales["revenue"] = ...`), else the
    only numeric column of the frame the question names.
    """
    try:
        line = ast.parse(source.strip())
    except SyntaxError:
        return ""
    text = source.strip()
    picked_after = {  # `.sum()["units"]`: the column was picked after the total
        id(node.value): node for node in ast.walk(line) if isinstance(node, ast.Subscript) and is_text(node.slice)
    }
    for node in ast.walk(line):
        grouped = node.func.value if is_method_call(node, "sum", "mean", "max", "min", "median") else None
        if not (is_method_call(grouped, "groupby") and isinstance(grouped.func.value, ast.Name)):
            continue
        after = picked_after.get(id(node))
        column = after.slice.value if after else _wanted_column(grouped.func.value.id, code, namespace, task)
        if column:  # one line: offsets are the line's (the code before the cut is ASCII in practice)
            total = text[grouped.end_col_offset : node.end_col_offset]
            rest = text[(after or node).end_col_offset :]
            return f"{text[: grouped.end_col_offset]}[{column!r}]{total}{rest}"
    return ""


def _wanted_column(frame_name: str, code: str, namespace: dict[str, Any], task: str) -> str | None:
    assigned = re.findall(rf"^\s*{re.escape(frame_name)}\[['\"](\w+)['\"]\]\s*=[^=]", code, re.MULTILINE)
    if assigned:
        return assigned[-1]
    frame = namespace.get(frame_name)
    numeric = [str(c) for c, dtype in getattr(frame, "dtypes", {}).items() if getattr(dtype, "kind", "") in "iuf"]
    named = [column for column in numeric if re.search(rf"\b{re.escape(column)}\b", split_task(task)[0])]
    return named[0] if len(named) == 1 else None
