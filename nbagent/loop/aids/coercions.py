"""Numbers lost to `errors="coerce"`: a conversion that read some of a column's numbers as missing, silently.

Measured on messy notebook data: `pd.to_numeric(orders["amount"].str.replace("$", ""), errors="coerce")` ran
without an error and turned every amount of a thousand or more ('$1,891.37': the ',' was still there) into NaN;
the chart drawn from it was wrong by a third and nothing said so. After a step that ran, each such conversion of a
column of the task's frames (as the task gave them) is read again: values the data card would read as numbers that
came out missing are counted, and the note names a few and the conversion that reads them all.
"""

from __future__ import annotations

import ast
from typing import Any

from .code_checks import frame_column, is_method_call
from .data_card import value_kind

__all__ = ["number_conversion", "numbers_lost"]

_SHOWN = 2


def number_conversion(column: str) -> str:
    """The line that reads a column of numbers written as text ('$1,891.37', blanks) as numbers: `column` is how the
    code names it (`orders['amount']`). Every hint and doubt about such a column gives this one line."""
    return f"pd.to_numeric({column}.str.replace(r'[$,]', '', regex=True), errors='coerce')"


def numbers_lost(tree: ast.Module, namespace: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """One line per `target = pd.to_numeric(<a given frame's text column, cleaned>, errors="coerce")` in `tree`
    whose result is missing where the column held a number."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and _coerced(node.value)):
            continue
        source = _source_column(node.value.args[0])
        result = _bound(node.targets[0], namespace)
        if source is None or result is None:
            continue
        line = _lost_line(source, given, result)
        if line:
            found.append(line)
    return found[:1]


def _coerced(node: ast.AST) -> bool:
    """`pd.to_numeric(x, errors="coerce")`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_numeric"
        and len(node.args) == 1
        and any(
            k.arg == "errors" and isinstance(k.value, ast.Constant) and k.value.value == "coerce" for k in node.keywords
        )
    )


def _source_column(node: ast.AST) -> tuple[str, str] | None:
    """The `frame["col"]` at the root of `frame["col"].str.replace(...).str.strip()` (calls and attributes only)."""
    while not frame_column(node):
        if is_method_call(node):
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            return None
    return frame_column(node)


def _bound(target: ast.AST, namespace: dict[str, Any]) -> Any:
    """What the step left in `target` (a name, or a frame's column)."""
    if isinstance(target, ast.Name):
        value = namespace.get(target.id)
        return value if value_kind(value) == "Series" else None
    read = frame_column(target)
    if read is None or value_kind(frame := namespace.get(read[0])) != "DataFrame" or read[1] not in frame.columns:
        return None
    return frame[read[1]]


def _lost_line(source: tuple[str, str], given: dict[str, Any], result: Any) -> str:
    from nbagent.data.cleaning import looks_like_number  # pandas is loaded: the values are a frame's

    frame_name, column = source
    frame = given.get(frame_name)
    if value_kind(frame) != "DataFrame" or column not in frame.columns:
        return ""
    texts = frame[column]
    if texts.dtype.kind in "iufb" or len(texts) != len(result) or not texts.index.equals(result.index):
        return ""
    numbers = texts.map(lambda value: isinstance(value, str) and looks_like_number(value))
    lost = texts[numbers & result.isna().to_numpy()]
    if lost.empty:
        return ""
    shown = ", ".join(repr(value) for value in lost.head(_SHOWN).tolist())
    ref = f"{frame_name}[{column!r}]"
    return (
        f"the conversion of {ref} read {len(lost)} of its numbers as missing ({shown}): errors='coerce' turns what "
        f"it cannot read into NaN, and their text still held a mark ('$', ','). Convert them all: "
        + number_conversion(ref)
    )
