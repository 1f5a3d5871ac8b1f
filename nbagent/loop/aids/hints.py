"""Hints after a failed step: one or two lines that name the mistake, in the terms of the data.

`execution_hint` reads the error (`error_keys` reads pandas' and numpy's wordings) and the code's
failing line against the namespace; `silent_step_observation` says what a step that printed nothing made.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any

from .code_checks import is_method_call, is_text
from .data_card import (
    all_columns,
    describe_value,
    frames_in,
    owner_frame,
    shown_columns,
    split_task,
)
from .error_keys import axis_problem, error_line, is_label_key, missing_keys, shape_problem

__all__ = ["execution_hint", "silent_step_observation", "NOTHING_PRINTED"]

_NO_ATTRIBUTE = re.compile(r"'(DataFrame|Series|DataFrameGroupBy|SeriesGroupBy)' object has no attribute '(\w+)'")
_MASK_PRECEDENCE = re.compile(r"unsupported operand type\(s\) for [&|]|Cannot perform '(rand|ror|and|or)_'")
_CANNOT_TOTAL = re.compile(r"does not support operation|agg function failed|[Cc]ould not convert|unsupported operand")
_ROW_NUMBERS = re.compile(r"'RangeIndex' object has no attribute")
_UNDEFINED = re.compile(r"name '(\w+)' is not defined")
_MODULE_ALIASES = {"pd": "import pandas as pd", "np": "import numpy as np", "plt": "import matplotlib.pyplot as plt"}
_LONG_CODE_LINES = 40


def execution_hint(failure: Any, code: str, namespace: dict[str, Any], task: str, earlier_code: str = "") -> str:
    """One or two lines that help the next step recover from `failure` (an `ExecutionError`), or "".

    A missing column (`KeyError`, no such attribute) gets the columns of the frames the code
    uses; an unknown name gets the variables the task describes, or, when an earlier step of the
    task (`earlier_code`) assigns it, that the step failed before defining it; a `SyntaxError` in
    long code a reminder to use variables instead of typing data.
    """
    cause = getattr(failure, "cause_type", "") or ""
    message = str(failure)
    source = _failing_line(message)
    if ".groupby(" in source and re.search(r"\)\s*\[[^\]]+\]\s*[*/]", source):
        return (
            "Hint: a groupby(...) cannot be multiplied. Compute the product first, value = df['a'] * df['b'], "
            "then value.groupby(df['key']).sum()."
        )
    series_groupby = _series_grouped_by_name(source, namespace)
    if series_groupby:
        return series_groupby
    if _MASK_PRECEDENCE.search(message) and re.search(r"[=<>]=?[^()]*[&|]", source):
        return (
            "Hint: & and | bind before == and <: put each comparison in parentheses, "
            'df[(df["a"] == x) & (df["b"] == y)].'
        )
    if ".groupby(" in source and _CANNOT_TOTAL.search(message):
        fixed = _column_picked(source, code, namespace, task)
        example = f"write `{fixed}`" if fixed else 'df.groupby("key")["column"].sum()'
        return (
            f"Hint: pick the column before the total: {example}; "
            "a whole table's other columns (dates, text) cannot be totalled."
        )
    if _ROW_NUMBERS.search(message):
        columns = "; ".join(f"`{n}` has {shown_columns(f)}" for n, f in frames_in(source, namespace)[:2])
        return f"Hint: that index holds row numbers (0, 1, 2, …), not dates or labels; use a column instead. {columns}".strip()
    if "subset columns with a tuple" in message:
        return "Hint: select several columns with a list, frame[['a', 'b']], or compute a new Series from them first."
    if cause == "KeyError" or _NO_ATTRIBUTE.search(message) or "not in index" in message or "do not exist" in message:
        return _columns_hint(message, source, code, namespace)
    if cause == "UndefinedVariableError" and ".query(" in source:  # a column the query string names
        return _columns_hint(message, source, code, namespace)
    numpy = _numpy_hint(cause, message, source, namespace)
    if numpy:
        return numpy
    if cause == "NameError":
        unknown = _UNDEFINED.search(message)
        if unknown and unknown.group(1) in _MODULE_ALIASES:
            return f"Hint: import it first: {_MODULE_ALIASES[unknown.group(1)]}"
        if unknown and re.search(rf"^\s*{re.escape(unknown.group(1))}\s*=[^=]", earlier_code, re.MULTILINE):
            return (
                f"Hint: `{unknown.group(1)}` was never defined: the earlier code that assigns it did not run "
                "(it stopped before that line). Assign it again in this code."
            )
        names = split_task(task)[1]
        if names:
            listed = ", ".join(f"`{name}`" for name in names)
            return f"Hint: the variables of the task are {listed}; use them by name (and define any other name first)."
        return "Hint: define a variable before you use it; variables of earlier steps are still defined."
    if cause == "SyntaxError" and code.count("\n") >= _LONG_CODE_LINES:
        return "Hint: write shorter code; use the variables by name instead of typing out their data."
    return ""


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


_GROUPBY_BY_NAME = re.compile(r"\b([A-Za-z_]\w*)\.groupby\(\s*['\"](\w+)['\"]")


def _series_grouped_by_name(source: str, namespace: dict[str, Any]) -> str:
    """`value.groupby("region")` of a Series (a product of columns) looks for "region" in its index: say so."""
    match = _GROUPBY_BY_NAME.search(source)
    series = namespace.get(match.group(1)) if match else None
    if type(series).__name__ != "Series":
        return ""
    name, column = match.groups()
    return (
        f"Hint: `{name}` is a Series, not a table, so it has no column {column!r}. Group it by the column of "
        f"the table it came from: {name}.groupby({_owner_of(series, column, namespace)}[{column!r}])."
    )


def _owner_of(series: Any, column: str, namespace: dict[str, Any]) -> str:
    # no table with these rows has the column: do not send the model to another table
    return owner_frame(series, namespace, column) or "the_table"


def _failing_line(message: str) -> str:
    """The source line an executor error names ("Error on line N of the code:" then the line), or ""."""
    lines = message.splitlines()
    return lines[1] if len(lines) > 2 and lines[0].startswith("Error on line") else ""


def _columns_hint(message: str, source: str, code: str, namespace: dict[str, Any]) -> str:
    frames = frames_in(source, namespace) or frames_in(code, namespace)
    keys = _missing_keys(message)
    if keys and all(is_label_key(key) for key in keys):
        return _row_label_hint(keys[0], frames)
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


def _missing_keys(message: str) -> list[Any]:
    """The keys the error says are missing: a KeyError's (pandas 3's wordings), a missing attribute, a query's name."""
    keys = missing_keys(message)
    if keys:
        return keys
    line = error_line(message)
    named = _NO_ATTRIBUTE.search(line) or _UNDEFINED.search(line)
    return [named.groups()[-1]] if named else []


def _row_label_hint(key: Any, frames: list[tuple[str, Any]]) -> str:
    """A number looked up as a row label that is not one (`df.loc[5]`, `s[np.int64(9)]`)."""
    where = ""
    if frames:
        name, frame = frames[0]
        index = frame.index
        if type(index).__name__ == "RangeIndex":
            where = f" `{name}`'s rows are labelled {index.start} to {index.stop - 1}."
        else:
            where = f" `{name}`'s index holds labels such as {', '.join(map(repr, list(index[:3])))}."
    return (
        f"Hint: {key!r} is not a row label.{where} .loc[] looks rows up by label, .iloc[] by position; to get "
        "the rows where a column has a value, write df[df['column'] == value]."
    )


def _numpy_hint(cause: str, message: str, source: str, namespace: dict[str, Any]) -> str:
    """numpy 2's axis and shape errors, said in the terms of the data (an `AxisError`, a broadcast, …)."""
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
    frames = frames_in(source, namespace)[:2]
    sizes = "; ".join(f"`{name}` has {len(frame)} rows" for name, frame in frames)
    return f"Hint: {shape}." + (f" {sizes}." if sizes else "")


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
