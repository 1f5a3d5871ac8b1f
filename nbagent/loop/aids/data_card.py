"""Variables described to the model: what each one is, compactly, so the model uses it by name.

A DataFrame is described by its schema (shape, columns with dtypes, index, a few rows
as a compact table), a Series or an array by dtype and shape, a container by its size
and a short repr, anything else by its type and a short repr. Values are never dumped
whole: a model shown the data tends to re-type it instead of using the variable.

A frame's card also says what a careful analyst checks first, and only where it is so:
text columns that hold numbers ('$1,234.50') or dates in mixed formats, with a few raw
values; labels written several ways ('North', ' north'); missing values counted with the
blank text `isna()` misses; exact duplicate rows; and, across the frames of one task, a
column of one name that is a number in one frame and text in another (a join key). The
checks read at most `CHECKED_ROWS` rows of a frame (evenly spaced) and never change it.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from nbagent.text import VALUE_REPR, Truncation, truncate

__all__ = [
    "describe_variables",
    "describe_value",
    "split_task",
    "card_first",
    "value_kind",
    "is_number",
    "data_frames",
    "frames_in",
    "all_columns",
    "shown_columns",
    "owner_frame",
    "labels_written_apart",
    "text_kind",
    "filled_text",
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
SMALL_FRAME_ROWS = 10  # a frame this short shows whole (a 6-row frame is not cut to 5 in the card and the task box)
MAX_COLUMNS = 30
CHECKED_ROWS = 2000  # the data checks read this many rows of a bigger frame, evenly spaced
_CELL = Truncation(40)
_TABLE_LINE = Truncation(160)
_DESCRIBED = re.compile(r"^- `([A-Za-z_][A-Za-z0-9_]*)`:", re.MULTILINE)


def describe_variables(variables: dict[str, Any], heading: str = ADDITIONAL_ARGS_HEADING) -> str:
    """A task suffix: `heading`, then one description per variable, then the join keys whose types differ."""
    lines = [describe_value(name, value) for name, value in variables.items()]
    frames = [(name, value) for name, value in variables.items() if value_kind(value) == "DataFrame"]
    return f"\n{heading}\n" + "\n".join(lines + _key_notes(frames))


def split_task(task: str) -> tuple[str, list[str]]:
    """(the person's words, the names of the variables described after them) of a task `describe_variables` extended."""
    cut = _card_start(task)
    return task[:cut].rstrip(), _DESCRIBED.findall(task[cut:])


def card_first(task: str) -> str:
    """`task` with its data card before the person's words ("<card>\nTask: <words>"); a task without one as it is.

    A local model reuses the cached computation of the longest prompt start it saw last: the card of the same
    frames, read first, is then paid once for a notebook's questions about them, not at every question (about a
    thousand tokens of a small model's first step).
    """
    cut = _card_start(task)
    card = task[cut:].strip("\n")
    if not card or not task[:cut].strip():
        return task
    return f"{card}\nTask: {task[:cut].strip()}"


def _card_start(task: str) -> int:
    described = _DESCRIBED.search(task)  # a task written by hand may list them without a heading
    starts = [task.find(f"\n{heading}\n") for heading in _HEADINGS] + [described.start() if described else -1]
    return min((start for start in starts if start >= 0), default=len(task))


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


def holds_text(values: Any) -> bool:
    """Whether a column (or a Series) holds text or categories, whatever pandas' version calls their dtype."""
    return values.dtype.kind in "OUT" or str(values.dtype) in ("category", "string", "str")


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
    lines += _data_notes(name, frame)
    if rows:
        lines.append(f"  first {_shown_rows(rows)} rows:")
        lines += ["    " + truncate(line, _TABLE_LINE) for line in _sample_table(frame).splitlines()]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------ what to check first

_MOSTLY = 0.9  # the share of a column's text that must read as numbers (or dates) for the column to hold them
_MAX_LABELS = 30  # a text column with more distinct labels than this is no column of labels
_EXAMPLES = 3
_LISTED_COLUMNS = 8  # the missing-values line names at most this many columns
_NUMBER_MARKS = re.compile(r"[^\d\s]")  # '$1,234.50' is more than digits; '017' and '5003' may be codes


def _data_notes(name: str, frame: Any) -> list[str]:
    """The lines on what a careful analyst checks first (see the module's docstring); none for a tidy frame."""
    if not len(frame):
        return []
    try:
        return _checked_notes(name, frame)
    except Exception:  # advice over any data a notebook holds: a check that fails says nothing
        return []


def _checked_notes(name: str, frame: Any) -> list[str]:
    from nbagent.data import cleaning  # pandas is loaded: `frame` is a DataFrame

    rows = len(frame)
    sample = frame if rows <= CHECKED_ROWS else frame.iloc[_spread(rows, CHECKED_ROWS)]
    scope = "" if sample is frame else f" (in {len(sample):,} of the {rows:,} rows, evenly spaced)"
    notes: list[str] = []
    gaps: list[tuple[str, int, int]] = []  # (column, missing, of them blank text)
    for position in range(min(frame.shape[1], MAX_COLUMNS)):
        column, label = sample.iloc[:, position], str(frame.columns[position])
        text = _text_counts(column)
        blank = sum(count for value, count in text.items() if not value.strip())
        missing = int(column.isna().sum()) + blank
        if missing:
            gaps.append((label, missing, blank))
        filled = filled_text(column)
        note = _text_note(filled, cleaning) if filled else ""
        if note:
            notes.append(f"  {label}: {note}")
    if gaps:
        notes.append(_gaps_line(gaps, scope))
    duplicates = _duplicate_rows(sample)
    if duplicates:
        notes.append(
            f"  duplicates{scope}: {duplicates} rows repeat an earlier row; {name}.drop_duplicates() keeps one"
        )
    return notes


def _spread(rows: int, count: int) -> Any:
    import numpy as np  # loaded with pandas

    return np.unique(np.linspace(0, rows - 1, count).round().astype(np.int64))


def _text_counts(column: Any) -> Counter:
    """How many times each text value occurs in `column` (none for a column of numbers, dates or booleans)."""
    if column.dtype.kind in "biufcmM":
        return Counter()
    return Counter(value for value in column.to_numpy(dtype=object) if isinstance(value, str))


def text_kind(values: Counter) -> str:
    """ "numbers" or "dates" when most of a column's filled text values (value -> count) are written as one, else "".

    The one classifier of text columns: the card's notes and the conversion hint both ask it.
    """
    from nbagent.data import cleaning  # pandas is loaded: the values come from a frame

    total = sum(values.values())
    if not total:
        return ""
    for kind, reads_as in (("numbers", cleaning.looks_like_number), ("dates", cleaning.date_format)):
        if sum(count for value, count in values.items() if reads_as(value)) >= _MOSTLY * total:
            return kind
    return ""


def filled_text(column: Any) -> Counter:
    """How many times each filled (non-blank) text value occurs in `column`."""
    return Counter({value: count for value, count in _text_counts(column).items() if value.strip()})


def _text_note(values: Counter, cleaning: Any) -> str:
    """What a column's text really holds, when it is numbers, dates in mixed formats, or labels written several ways."""
    kind = text_kind(values)
    if kind == "numbers" and any(_NUMBER_MARKS.search(value) for value in values):
        numbers = {value: count for value, count in values.items() if cleaning.looks_like_number(value)}
        note = f"text holding numbers ({_listed(_number_examples(numbers))})"
        others = [value for value in values if value not in numbers]
        if others:
            note += f", {sum(values.values()) - sum(numbers.values())} not numbers ({_listed(others[:2])})"
        return note
    if kind == "dates":
        formats: dict[str, str] = {}  # format -> its first value
        for value in values:
            if shape := cleaning.date_format(value):
                formats.setdefault(shape, value)
        if len(formats) > 1:
            return f"text holding dates in mixed formats ({_listed(list(formats.values())[:_EXAMPLES])})"
    return _label_note(values)


def _number_examples(numbers: dict[str, int]) -> list[str]:
    """A few values of different forms, the most marked first ('-$1,020.00', '$18.46', '157.68')."""
    forms: dict[str, str] = {}
    for value in numbers:
        forms.setdefault(re.sub(r"\d+", "", value.strip()), value)
    shown = [forms[form] for form in sorted(forms, key=len, reverse=True)[:_EXAMPLES]]
    return shown + [value for value in numbers if value not in shown][: _EXAMPLES - len(shown)]


def labels_written_apart(values: Counter) -> bool:
    """A column of a few labels (filled text value -> count), some written several ways ('North', ' NORTH')."""
    return bool(_label_note(values))


def _label_note(values: Counter) -> str:
    """'North', 'north ', ' NORTH' are one label written 3 ways — for a column of a few labels, many times each."""
    labels: dict[str, Counter] = {}
    for value, count in values.items():
        labels.setdefault(" ".join(value.split()).casefold(), Counter())[value] += count
    if len(labels) > _MAX_LABELS or 2 * len(labels) > sum(values.values()):
        return ""
    spelled = [spellings for spellings in labels.values() if len(spellings) > 1]
    if not spelled:
        return ""
    shown = _listed([value for value, _ in max(spelled, key=len).most_common(_EXAMPLES)])
    return f"{len(labels)} labels written {len(values)} ways ({shown} are one label)"


def _gaps_line(gaps: list[tuple[str, int, int]], scope: str) -> str:
    shown = [f"{label} {missing}" + (f" ({blank} of them '')" if blank else "") for label, missing, blank in gaps]
    more = f", … {len(gaps) - _LISTED_COLUMNS} more columns" if len(gaps) > _LISTED_COLUMNS else ""
    line = f"  missing{scope}: {', '.join(shown[:_LISTED_COLUMNS])}{more}"
    return line + ("; isna() misses the ''" if any(blank for _, _, blank in gaps) else "")


def _duplicate_rows(frame: Any) -> int:
    """Rows that repeat an earlier one, where that is a mistake: some column is mostly distinct (an id, an amount),
    so a row seen twice was entered twice; in a frame of a few repeating labels, repeats are the data."""
    try:
        distinct = any(frame.iloc[:, i].nunique() * 2 >= len(frame) for i in range(frame.shape[1]))
        return int(frame.duplicated().sum()) if distinct else 0
    except TypeError:  # unhashable cells (lists, dicts)
        return 0


def _listed(values: list[str]) -> str:
    return ", ".join(truncate(repr(value), _CELL) for value in values)


def _key_notes(frames: list[tuple[str, Any]]) -> list[str]:
    """One line per column name that is a number (or a date) in one frame and text in another: a join key to fix."""
    if len(frames) < 2:
        return []
    try:
        seen: dict[str, dict[str, list[tuple[str, Any]]]] = {}  # column -> kind -> (frame, its first values)
        for name, frame in frames:
            head = frame.iloc[:CHECKED_ROWS]
            for position in range(min(frame.shape[1], MAX_COLUMNS)):
                column = head.iloc[:, position]
                kind = _held_as(column)
                if kind:
                    seen.setdefault(str(frame.columns[position]), {}).setdefault(kind, []).append((name, column))
        return [_key_line(column, kinds) for column, kinds in seen.items() if "text" in kinds and len(kinds) > 1]
    except Exception:
        return []


def _held_as(column: Any) -> str:
    """ "number", "date", "text" (every value a str) or ""."""
    kind = column.dtype.kind
    if kind in "iuf":
        return "number"
    if kind == "M":
        return "date"
    values = column.dropna().to_numpy(dtype=object)[:50] if kind in "OT" or str(column.dtype) == "str" else []
    return "text" if len(values) and all(isinstance(value, str) for value in values) else ""


def _key_line(column: str, kinds: dict[str, list[tuple[str, Any]]]) -> str:
    other = next(kind for kind in kinds if kind != "text")
    held = ", ".join(f"`{name}` ({values.dtype})" for name, values in kinds[other])
    (text_name, text), *more = kinds["text"]
    shown = _listed(list(dict.fromkeys(text.dropna().to_numpy(dtype=object)[:50]))[:2])
    line = f"- `{column}` is a {other} in {held} but text in `{text_name}` ({shown})"
    line += "".join(f", `{name}`" for name, _ in more)
    whole = other == "number" and not text.isna().any() and text.str.fullmatch(r"\s*\d{1,18}\s*").all()
    how = f"{text_name}[{column!r}].astype(int)" if whole else "one type"
    return f"{line}: compare or merge them as {how}"


def _shown_rows(rows: int) -> int:
    return rows if rows <= SMALL_FRAME_ROWS else SAMPLE_ROWS


def _sample_table(frame: Any) -> str:
    sample = frame.iloc[: _shown_rows(len(frame)), :MAX_COLUMNS]
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


def is_number(value: Any) -> bool:
    """True for a Python or numpy int or float (not a bool): a number an answer may hold."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return type(value).__module__ == "numpy" and getattr(getattr(value, "dtype", None), "kind", "-") in ("i", "u", "f")
