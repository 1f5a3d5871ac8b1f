"""Missing names: a key not found, a misspelled method, a column that is not there, row numbers for an index.

A misspelled method gets the close method names, not the columns; a missed row label goes to `row_labels`;
a missing column gets the columns of the frames the code uses, and the close column name.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from ..data_card import all_columns, data_frames, frames_in, shown_columns, value_kind
from ..error_keys import error_line, is_label_key, missing_attribute, missing_keys
from .code_errors import UNDEFINED
from .failure import Failure, frames_used
from .row_labels import row_label_hint, row_lookup

__all__ = ["row_numbers", "tuple_subset", "missing_attribute_hint", "missing_key"]


_PANDAS_KINDS = ("DataFrame", "Series", "DataFrameGroupBy", "SeriesGroupBy")


_ROW_NUMBERS = re.compile(r"'RangeIndex' object has no attribute")


def row_numbers(found: Failure) -> str:
    if not _ROW_NUMBERS.search(found.message):
        return ""
    columns = "; ".join(f"`{n}` has {shown_columns(f)}" for n, f in frames_in(found.source, found.namespace)[:2])
    return (
        f"Hint: that index holds row numbers (0, 1, 2, …), not dates or labels; use a column instead. {columns}".strip()
    )


def tuple_subset(found: Failure) -> str:
    if "subset columns with a tuple" in found.message:
        return "Hint: select several columns with a list, frame[['a', 'b']], or compute a new Series from them first."
    return ""


def missing_attribute_hint(found: Failure) -> str:
    """`df.summ()`: a misspelled method gets the close method names; `df.revenue` (not called) the columns."""
    named = missing_attribute(found.message)
    if named is None:
        return ""
    kind, attribute = named
    called = re.search(rf"\.{re.escape(attribute)}\s*\(", found.statement or found.source) is not None
    methods = _close_names(kind, attribute, 0.6 if called else 0.8)  # a name not called is likelier a column
    if kind in _PANDAS_KINDS and not called:
        columns = sorted(all_columns(frames_used(found)))
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


def missing_key(found: Failure) -> str:
    """A key not found: a row label missed in an index (`.loc[label]`, `s[label]`), or a missing column."""
    message = found.message
    query = found.cause == "UndefinedVariableError" and ".query(" in found.source  # a column a query string names
    if not (found.cause == "KeyError" or "not in index" in message or "do not exist" in message or query):
        return ""
    keys = missing_keys(message)
    row = row_lookup(found, keys) if keys else None
    if row is not None:
        return row_label_hint(*row)
    if keys and all(is_label_key(key) for key in keys):
        return row_label_hint(keys[0], "", None)
    return _columns_hint(found)


def _columns_hint(found: Failure) -> str:
    frames = frames_used(found)
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
    elsewhere = ""
    if len(missing) == 1:
        elsewhere = (
            _variable_not_column(missing[0], frames, found.namespace)
            or _suffixed_by_a_merge(missing[0], frames)
            or _column_of_another_frame(missing[0], frames, found.namespace)
        )
    if elsewhere:
        said.append(elsewhere)
    elif missing:
        where = f" in `{frames[0][0]}`" if len(frames) == 1 else ""
        close = difflib.get_close_matches(missing[0], sorted(columns), n=1, cutoff=0.6)
        meant = f" (did you mean {close[0]!r}?)" if close else ""
        named = (
            f"is no column {missing[0]!r}" if len(missing) == 1 else f"are no columns {', '.join(map(repr, missing))}"
        )
        said.append(f"There {named}{where}{meant}: use the columns listed, or compute it from them.")
    return "Hint: " + " ".join(said)


def _variable_not_column(column: str, frames: list[tuple[str, Any]], namespace: dict[str, Any]) -> str:
    """ "`revenue` is your variable, not a column of `sales`" when the code computed a Series of that name with one
    value per row of the frame (a 1.5B model computed `revenue`, then looked up `sales["revenue"]` for 8 steps)."""
    series = namespace.get(column)
    into, frame = frames[0]
    if value_kind(series) != "Series" or len(series) != len(frame) or not series.index.equals(frame.index):
        return ""
    return (
        f"`{column}` is your variable (a Series with one value per row of `{into}`), not a column of `{into}`: use "
        f"`{column}` itself where you wrote {into}[{column!r}] (a filter like {into}[{column} == ...] keeps the "
        "matching rows)."
    )


def _suffixed_by_a_merge(column: str, frames: list[tuple[str, Any]]) -> str:
    """ "'date' is in `merged` twice, as 'date_x' and 'date_y'": a merge of two frames that both had the column
    suffixed it (the clean run was told to merge `date` over from `sales` again, twice, and ran out of steps)."""
    into, frame = frames[0]
    suffixed = [str(c) for c in frame.columns if str(c).startswith(f"{column}_") and str(c) != column]
    if len(suffixed) < 2:
        return ""
    return (
        f"{column!r} is in `{into}` twice, as {' and '.join(map(repr, suffixed[:2]))}: the merge's two frames both had "
        f"{column!r}, and it added their suffixes. Use {into}[{suffixed[0]!r}] (the left frame's)."
    )


def _column_of_another_frame(column: str, frames: list[tuple[str, Any]], namespace: dict[str, Any]) -> str:
    """ "'region' is a column of `orders`, not of `refunds`" with the merge that brings it over, when another notebook
    frame has the column (a 1.5B model looked for `refunds['region']` four times, told "did you mean 'reason'?")."""
    used = {name for name, _ in frames}
    into, into_frame = frames[0]
    holders = [
        (name, frame)
        for name, frame in data_frames(namespace)
        if name not in used and column in map(str, frame.columns)
    ]
    for name, frame in holders:  # a join made earlier already holds it (the messy run grouped `orders` after a merge)
        if set(map(str, into_frame.columns)) <= set(map(str, frame.columns)):
            return f"{column!r} is a column of `{name}`, which also has every column of `{into}`: use `{name}`."
    for name, frame in holders:
        shared = [str(c) for c in into_frame.columns if str(c) in map(str, frame.columns) and str(c) != column]
        if not shared:
            return f"{column!r} is a column of `{name}`, not of `{into}`."
        key = shared[0]
        lookup = f"{name}[[{key!r}, {column!r}]]"
        repeats = _repeated_pairs(frame, key, column)
        if repeats:  # each pair once, or every repeat of it repeats a row of `into` (150 refunds became 159)
            lookup += ".drop_duplicates()"
        return (
            f"{column!r} is a column of `{name}`, not of `{into}`: bring it over by the column both have, into a new "
            f"variable: {into}.merge({lookup}, on={key!r})."
            + (
                f" (`{name}` repeats {repeats} of those pairs: drop them, or the merge repeats rows.)"
                if repeats
                else ""
            )
        )
    return ""


def _repeated_pairs(frame: Any, key: str, column: str) -> int:
    """How many (key, column) rows of `frame` repeat an earlier one; 0 where the frame cannot tell."""
    try:
        return int(frame[[key, column]].duplicated().sum())
    except Exception:  # a column pandas cannot hash, a frame of an odd kind: say nothing of repeats
        return 0


def _missing_names(message: str) -> list[Any]:
    """The keys the error says are missing: a KeyError's (pandas 3's wordings), a missing attribute, a query's name."""
    keys = missing_keys(message)
    if keys:
        return keys
    attribute = missing_attribute(message)
    if attribute:
        return [attribute[1]]
    named = UNDEFINED.search(error_line(message))
    return [named.group(1)] if named else []
