"""Variables described to the model: what each one is, compactly, so the model uses it by name.

A DataFrame is described by its schema (shape, columns with dtypes, index, a few rows
as a compact table), a Series or an array by dtype and shape, a container by its size
and a short repr, anything else by its type and a short repr. Values are never dumped
whole: a model shown the data tends to re-type it instead of using the variable.
"""

from __future__ import annotations

import re
from typing import Any

from nbagent.text import VALUE_REPR, Truncation, truncate

__all__ = [
    "describe_variables",
    "describe_value",
    "split_task",
    "value_kind",
    "data_frames",
    "frames_in",
    "all_columns",
    "shown_columns",
    "owner_frame",
    "NOTEBOOK_VARIABLES_HEADING",
    "ADDITIONAL_ARGS_HEADING",
]

NOTEBOOK_VARIABLES_HEADING = (
    "These variables already exist in the notebook. Use them by name in your code; "
    "do not re-create them or copy their data:"
)
ADDITIONAL_ARGS_HEADING = (
    "You have been provided with these additional arguments, that you can access directly using the keys as variables:"
)
_HEADINGS = (NOTEBOOK_VARIABLES_HEADING, ADDITIONAL_ARGS_HEADING)
SAMPLE_ROWS = 5
MAX_COLUMNS = 30
_CELL = Truncation(40)
_TABLE_LINE = Truncation(160)
_DESCRIBED = re.compile(r"^- `([A-Za-z_][A-Za-z0-9_]*)`:", re.MULTILINE)


def describe_variables(variables: dict[str, Any], heading: str = ADDITIONAL_ARGS_HEADING) -> str:
    """A task suffix: `heading`, then one description per variable."""
    return f"\n{heading}\n" + "\n".join(describe_value(name, value) for name, value in variables.items())


def split_task(task: str) -> tuple[str, list[str]]:
    """(the person's words, the names of the variables described after them) of a task `describe_variables` extended."""
    described = _DESCRIBED.search(task)  # a task written by hand may list them without a heading
    starts = [task.find(f"\n{heading}\n") for heading in _HEADINGS] + [described.start() if described else -1]
    cut = min((start for start in starts if start >= 0), default=len(task))
    return task[:cut].rstrip(), _DESCRIBED.findall(task[cut:])


def describe_value(name: str, value: Any) -> str:
    """One variable, as the model reads it (several lines for a table)."""
    kind = value_kind(value)
    if kind == "DataFrame":
        return _describe_frame(name, value)
    if kind == "Series":
        return _describe_series(name, value)
    if kind == "ndarray":
        return f"- `{name}`: numpy array, shape {tuple(value.shape)}, dtype {value.dtype}"
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return f"- `{name}`: {type(value).__name__} of {len(value)} items = {truncate(repr(value), VALUE_REPR)}"
    return f"- `{name}`: {type(value).__name__} = {truncate(repr(value), VALUE_REPR)}"


def value_kind(value: Any) -> str:
    """ "DataFrame", "Series" or "ndarray" for pandas/numpy values (checked without importing them), else ""."""
    module = type(value).__module__.split(".")[0]
    name = type(value).__name__
    if module == "pandas" and name in ("DataFrame", "Series"):
        return name
    if module == "numpy" and name == "ndarray":
        return name
    return ""


def _describe_frame(name: str, frame: Any) -> str:
    rows, cols = frame.shape
    columns = [f"{column} ({dtype})" for column, dtype in list(frame.dtypes.items())[:MAX_COLUMNS]]
    more = f", … {cols - MAX_COLUMNS} more" if cols > MAX_COLUMNS else ""
    lines = [
        f"- `{name}`: pandas DataFrame, {rows} rows × {cols} columns",
        f"  columns: {', '.join(columns)}{more}",
        f"  index: {_describe_index(frame.index)}",
    ]
    if rows:
        lines.append(f"  first {min(rows, SAMPLE_ROWS)} rows:")
        lines += ["    " + truncate(line, _TABLE_LINE) for line in _sample_table(frame).splitlines()]
    return "\n".join(lines)


def _sample_table(frame: Any) -> str:
    sample = frame.iloc[:SAMPLE_ROWS, :MAX_COLUMNS]
    return sample.to_string(max_colwidth=_CELL.limit)


def _describe_index(index: Any) -> str:
    kind = type(index).__name__
    if kind == "RangeIndex":
        return f"RangeIndex {index.start}..{index.stop - 1}" if len(index) else "empty RangeIndex"
    named = f" '{index.name}'" if index.name is not None else ""
    return f"{kind}{named} ({index.dtype}), {len(index)} entries"


def _describe_series(name: str, series: Any) -> str:
    label = f" '{series.name}'" if series.name is not None else ""
    head = ", ".join(truncate(repr(v), _CELL) for v in series.iloc[:SAMPLE_ROWS].tolist())
    return (
        f"- `{name}`: pandas Series{label}, {len(series)} values, dtype {series.dtype}; "
        f"index: {_describe_index(series.index)}; first values: {head}"
    )


_MAX_HINT_COLUMNS = 40


def shown_columns(frame: Any) -> str:
    """A frame's column names for a hint, the first `_MAX_HINT_COLUMNS` of them."""
    columns = [str(c) for c in frame.columns]
    return ", ".join(columns[:_MAX_HINT_COLUMNS]) + (", …" if len(columns) > _MAX_HINT_COLUMNS else "")


def data_frames(namespace: dict[str, Any]) -> list[tuple[str, Any]]:
    """The pandas DataFrames of the namespace, by name (private names left out)."""
    return [
        (name, value)
        for name, value in namespace.items()
        if not name.startswith("_") and value_kind(value) == "DataFrame"
    ]


def frames_in(text: str, namespace: dict[str, Any]) -> list[tuple[str, Any]]:
    """The DataFrames whose names `text` mentions."""
    return [(name, frame) for name, frame in data_frames(namespace) if re.search(rf"\b{re.escape(name)}\b", text)]


def all_columns(frames: list[tuple[str, Any]]) -> set[str]:
    return {str(column) for _, frame in frames for column in frame.columns}


def owner_frame(series: Any, namespace: dict[str, Any], column: str | None = None) -> str | None:
    """The name of the frame with the same rows as `series` (it was computed from it), having `column` if given."""
    for name, frame in data_frames(namespace):
        same_rows = len(frame) == len(series) and frame.index.equals(series.index)
        if same_rows and (column is None or column in map(str, frame.columns)):
            return name
    return None
