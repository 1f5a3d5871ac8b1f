"""Text that holds numbers or dates: a conversion or a total that fails on it, said with the column's own values.

Measured on messy notebook data: a 1.5B model meets `could not convert string to float: '$315.92'` and
tries `astype(float)` in four shapes, each taking out one more character; it meets pandas' own advice
("passing `format='mixed'`") for dates written three ways and ignores it. What it needs is what a person
would see at a glance: which column holds text, what the text looks like (a few of its values, the
blanks), and the one conversion that reads all of it, into a new variable so the notebook's data stays.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..bindings import last_assignment
from ..code_checks import is_method_call
from ..coercions import number_conversion
from ..data_card import data_frames, filled_text, text_kind
from .failure import parsed

__all__ = ["text_conversion", "already_converted", "whole_frame_converted", "numbers_columns_named"]

_NUMBER_FAILED = re.compile(
    r"could not convert string to float|Unable to parse string|invalid literal for int\(\)|"
    r"can only concatenate str|unsupported operand type\(s\) for [-+*/]+: '(?:int|float|str)' and '(?:str|int|float)'|"
    r"agg function failed \[how->\w+,dtype->(?:object|str)\]|does not support operation '(?:sum|mean|prod)'|"
    r"Could not convert .+ to numeric|not supported between instances of 'str' and '(?:int|float)'|"
    r"Cannot perform reduction '\w+' with string dtype|type str doesn't define __round__|"
    r"ufunc '\w+' did not contain a loop with signature matching types|"
    r"'str' object has no attribute '(?:round|astype|item|mean|sum)'|"  # a total of text is text
    r"no numeric data to plot"  # a chart of totals that joined texts
)
_DATE_FAILED = re.compile(
    r"doesn't match format|Unknown datetime string format|Can only use \.dt accessor with datetimelike|"
    r"time data .* does not match|Given date string .* not likely a datetime|Invalid comparison between dtype=(?:str|object)"
)
_BLANK_FAILED = re.compile(r"could not convert string to float: '\s*'|invalid literal for int\(\) with base 10: '\s*'")
_STR_ON_NON_TEXT = re.compile(r"Can only use \.str accessor with string values")
_KIND_WORDS = {"b": "booleans", "i": "numbers", "u": "numbers", "f": "numbers", "c": "numbers", "m": "durations"}
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_QUOTED = re.compile(r"['\"]([^'\"\n]{1,80})['\"]")
_MARKS = re.compile(r"[$€£,%()]")
_SAMPLE = 400
_EXAMPLES = 3
_FAILED_ON = re.compile(r"(?:float|base 10|parse string): ['\"](.{1,80}?)['\"](?: at position|$)", re.M)


def text_conversion(found: Any) -> str:
    """The hint for a step that failed on a text column holding numbers or dates, or ""."""
    numbers, dates = bool(_NUMBER_FAILED.search(found.message)), bool(_DATE_FAILED.search(found.message))
    if not (numbers or dates):
        return ""
    statement = found.statement or found.source
    columns = _text_columns_in(statement, found.namespace) or _text_columns_in(
        _names_traced(statement, found.earlier_code, found.code), found.namespace
    )
    for frame_name, column, values in columns:
        kind = _holds(values)
        if kind == "numbers" and numbers or kind == "dates" and (dates or numbers):
            if kind == "dates":
                return _dates_hint(frame_name, column, values)
            return _numbers_hint(frame_name, column, values, blank_failed=bool(_BLANK_FAILED.search(found.message)))
    return ""


def whole_frame_converted(found: Any) -> str:
    """`clients.astype(int)`, a whole frame converted, failing on a column of words ('Ada Stone'): said as that,
    with the one column to convert. The messy run was told its key column held numbers as text, and converted
    the whole frame again."""
    if not _NUMBER_FAILED.search(found.message) or (failed_on := _FAILED_ON.search(found.message)) is None:
        return ""
    frames = dict(data_frames(found.namespace))
    for node in ast.walk(parsed(found.statement or found.source) or ast.Module(body=[], type_ignores=[])):
        if not (is_method_call(node, "astype") and isinstance(node.func.value, ast.Name) and node.args):
            continue
        name, to = node.func.value.id, ast.unparse(node.args[0])
        frame = frames.get(name)
        words = _column_holding(frame, failed_on.group(1)) if frame is not None else None
        if words is None or isinstance(node.args[0], ast.Dict):
            continue
        said = (
            f"Hint: {name}.astype({to}) converts every column of `{name}`, and {name}[{words!r}] holds words "
            f"({failed_on.group(1)!r}), not numbers. Convert only the column that holds numbers"
        )
        column = _numbers_column(frame, found.statement or found.source)
        if column is None:
            return f"{said}, into a new variable: {name}[<column>].astype({to})."
        return f"{said}, into a new frame: {name}.assign({column}={name}[{column!r}].astype({to}))."
    return ""


def numbers_columns_named(found: Any) -> list[tuple[str, str]]:
    """(frame, column) of each notebook frame's column of numbers written as text that the failing statement names,
    or the statements that made the names it reads (`monthly = orders.groupby(…)['amount'].sum()`)."""
    statement = found.statement or found.source
    traced = f"{statement}\n{_names_traced(statement, found.earlier_code, found.code)}"
    return [
        (frame_name, column)
        for frame_name, column, values in _text_columns_in(traced, found.namespace)
        if _holds(values) == "numbers"
    ]


def _column_holding(frame: Any, text: str) -> str | None:
    """The text column of `frame` that holds the value `text` and no numbers (names, labels), or None."""
    for position, column in enumerate(frame.columns):
        values = frame.iloc[:, position]
        if values.dtype.kind in "OSU" or str(values.dtype) in ("str", "string"):
            if _holds(values) != "numbers" and (values == text).any():
                return str(column)
    return None


def _numbers_column(frame: Any, statement: str) -> str | None:
    """The column the statement names (quoted) that holds plain numbers as text, else the frame's only such column."""
    quoted = set(_QUOTED.findall(statement))
    columns = [
        str(column)
        for position, column in enumerate(frame.columns)
        if str(column).isidentifier()
        and str(frame.iloc[:, position].dtype) in ("object", "str", "string")
        and _holds(frame.iloc[:, position]) == "numbers"
        and not frame.iloc[:, position].astype(str).str.contains(_MARKS.pattern).any()
    ]
    named = [column for column in columns if column in quoted]
    return named[0] if named else (columns[0] if len(columns) == 1 else None)


