"""Hints after a failed step: one or two lines that name the mistake, in the terms of the data.

`execution_hint` reads the error (`error_keys` reads pandas' and numpy's wordings) and the code's
failing statement against the namespace, and says the diagnosis, not the symptom: a row label missed
in the index is not a missing column, a misspelled method is not a column, a Series grouped by a
column name needs its table, a merge key one side lacks has a column that matches it on that side,
a text column compared with a number holds text. No hint carries code that could be pasted as an
answer (`final_answer(<a literal>)`); the lines it shows are built from the failing code's own names.
`silent_step_observation` says what a step that printed nothing made.
"""

from __future__ import annotations

import ast
import datetime
import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .code_checks import is_method_call, is_text
from .data_card import (
    all_columns,
    describe_value,
    frames_in,
    owner_frame,
    shown_columns,
    split_task,
    value_kind,
)
from .error_keys import (
    axis_problem,
    compared_types,
    error_line,
    is_label_key,
    merge_types,
    missing_attribute,
    missing_keys,
    shape_problem,
)

__all__ = ["execution_hint", "silent_step_observation", "NOTHING_PRINTED"]

_PANDAS_KINDS = ("DataFrame", "Series", "DataFrameGroupBy", "SeriesGroupBy")
_MASK_PRECEDENCE = re.compile(r"unsupported operand type\(s\) for [&|]|Cannot perform '(rand|ror|and|or)_'")
_CANNOT_TOTAL = re.compile(r"does not support operation|agg function failed|[Cc]ould not convert|unsupported operand")
_ROW_NUMBERS = re.compile(r"'RangeIndex' object has no attribute")
_UNDEFINED = re.compile(r"name '(\w+)' is not defined")
_NOTHING_FOUND = re.compile(r"out-of-bounds|out of bounds|empty sequence|empty|division by zero")
_WHOLE_NUMBER = re.compile(r"[+-]?\d+(?:\.0*)?")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")
_MODULE_ALIASES = {"pd": "import pandas as pd", "np": "import numpy as np", "plt": "import matplotlib.pyplot as plt"}
_LONG_CODE_LINES = 40
_SCANNED = 50_000  # the labels (and a column's values) a hint reads at most
_DISTINCT = 2_000  # the distinct values of a column a hint compares at most
_EXAMPLES = 3
_UNKNOWN = object()


@dataclass
class _Failure:
    """What a hint reads: the error, the failing line (and its whole statement), the code, the data."""

    cause: str
    message: str
    source: str  # the failing line as the error shows it
    statement: str  # the statement that holds it (several lines when a call spans them)
    code: str
    namespace: dict[str, Any]
    task: str
    earlier_code: str


def execution_hint(failure: Any, code: str, namespace: dict[str, Any], task: str, earlier_code: str = "") -> str:
    """One or two lines that help the next step recover from `failure` (an `ExecutionError`), or "".

    The first rule that applies speaks: a missed row label gets the index's kind and labels; a misspelled
    method the close method names; a missing column the columns of the frames the code uses; a merge key
    the columns that match it; a comparison of text with a number the column's values; an unknown name
    the variables the task describes (or that the earlier step that assigns it did not run); a
    `SyntaxError` in long code a reminder to use variables instead of typing data.
    """
    message = str(failure)
    source = _failing_line(message)
    found = _Failure(
        cause=getattr(failure, "cause_type", "") or "",
        message=message,
        source=source,
        statement=_failing_statement(message, code) or source.strip(),
        code=code,
        namespace=namespace,
        task=task,
        earlier_code=earlier_code,
    )
    for rule in _RULES:
        try:
            hint = rule(found)
        except Exception:  # advice over any data a notebook holds: a rule that fails says nothing
            hint = ""
        if hint:
            return hint
    return ""


# ---------------------------------------------------------------------------------------------- the failing code


def _failing_line(message: str) -> str:
    """The source line an executor error names ("Error on line N of the code:" then the line), or ""."""
    lines = message.splitlines()
    return lines[1] if len(lines) > 2 and lines[0].startswith("Error on line") else ""