def _names_traced(statement: str, *codes: str) -> str:
    """What the statement's names were last bound to in the codes, in order (`refunds_total =
    refunds['amount'].sum()` for a failing `orders_total - refunds_total`): the columns behind a total that stayed
    text. A code that cannot be read (an earlier step's syntax error) is skipped."""
    bound = {}
    names = set(_NAME.findall(statement))
    for tree in filter(None, map(parsed, codes)):
        for name in names:
            if (value := last_assignment(name, tree)) is not None:
                bound[name] = ast.unparse(value)
    return "\n".join(bound.values())


def _text_columns_in(text: str, namespace: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(frame, column, values) of the text columns of the notebook frames `text` names, for the columns it names
    too, quoted or as an attribute (`orders["amount"]`, `orders.groupby("region")["amount"]`, `orders.amount`)."""
    words = set(_NAME.findall(text)) | set(_QUOTED.findall(text))
    found: list[tuple[str, str, Any]] = []
    for frame_name, frame in data_frames(namespace):
        if frame_name not in words:
            continue
        for position, column in enumerate(frame.columns):
            values = frame.iloc[:, position]
            is_text = values.dtype.kind in "OSU" or str(values.dtype) in ("str", "string")
            if str(column) in words and is_text:
                found.append((frame_name, str(column), values))
    return found


def _sample(values: Any) -> Any:
    return values.iloc[:_SAMPLE] if len(values) <= _SAMPLE else values.sample(_SAMPLE, random_state=0)


def _holds(values: Any) -> str:
    """ "numbers", "dates" or "" for what a text column's filled values mostly are (in a sample of them)."""
    return text_kind(filled_text(_sample(values)))


def _examples(values: Any, marked: bool) -> str:
    """A few distinct raw values, those with marks ($ , % parentheses) first when `marked`."""
    filled = list(filled_text(_sample(values)))
    if marked:
        filled.sort(key=lambda text: not _MARKS.search(text))
    return ", ".join(repr(text) for text in filled[:_EXAMPLES])


def _blank_count(values: Any) -> int:
    from nbagent.data import is_missing  # needs pandas, loaded here: `values` is a column of a frame

    return int(is_missing(values).sum())


def _blanks(values: Any) -> str:
    blank = _blank_count(values)
    return f" and {blank} blank or missing" if blank else ""


def _numbers_hint(frame_name: str, column: str, values: Any, blank_failed: bool = False) -> str:
    ref = f"{frame_name}[{column!r}]"
    if blank_failed:  # the marks are out already: the model took them out and met a blank, then did it again 3 times
        return (
            f"Hint: the $ and , are out, but {ref} also holds blanks ({_blank_count(values)} blank or missing), which "
            f"astype(float) cannot read. pd.to_numeric reads them as missing: "
            f"{number_conversion(ref)}, into a new variable."
        )
    return (
        f"Hint: {ref} holds numbers written as text ({_examples(values, marked=True)}{_blanks(values)}), so it "
        f"cannot be totalled or converted as it is. Take out the $ and , first, then convert, into a new variable "
        f"(your notebook's `{frame_name}` stays as it is): "
        f"{number_conversion(ref)}."
    )


def _dates_hint(frame_name: str, column: str, values: Any) -> str:
    ref = f"{frame_name}[{column!r}]"
    return (
        f"Hint: {ref} holds dates written as text, in more than one format ({_examples(values, marked=False)}"
        f"{_blanks(values)}). Convert them all at once into a new variable (your notebook's `{frame_name}` stays "
        f"as it is): pd.to_datetime({ref}, format='mixed', errors='coerce')."
    )


def already_converted(found: Any) -> str:
    """`.str` on a column that no longer holds text: an earlier step converted it (in the frame itself)."""
    if not _STR_ON_NON_TEXT.search(found.message):
        return ""
    text = found.statement or found.source
    frames = dict(data_frames(found.namespace))
    for frame_name, column in _text_accessed(text) or _named_columns(text, frames):
        frame = frames.get(frame_name)
        if frame is None or column not in map(str, frame.columns):
            continue
        position = [str(name) for name in frame.columns].index(column)
        kind = frame.iloc[:, position].dtype.kind
        if kind in "biufcmM":
            held = "dates" if kind == "M" else _KIND_WORDS[kind]
            ref = f"{frame_name}[{column!r}]"
            return (
                f"Hint: {ref} already holds {held} ({frame.iloc[:, position].dtype}), not text: an earlier step "
                f"converted it in `{frame_name}` itself. Use {ref} as it is, without .str and without converting "
                "it again."
            )
    return ""


def _text_accessed(text: str) -> list[tuple[str, str]]:
    """The `frame['column']` the code reads `.str` of (the messy run's line named two columns, and the hint the
    other one); [] when the code cannot be read."""
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return []
    return [
        (node.value.value.id, node.value.slice.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "str"
        and isinstance(node.value, ast.Subscript)
        and isinstance(node.value.value, ast.Name)
        and isinstance(node.value.slice, ast.Constant)
        and isinstance(node.value.slice.value, str)
    ]


def _named_columns(text: str, frames: dict[str, Any]) -> list[tuple[str, str]]:
    """Every (frame, column) the text names, frame and column both as words."""
    words = set(_NAME.findall(text)) | set(_QUOTED.findall(text))
    return [
        (frame_name, str(column))
        for frame_name, frame in frames.items()
        if frame_name in words
        for column in frame.columns
        if str(column) in words
    ]