def _failing_statement(message: str, code: str) -> str:
    """The innermost statement of `code` that holds the line the error names (all its lines), or ""."""
    number = re.match(r"Error on line (\d+)", message)
    tree = _tree(code) if number else None
    if tree is None:
        return ""
    line = int(number.group(1))
    holding = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not holding:
        return ""
    innermost = min(holding, key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
    statement = ast.get_source_segment(code, innermost) or ""
    shown = _failing_line(message).strip()
    return statement if shown and shown in statement else ""  # the code that ran is the code given


@functools.lru_cache(maxsize=64)
def _tree(text: str) -> ast.Module | None:
    """`text` parsed (a compound statement's header line given an empty body), or None."""
    text = text.strip()
    for attempt in (text, f"{text} pass" if text.endswith(":") else ""):
        try:
            return ast.parse(attempt) if attempt else None
        except SyntaxError:
            continue
    return None


def _segment(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text.strip(), node) or ast.unparse(node)


def _read_part(statement: str) -> str:
    """The part of a statement that reads variables: an assignment's right side (its target may be stale)."""
    tree = _tree(statement)
    body = tree.body if tree else []
    if len(body) == 1 and isinstance(body[0], (ast.Assign, ast.AnnAssign, ast.AugAssign)) and body[0].value:
        return _segment(statement, body[0].value)
    return statement


def _frames_used(found: _Failure) -> list[tuple[str, Any]]:
    return frames_in(_read_part(found.statement), found.namespace) or frames_in(found.code, found.namespace)


# ---------------------------------------------------------------------------------------------- values, said


def _value_kind(series: Any) -> str:
    """ "number", "date", "text" or "" for what a Series (or an index) holds."""
    dtype = series.dtype
    if dtype.kind in "iuf":
        return "number"
    if dtype.kind == "M":
        return "date"
    if dtype.kind in "OTU" or str(dtype) in ("str", "string"):
        values = [value for value in _head(series, 200) if value == value and value is not None]
        if values and all(isinstance(value, str) for value in values):
            return "text"
        if values and all(isinstance(value, datetime.date) for value in values):
            return "date"
    return ""


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds."""
    return value.item() if type(value).__module__ == "numpy" and hasattr(value, "item") else value


def _shown(value: Any) -> str:
    """A value as code: `pd.Timestamp('2024-04-19')` for a Timestamp, the repr of other values."""
    value = _plain(value)
    if type(value).__name__ == "Timestamp":
        text = value.isoformat()
        return f"pd.Timestamp({(text[:10] if text.endswith('T00:00:00') else text)!r})"
    return repr(value)


def _head(values: Any, count: int) -> list[Any]:
    """The first values of a Series (by position) or an index."""
    return list(values.iloc[:count] if hasattr(values, "iloc") else values[:count])


def _examples(values: Any, count: int = _EXAMPLES) -> str:
    """A few distinct values of a Series or an index, as code."""
    seen = list(dict.fromkeys(_plain(value) for value in _head(values, 200) if value == value))[:count]
    return ", ".join(_shown(value) for value in seen)


def _norm(value: Any) -> str:
    """One form for a value written with another type: 17, 17.0, '17' and '017' as "17"; a date as "2024-04-19"."""
    value = _plain(value)
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


def _type_of(value: Any) -> str:
    value = _plain(value)
    if isinstance(value, str):
        return "text"
    if type(value).__name__ == "Timestamp":
        return "a Timestamp"
    if isinstance(value, datetime.datetime):
        return "a datetime.datetime"
    if isinstance(value, datetime.date):
        return "a datetime.date"
    return "a number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def _as_number(text: str) -> str:
    """A number written as text ('017', '2.50') as the number's code (17, 2.5)."""
    value = float(text)
    return str(int(value)) if value.is_integer() else repr(value)


def _all_whole_numbers(series: Any) -> bool:
    values = [str(value).strip() for value in _head(series.dropna(), _SCANNED)]
    return bool(values) and all(_WHOLE_NUMBER.fullmatch(value) for value in values)


def _all_numbers(series: Any) -> bool:
    values = [str(value).strip() for value in _head(series.dropna(), _SCANNED)]
    return bool(values) and all(_NUMBER.fullmatch(value) for value in values)


# ---------------------------------------------------------------------------------------------- what code names


def _known_value(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The value a literal or a variable of the namespace stands for, else `_UNKNOWN`."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id, _UNKNOWN)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _column_of(node: ast.AST, namespace: dict[str, Any]) -> tuple[str, Any, str] | None:
    """(the frame's name, the frame, the column) for `frame["c"]`, `frame.c` or `frame.loc[…, "c"]`, else None."""
    if isinstance(node, ast.Subscript):
        base, key = node.value, node.slice
        if isinstance(base, ast.Attribute) and base.attr in ("loc", "at") and isinstance(key, ast.Tuple):
            base, key = base.value, key.elts[-1]
        if isinstance(base, ast.Name) and is_text(key):
            frame = namespace.get(base.id)
            if value_kind(frame) == "DataFrame" and key.value in map(str, frame.columns):
                return base.id, frame, key.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        frame = namespace.get(node.value.id)
        if value_kind(frame) == "DataFrame" and node.attr in map(str, frame.columns):
            return node.value.id, frame, node.attr
    return None


def _series_of(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The Series a variable or a frame's column names (`s`, `df["c"]`, `df.c`), else None."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) == "Series" else None
    column = _column_of(node, namespace)
    return column[1][column[2]] if column else None


_FRAME_MAKERS = {"to_frame", "reset_index", "unstack", "agg", "aggregate", "describe", "value_counts"}


def _is_series_code(node: ast.AST, namespace: dict[str, Any]) -> bool:
    """Whether code makes a Series, as far as its form tells: a column, arithmetic on one, a method of one."""
    if _series_of(node, namespace) is not None:
        return True
    if isinstance(node, ast.BinOp):
        return _is_series_code(node.left, namespace) or _is_series_code(node.right, namespace)
    if isinstance(node, ast.UnaryOp):
        return _is_series_code(node.operand, namespace)
    if isinstance(node, ast.Subscript):  # s[mask], table[mask]["c"]
        return _is_series_code(node.value, namespace) or (
            is_text(node.slice) and _frame_code(node.value, namespace) is not None
        )
    if is_method_call(node) and node.func.attr not in _FRAME_MAKERS:
        return _is_series_code(node.func.value, namespace)
    return False


_ROW_KEEPERS = {"query", "dropna", "copy", "sort_values", "head", "tail", "drop_duplicates", "fillna", "assign"}


def _frame_code(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The frame code stands for when it keeps a frame's columns (`sales`, `sales[mask]`, `sales.dropna()`), else None."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) == "DataFrame" else None
    if isinstance(node, ast.Subscript) and not _texts(node.slice):
        return _frame_code(node.value, namespace)
    if is_method_call(node) and node.func.attr in _ROW_KEEPERS:
        return _frame_code(node.func.value, namespace)
    return None


def _texts(node: ast.AST) -> list[str]:
    """The column names of a text or a list of texts, else []."""
    if is_text(node):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(is_text(item) for item in node.elts):
        return [item.value for item in node.elts]
    return []


def _after_call(tree: ast.AST, call: ast.AST, text: str) -> str:
    """What the code does to a call's result right after it: `.sum()` in `….groupby("a").sum()`, or ""."""
    for node in ast.walk(tree):
        if is_method_call(node) and node.func.value is call:
            inner, outer = _segment(text, call), _segment(text, node)
            return outer[len(inner) :] if outer.startswith(inner) else ""
    return ""


# ---------------------------------------------------------------------------------------------- grouping


def _product_grouped(found: _Failure) -> str:
    if ".groupby(" in found.source and re.search(r"\)\s*\[[^\]]+\]\s*[*/]", found.source):
        return (
            "Hint: a groupby(...) cannot be multiplied. Compute the product first, value = df['a'] * df['b'], "
            "then value.groupby(df['key']).sum()."
        )
    return ""


def _series_grouped_by_name(found: _Failure) -> str:
    """`s.groupby("region")` of a Series looks for "region" in its index: give the table's line instead.

    A frame's column (`sales["units"].groupby("product")`) is grouped by the table and picked after it
    (`sales.groupby("product")["units"].sum()`); another Series (a variable, a product of columns) by the
    table's column (`value.groupby(sales["product"])`).
    """
    text = found.statement.strip()
    tree = _tree(text)
    for node in ast.walk(tree) if tree else ():
        if not (is_method_call(node, "groupby") and node.args and _texts(node.args[0])):
            continue
        columns, receiver = _texts(node.args[0]), node.func.value
        rest = _after_call(tree, node, text)
        hint = _grouped_series_hint(found, text, receiver, columns, _segment(text, node.args[0]), rest)
        if hint:
            return hint
    return ""


def _grouped_series_hint(found: _Failure, text: str, receiver: ast.AST, columns: list[str], by: str, rest: str) -> str:
    namespace, shown = found.namespace, _segment(text, receiver)
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
    if not _is_series_code(receiver, namespace):
        return ""
    owners = [name for name, frame in frames_in(shown, namespace) if column in map(str, frame.columns)]
    if not owners:
        return ""
    wrapped = f"({shown})" if isinstance(receiver, (ast.BinOp, ast.UnaryOp)) else shown
    return (
        f"Hint: `{shown}` is a Series, not a table, so it has no column {column!r}. Group it by the table's "
        f"column: {wrapped}.groupby({owners[0]}[{column!r}]){rest}"
    )


def _picked_from(node: ast.AST, text: str, namespace: dict[str, Any]) -> tuple[str, Any, str] | None:
    """(the table's code, its frame, the column's code) of a column picked from a table: `sales["units"]`,
    `sales[mask]["units"]`, `sales.units`; else None."""
    if isinstance(node, ast.Subscript) and is_text(node.slice):
        frame = _frame_code(node.value, namespace)
        return (_segment(text, node.value), frame, _segment(text, node.slice)) if frame is not None else None
    column = _column_of(node, namespace) if isinstance(node, ast.Attribute) else None
    return (column[0], column[1], repr(column[2])) if column else None


def _owner_of(series: Any, column: str, namespace: dict[str, Any]) -> str:
    # no table with these rows has the column: do not send the model to another table
    return owner_frame(series, namespace, column) or "the_table"


def _mask_precedence(found: _Failure) -> str:
    if _MASK_PRECEDENCE.search(found.message) and re.search(r"[=<>]=?[^()]*[&|]", found.source):
        return (
            "Hint: & and | bind before == and <: put each comparison in parentheses, "
            'df[(df["a"] == x) & (df["b"] == y)].'
        )
    return ""


def _grouped_total(found: _Failure) -> str:
    if not (".groupby(" in found.source and _CANNOT_TOTAL.search(found.message)):
        return ""
    fixed = _column_picked(found.source, found.code, found.namespace, found.task)
    example = f"write `{fixed}`" if fixed else 'df.groupby("key")["column"].sum()'
    return (
        f"Hint: pick the column before the total: {example}; "
        "a whole table's other columns (dates, text) cannot be totalled."
    )


def _column_picked(source: str, code: str, namespace: dict[str, Any], task: str) -> str:
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


# ---------------------------------------------------------------------------------------------- merges


@dataclass
class _Merge:
    """A merge call of the failing code: each side's code and frame, and the keys each side is joined on."""

    left: str
    right: str
    left_frame: Any
    right_frame: Any
    left_keys: list[str]
    right_keys: list[str]
    function: bool  # pd.merge(a, b, …), not a.merge(b, …)
    extra: list[str]  # the call's other arguments (how="left", …), as written


def _merge_in(text: str, namespace: dict[str, Any]) -> _Merge | None:
    tree = _tree(text)
    for node in ast.walk(tree) if tree else ():
        if not is_method_call(node, "merge"):
            continue
        owner = node.func.value
        function = isinstance(owner, ast.Name) and value_kind(namespace.get(owner.id)) != "DataFrame"
        words = {word.arg: word.value for word in node.keywords if word.arg}
        sides = list(node.args[:2]) if function else [owner, *node.args[:1]]
        sides += [words[name] for name in (("left", "right") if function else ("right",)) if name in words]
        if len(sides) < 2:
            continue
        frames = [_frame_for(side, text, namespace) for side in sides[:2]]
        if frames[0] is None or frames[1] is None:
            continue
        on = _texts(words["on"]) if "on" in words else []
        extra = [_segment(text, word) for word in node.keywords if word.arg not in ("on", "left_on", "right_on")]
        return _Merge(
            left=_segment(text, sides[0]),
            right=_segment(text, sides[1]),
            left_frame=frames[0],
            right_frame=frames[1],
            left_keys=on or (_texts(words["left_on"]) if "left_on" in words else []),
            right_keys=on or (_texts(words["right_on"]) if "right_on" in words else []),
            function=function,
            extra=[part for part in extra if not part.startswith(("left=", "right="))],
        )
    return None


def _frame_for(node: ast.AST, text: str, namespace: dict[str, Any]) -> Any:
    """The frame a side of a merge is: a variable, or the first frame its code names (`deals[deals.x > 1]`)."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) == "DataFrame" else None
    named = frames_in(_segment(text, node), namespace)
    return named[0][1] if named else None


def _merge_hint(found: _Failure) -> str:
    if ".merge(" not in found.statement:
        return ""
    types = merge_types(found.message)
    if found.cause != "KeyError" and not types:
        return ""
    merge = _merge_in(found.statement, found.namespace)
    if types:
        return _merge_types_hint(merge, types)
    if merge is None:
        return ""
    keys = [str(key) for key in missing_keys(found.message)]
    key = next((key for key in keys if key in merge.left_keys + merge.right_keys), None)
    return _merge_key_hint(merge, key) if key else ""


def _merge_key_hint(merge: _Merge, key: str) -> str:
    """A merge key one side (or both) lacks: the columns of each side that could match, and the left_on=/right_on= form."""
    left_has = key in map(str, merge.left_frame.columns)
    right_has = key in map(str, merge.right_frame.columns)
    if left_has != right_has:
        lacking, having = (merge.right, merge.left) if left_has else (merge.left, merge.right)
        first = f"Hint: `{lacking}` has no column {key!r} to merge on (`{having}` has it)."
    else:
        first = f"Hint: neither `{merge.left}` nor `{merge.right}` has a column {key!r} to merge on."
    pairs = _matching_columns(merge.left_frame, merge.right_frame, key)
    if not pairs:
        return (
            f"{first} No column of `{merge.left}` ({_typed_columns(merge.left_frame)}) shares a name or values with "
            f"one of `{merge.right}` ({_typed_columns(merge.right_frame)}): look for a table that links them."
        )
    said = "; ".join(
        f"`{merge.left}`.{left} ({merge.left_frame[left].dtype}) and `{merge.right}`.{right} "
        f"({merge.right_frame[right].dtype}): {why}"
        for left, right, why in pairs[:2]
    )
    left, right, _ = pairs[0]
    line = _merge_line(merge, left, right)
    convert = _conversion(
        (f"{merge.left}[{left!r}]", merge.left_frame[left]), (f"{merge.right}[{right!r}]", merge.right_frame[right])
    )
    return f"{first} The columns that could match: {said}.\nWrite {line}." + (f" {convert}" if convert else "")


def _merge_line(merge: _Merge, left: str, right: str) -> str:
    keys = [f"left_on={left!r}, right_on={right!r}"] if left != right else [f"on={left!r}"]
    if merge.function:
        return f"pd.merge({', '.join([merge.left, merge.right, *keys, *merge.extra])})"
    return f"{merge.left}.merge({', '.join([merge.right, *keys, *merge.extra])})"


def _typed_columns(frame: Any, limit: int = 8) -> str:
    said = [f"{column} ({dtype})" for column, dtype in list(frame.dtypes.items())[:limit]]
    return ", ".join(said) + (", …" if frame.shape[1] > limit else "")


def _matching_columns(left: Any, right: Any, key: str) -> list[tuple[str, str, str]]:
    """(left column, right column, why) of the pairs that could be one key: same or similar names, shared values.

    The pairs with the key the code named come first, then the likeliest; values are compared in one form
    (17, '17' and '017' alike), so a key held as a number on one side and as text on the other still matches.
    """
    left_values = {str(column): _value_forms(left[column]) for column in list(left.columns)[:40]}
    right_values = {str(column): _value_forms(right[column]) for column in list(right.columns)[:40]}
    scored = []
    for left_column, ours in left_values.items():
        for right_column, theirs in right_values.items():
            likeness = _name_likeness(left_column, right_column)
            shared = len(ours & theirs)
            overlap = shared / min(len(ours), len(theirs)) if ours and theirs else 0.0
            if likeness < 0.75 and overlap < 0.5:
                continue
            named = "same name" if likeness == 1 else "similar names" if likeness >= 0.75 else ""
            compared = min(len(ours), len(theirs))
            values = (f"{shared} of {compared} values shared" if shared else "no values shared") if compared else ""
            why = ", ".join(part for part in (named, values) if part)
            keyed = key in (left_column, right_column)
            scored.append((keyed, overlap + likeness, left_column, right_column, why))
    scored.sort(key=lambda pair: (pair[0], pair[1]), reverse=True)
    best = scored[0][1] if scored else 0.0  # a pair much less likely than the best (small numbers alike) is noise
    return [(left, right, why) for keyed, score, left, right, why in scored if keyed or score >= best - 0.25]


def _value_forms(series: Any) -> set[str]:
    """A column's distinct values in one form; none for flags (two values or fewer) and booleans."""
    if series.dtype.kind == "b":
        return set()
    values = series.dropna().unique()[:_DISTINCT]
    return {_norm(value) for value in values} if len(values) > 2 else set()


def _name_likeness(first: str, second: str) -> float:
    a, b = first.casefold(), second.casefold()
    if a == b:
        return 1.0
    shorter, longer = sorted((a, b), key=len)
    if len(shorter) >= 2 and re.search(rf"(^|_){re.escape(shorter)}(_|$)", longer):
        return 0.9  # rep and rep_id, id and client_id
    return difflib.SequenceMatcher(None, a, b).ratio()


def _merge_types_hint(merge: _Merge | None, types: tuple[str, str, str]) -> str:
    """Keys of two types (int64 and str): which side holds what, and which side to convert, chosen from the values."""
    left_type, right_type, key = types
    if merge is not None:
        left_key = key if key in map(str, merge.left_frame.columns) else (merge.left_keys or [key])[0]
        position = merge.left_keys.index(left_key) if left_key in merge.left_keys else 0
        right_key = merge.right_keys[position] if len(merge.right_keys) > position else left_key
        if left_key in map(str, merge.left_frame.columns) and right_key in map(str, merge.right_frame.columns):
            left = (f"{merge.left}[{left_key!r}]", merge.left_frame[left_key])
            right = (f"{merge.right}[{right_key!r}]", merge.right_frame[right_key])
            return (
                f"Hint: the merge key has a different type on each side: `{left[0]}` is {left_type} "
                f"({_examples(left[1])}) and `{right[0]}` is {right_type} ({_examples(right[1])}). "
                + (_conversion(left, right) or "Convert one side so both hold the same type.")
            )
    return (
        f"Hint: the merge key is {left_type} on the left and {right_type} on the right: convert one side, "
        "with .astype(int) when the text holds whole numbers or .astype(str) when it does not, so both hold the same type."
    )


def _conversion(first: tuple[str, Any], second: tuple[str, Any]) -> str:
    """How to give two key columns one type, the direction chosen from their values ("" when they have one)."""
    kinds = {_value_kind(first[1]): first, _value_kind(second[1]): second}
    if len(kinds) < 2:
        return ""
    if "text" in kinds and "number" in kinds:
        (text, values), numbers = kinds["text"], kinds["number"][0]
        if _all_whole_numbers(values):
            return f"Its text holds whole numbers, so convert the text: {text} = {text}.astype(int)."
        if _all_numbers(values):
            return f"Its text holds numbers, so convert the text: {text} = {text}.astype(float)."
        return (
            f"The text is not all numbers, so convert the numbers with {numbers}.astype(str), "
            "and check the values are then written alike."
        )
    if "text" in kinds and "date" in kinds:
        text = kinds["text"][0]
        return f"Its text holds dates, so convert the text: {text} = pd.to_datetime({text})."
    return "They hold different kinds of values: convert one side with .astype(...) so both hold the same type."


# ---------------------------------------------------------------------------------------------- comparisons


_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def _compared_types(found: _Failure) -> str:
    """A comparison that failed on its types (text with a number): the column's values, said."""
    if found.cause != "TypeError" or not compared_types(found.message):
        return ""
    return _mismatched_comparison(found.statement, found.namespace)


def _nothing_found(found: _Failure) -> str:
    """An empty selection failed later (`.iloc[0]` out of bounds): a filter that compares text with a number."""
    if not _NOTHING_FOUND.search(error_line(found.message)):
        return ""
    said = _mismatched_comparison(found.code, found.namespace)
    return said.replace("Hint: ", "Hint: nothing was selected: ", 1) if said else ""


def _mismatched_comparison(code: str, namespace: dict[str, Any]) -> str:
    text = code.strip()
    tree = _tree(text)
    for node in ast.walk(tree) if tree else ():
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPERATORS):
            continue
        operator = _OPERATORS[type(node.ops[0])]
        for column, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            series = _series_of(column, namespace)
            value = other.value if isinstance(other, ast.Constant) else _UNKNOWN
            said = _mismatch(_segment(text, column), series, value, operator) if series is not None else ""
            if said:
                return said
    return ""


def _mismatch(shown: str, series: Any, value: Any, operator: str) -> str:
    """One line when a column of one kind (text, numbers, dates) is compared with a value of another, else ""."""
    kind = _value_kind(series)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "text" and number:
        fix = (
            f"convert it first: {shown}.astype(int) {operator} {value!r}"
            if _all_whole_numbers(series)
            else "compare it with text written as the column writes it"
        )
        return (
            f"Hint: `{shown}` holds text ({_examples(series)}), the code compares it with the number {value!r}: {fix}."
        )
    if kind == "number" and isinstance(value, str):
        fix = (
            f"write the number without quotes: {shown} {operator} {_as_number(value.strip())}"
            if _NUMBER.fullmatch(value.strip())
            else "compare it with a number"
        )
        return f"Hint: `{shown}` holds numbers ({series.dtype}), the code compares it with the text {value!r}: {fix}."
    if kind == "date" and number:
        return (
            f"Hint: `{shown}` holds dates ({_examples(series, 2)}), the code compares it with the number {value!r}: "
            f"compare it with a date, or a part of it ({shown}.dt.month {operator} {value!r}, .dt.year, .dt.day)."
        )
    return ""


# ---------------------------------------------------------------------------------------------- missing names


def _row_numbers(found: _Failure) -> str:
    if not _ROW_NUMBERS.search(found.message):
        return ""
    columns = "; ".join(f"`{n}` has {shown_columns(f)}" for n, f in frames_in(found.source, found.namespace)[:2])
    return (
        f"Hint: that index holds row numbers (0, 1, 2, …), not dates or labels; use a column instead. {columns}".strip()
    )


def _tuple_subset(found: _Failure) -> str:
    if "subset columns with a tuple" in found.message:
        return "Hint: select several columns with a list, frame[['a', 'b']], or compute a new Series from them first."
    return ""


def _missing_attribute(found: _Failure) -> str:
    """`df.summ()`: a misspelled method gets the close method names; `df.revenue` (not called) the columns."""
    named = missing_attribute(found.message)
    if named is None:
        return ""
    kind, attribute = named
    called = re.search(rf"\.{re.escape(attribute)}\s*\(", found.statement or found.source) is not None
    methods = _close_names(kind, attribute, 0.6 if called else 0.8)  # a name not called is likelier a column
    if kind in _PANDAS_KINDS and not called:
        columns = sorted(all_columns(_frames_used(found)))
        if not methods or difflib.get_close_matches(attribute, columns, n=1, cutoff=0.6):
            return _columns_hint(found)
    if methods:
        listed = " or ".join(methods)
        return f"Hint: {attribute!r} is not a method of a {kind}; did you mean {listed}?" + (
            " The code calls it, so it is not a column." if called and kind in _PANDAS_KINDS else ""
        )
    if kind in _PANDAS_KINDS:
        return f"Hint: a {kind} has no method {attribute!r}; check the method's name (print(dir(...)) lists them)."
    return ""


def _close_names(kind: str, attribute: str, cutoff: float) -> list[str]:
    """The public methods of the type an error names closest to `attribute` (`.sum()`, `.cumsum()`)."""
    owner = _type_named(kind)
    if owner is None:
        return []
    public = [name for name in dir(owner) if not name.startswith("_") and callable(getattr(owner, name, None))]
    return [f".{name}()" for name in difflib.get_close_matches(attribute, public, n=2, cutoff=cutoff)]


def _type_named(kind: str) -> Any:
    import builtins

    if kind in ("DataFrame", "Series"):
        import pandas as pd  # a pandas error: pandas is loaded

        return getattr(pd, kind)
    if kind in ("DataFrameGroupBy", "SeriesGroupBy"):
        import pandas as pd

        return getattr(pd.api.typing, kind, None)
    builtin = getattr(builtins, kind, None)
    return builtin if isinstance(builtin, type) else None


def _missing_key(found: _Failure) -> str:
    """A key not found: a row label missed in an index (`.loc[label]`, `s[label]`), or a missing column."""
    message = found.message
    query = found.cause == "UndefinedVariableError" and ".query(" in found.source  # a column a query string names
    if not (found.cause == "KeyError" or "not in index" in message or "do not exist" in message or query):
        return ""
    keys = missing_keys(message)
    row = _row_lookup(found, keys) if keys else None
    if row is not None:
        return _row_label_hint(*row)
    if keys and all(is_label_key(key) for key in keys):
        return _row_label_hint(keys[0], "", None)
    return _columns_hint(found)


def _row_lookup(found: _Failure, keys: list[Any]) -> tuple[Any, str, Any] | None:
    """(the missed label, the code of what was looked up, its frame or Series or None), or None.

    `x.loc[row]` only looks up rows; in `x.loc[row, column]` the key the error names tells which part missed.
    `s[label]` of a Series looks up a row too.
    """
    text, namespace = found.statement.strip(), found.namespace
    tree = _tree(text)
    for node in ast.walk(tree) if tree else ():
        if not isinstance(node, ast.Subscript):
            continue
        base, parts = node.value, node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if isinstance(base, ast.Attribute) and base.attr in ("loc", "at"):
            looked_up, row, column = base.value, parts[0], parts[1] if len(parts) > 1 else None
        elif _series_of(base, namespace) is not None:
            looked_up, row, column = base, node.slice, None
        else:
            continue
        label = _missed_label(row, column, keys, namespace)
        if label is not _UNKNOWN:
            return label, _segment(text, looked_up), _looked_up_value(looked_up, namespace)
    return None


def _missed_label(row: ast.AST, column: ast.AST | None, keys: list[Any], namespace: dict[str, Any]) -> Any:
    """The row label the error names as missing, when it is `row`'s (not `column`'s); else `_UNKNOWN`."""
    if isinstance(row, (ast.Slice, ast.Compare, ast.BoolOp)):
        return _UNKNOWN
    if column is not None and any(_same(_known_value(column, namespace), key) for key in keys):
        return _UNKNOWN  # the column part missed
    value = _known_value(row, namespace)
    if value is _UNKNOWN:  # computed (a call, an attribute): the key is the row's unless it is a text column name
        return keys[0] if column is None or not isinstance(keys[0], str) else _UNKNOWN
    values = value if isinstance(value, (list, tuple)) else [value]
    for key in keys:
        for candidate in values:
            if _same(candidate, key):
                return candidate
    return _UNKNOWN


def _same(value: Any, key: Any) -> bool:
    if value is _UNKNOWN:
        return False
    try:
        if type(value) is type(key) and bool(value == key):
            return True
    except (TypeError, ValueError):
        pass
    return repr(_plain(value)) == repr(_plain(key)) or (isinstance(key, str) and key == repr(value))


def _looked_up_value(node: ast.AST, namespace: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) in ("DataFrame", "Series") else None
    return _series_of(node, namespace)


def _row_label_hint(key: Any, name: str, looked_up: Any) -> str:
    """A label missed in an index: the index's kind and a few labels, the label in another type if it is there,
    else the column that holds the value (to find the row by that column)."""
    where = f" of `{name}`" if name else ""
    head = (
        f"Hint: {_shown(key)} is not a row label{where}; .loc[] looks rows up by label in the index, not in a column."
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
            f", from {_shown(index[0])} to {_shown(index[-1])}"
            if len(index) > _EXAMPLES and index.is_monotonic_increasing
            else ""
        )
        labels = f"Its index{named} holds {_index_kind(index)} such as {_examples(index)}{span}."
    other = _label_in_other_type(key, index)
    if other is not _UNKNOWN:
        return f"{head} {labels}\nThe label is there as {_shown(other)} ({_type_of(other)}, not {_type_of(key)}): look it up as {_shown(other)}."
    column = _column_holding(looked_up, key) if value_kind(looked_up) == "DataFrame" else None
    if column is not None:
        title, value = column
        return f"{head} {labels}\nThe value is in the column {title!r}: write {name}[{name}[{title!r}] == {_shown(value)}]."
    if value_kind(looked_up) == "Series":
        return f"{head} {labels}\nTo select by value instead, write {name}[{name} == value]; .iloc[] picks by position."
    return f"{head} {labels}\nTo find a row by a column's value, write {name}[{name}['column'] == value]."


def _index_kind(index: Any) -> str:
    kind = _value_kind(index)
    return {"number": f"numbers ({index.dtype})", "date": f"dates ({index.dtype})", "text": "text labels"}.get(
        kind, f"labels ({index.dtype})"
    )


def _label_in_other_type(key: Any, index: Any) -> Any:
    """The label of `index` that is `key` written with another type (a Timestamp for a date, 17 for '17'), else `_UNKNOWN`."""
    wanted = _norm(key)
    for label in _head(index, _SCANNED):
        if _norm(label) == wanted:
            return _plain(label)
    return _UNKNOWN


def _column_holding(frame: Any, key: Any) -> tuple[str, Any] | None:
    """(the column, its value) of the first column of `frame` that holds `key` (in any type), else None."""
    wanted = _norm(key)
    head = frame.iloc[:_SCANNED]
    for title in list(frame.columns)[:40]:
        for value in head[title].dropna().unique()[:_DISTINCT]:
            if _norm(value) == wanted:
                return str(title), _plain(value)
    return None


def _columns_hint(found: _Failure) -> str:
    frames = _frames_used(found)
    keys = _missing_names(found.message)
    if not frames:
        return "Hint: that key is not in the index or the columns; print them to see what exists."
    said = []
    for name, frame in frames[:3]:
        said.append(f"`{name}` has the columns: {shown_columns(frame)}.")
        if 0 in list(frame.columns):
            said.append("(Its column 0 came from reset_index() of an unnamed Series: use the Series itself.)")
    columns = all_columns(frames)
    missing = [str(key) for key in keys if not is_label_key(key) and str(key) not in columns]
    if missing:
        where = f" in `{frames[0][0]}`" if len(frames) == 1 else ""
        close = difflib.get_close_matches(missing[0], sorted(columns), n=1, cutoff=0.6)
        meant = f" (did you mean {close[0]!r}?)" if close else ""
        named = (
            f"is no column {missing[0]!r}" if len(missing) == 1 else f"are no columns {', '.join(map(repr, missing))}"
        )
        said.append(f"There {named}{where}{meant}: use the columns listed, or compute it from them.")
    return "Hint: " + " ".join(said)


def _missing_names(message: str) -> list[Any]:
    """The keys the error says are missing: a KeyError's (pandas 3's wordings), a missing attribute, a query's name."""
    keys = missing_keys(message)
    if keys:
        return keys
    attribute = missing_attribute(message)
    if attribute:
        return [attribute[1]]
    named = _UNDEFINED.search(error_line(message))
    return [named.group(1)] if named else []


# ---------------------------------------------------------------------------------------------- numpy, names, length


def _numpy_hint(found: _Failure) -> str:
    """numpy 2's axis and shape errors, said in the terms of the data (an `AxisError`, a broadcast, …)."""
    cause, message = found.cause, found.message
    axis = axis_problem(message) if cause == "AxisError" or "AxisError" in message else None
    if axis is not None:
        dims = "1 dimension" if axis.ndim == 1 else f"{axis.ndim} dimensions"
        return (
            f"Hint: that array has {dims}, so axis={axis.axis} does not exist (axes are 0 to {axis.ndim - 1}). For a "
            "table, axis=0 works down the rows (per column) and axis=1 across a row; a 1-D array or Series needs no axis."
        )
    shape = shape_problem(message) if cause == "ValueError" else ""
    if not shape:
        return ""
    frames = frames_in(found.source, found.namespace)[:2]
    sizes = "; ".join(f"`{name}` has {len(frame)} rows" for name, frame in frames)
    return f"Hint: {shape}." + (f" {sizes}." if sizes else "")


def _undefined_name(found: _Failure) -> str:
    if found.cause != "NameError":
        return ""
    unknown = _UNDEFINED.search(found.message)
    if unknown and unknown.group(1) in _MODULE_ALIASES:
        return f"Hint: import it first: {_MODULE_ALIASES[unknown.group(1)]}"
    if unknown and re.search(rf"^\s*{re.escape(unknown.group(1))}\s*=[^=]", found.earlier_code, re.MULTILINE):
        return (
            f"Hint: `{unknown.group(1)}` was never defined: the earlier code that assigns it did not run "
            "(it stopped before that line). Assign it again in this code."
        )
    names = split_task(found.task)[1]
    if names:
        listed = ", ".join(f"`{name}`" for name in names)
        return f"Hint: the variables of the task are {listed}; use them by name (and define any other name first)."
    return "Hint: define a variable before you use it; variables of earlier steps are still defined."


def _long_code(found: _Failure) -> str:
    if found.cause == "SyntaxError" and found.code.count("\n") >= _LONG_CODE_LINES:
        return "Hint: write shorter code; use the variables by name instead of typing out their data."
    return ""


_RULES: tuple[Callable[[_Failure], str], ...] = (
    _product_grouped,
    _series_grouped_by_name,
    _mask_precedence,
    _merge_hint,
    _compared_types,
    _grouped_total,
    _row_numbers,
    _tuple_subset,
    _missing_attribute,
    _missing_key,
    _numpy_hint,
    _undefined_name,
    _long_code,
    _nothing_found,
)


# ---------------------------------------------------------------------------------------------- a silent step

NOTHING_PRINTED = "The code ran and printed nothing. Print the values you need to see, or call final_answer.\n"


def silent_step_observation(code: str, namespace: dict[str, Any]) -> str:
    """What a small model reads after code that printed nothing: the variable its last line made, described.

    A 1.5B model that merges two tables into a variable without printing it reads "printed
    nothing" as "the merge failed" and merges again; shown the new variable's schema (as a
    notebook would show it), it goes on to use its columns.
    """
    name = _last_assigned_name(code)
    if name is None or name not in namespace:
        return NOTHING_PRINTED
    return f"The code ran and printed nothing. `{name}` is now:\n{describe_value(name, namespace[name])}\n"


def _last_assigned_name(code: str) -> str | None:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    targets = last.targets if isinstance(last, ast.Assign) else [last.target] if isinstance(last, ast.AnnAssign) else []
    names = [target.id for target in targets if isinstance(target, ast.Name)]
    return names[-1] if names else None
