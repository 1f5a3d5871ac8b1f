"""A selection that can select nothing: `sales[sales["date"].dt.strftime("%Y-%m") == "June"]`.

The code runs, prints 0, and a 1.5B model reads 0 as the answer, or runs it again (seven times in one measured
run). What it needs to see is that the column never holds that value, and what it does hold. Only comparisons
this module can work out from the data without running the model's code are read: a notebook frame's column,
through a few pure steps (`.dt.strftime("%Y-%m")`, `.dt.month`, `.str.lower()`, `.astype(str)`, …), equal to a
literal.
"""

from __future__ import annotations

import ast
from typing import Any

from .code_checks import frame_column
from .data_card import value_kind

__all__ = ["empty_selection_lines", "empty_selections"]

_DT_FIELDS = frozenset({"year", "month", "day", "quarter", "dayofweek", "hour", "date"})
_DT_NAMES = frozenset({"month_name", "day_name"})
_STR_CASES = frozenset({"lower", "upper", "strip", "title", "casefold"})
_MOST_DISTINCT = 50_000  # distinct values worked through at most (a larger column is not read)
_EXAMPLES = 3


def empty_selections(code: str, namespace: dict[str, Any]) -> str:
    """One line per `column-expression == literal` in `code` that no row of the notebook frame meets, or ""."""
    return "".join(empty_selection_lines(code, namespace))


def empty_selection_lines(code: str, namespace: dict[str, Any]) -> list[str]:
    """The lines of `empty_selections`, one per comparison."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    rebound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    lines = []
    for node in ast.walk(tree):
        found = _compared(node, namespace)
        if found is None:
            continue
        expression, compared, literal = found
        values = _values_of(expression, namespace, rebound)
        if values is not None and len(values) and not (values == literal).any():
            lines.append(_said(expression, compared, literal, values))
    return list(dict.fromkeys(lines))


def _compared(node: ast.AST, namespace: dict[str, Any]) -> tuple[ast.expr, ast.expr, Any] | None:
    """(the expression, what it is compared with, its value) of `expression == literal` (either way round), or
    `expression == name` of a name that holds one number or text (`== max_amount`), else None."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
        return None
    left, right = node.left, node.comparators[0]
    for expression, other in ((left, right), (right, left)):
        if isinstance(other, ast.Constant) and isinstance(other.value, (str, int, float)):
            return expression, other, other.value
        if isinstance(other, ast.Name) and (value := _scalar(namespace.get(other.id))) is not None:
            return expression, other, value
    return None


def _scalar(value: Any) -> Any:
    """A number or a text as Python holds it (numpy's scalars too), else None."""
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():
        value = value.item()
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None


def _values_of(expression: ast.expr, namespace: dict[str, Any], rebound: set[str]) -> Any:
    """The distinct values `expression` takes over the notebook frame's rows, when it is a column through pure
    steps this module knows, else None."""
    steps: list[ast.expr] = []
    node = expression
    while frame_column(node) is None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            steps.append(node)
            node = node.func.value
        elif isinstance(node, ast.Attribute):
            steps.append(node)
            node = node.value
        else:
            return None
    frame_name, column = frame_column(node)
    frame = namespace.get(frame_name)
    if frame_name in rebound or value_kind(frame) != "DataFrame" or column not in frame.columns:
        return None
    values = frame[column].drop_duplicates()
    if len(values) > _MOST_DISTINCT:
        return None
    return _applied(values, steps[::-1])


def _applied(values: Any, steps: list[ast.expr]) -> Any:
    """`values` through the steps (attributes and calls, innermost first), or None at a step not known pure."""
    accessor = None
    for step in steps:
        if isinstance(step, ast.Attribute) and step.attr in ("dt", "str") and accessor is None:
            accessor = step.attr
            continue
        try:
            values = _one_step(values, accessor, step)
        except (AttributeError, TypeError, ValueError):
            return None
        if values is None:
            return None
        accessor = None
    return values if accessor is None else None


def _one_step(values: Any, accessor: str | None, step: ast.expr) -> Any:
    if isinstance(step, ast.Attribute):
        return getattr(values.dt, step.attr) if accessor == "dt" and step.attr in _DT_FIELDS else None
    if not isinstance(step, ast.Call) or not isinstance(step.func, ast.Attribute) or step.keywords:
        return None
    name, args = step.func.attr, step.args
    if accessor == "dt" and name == "strftime" and len(args) == 1 and _is_str(args[0]):
        return values.dt.strftime(args[0].value)
    if accessor == "dt" and name in _DT_NAMES and not args:
        return getattr(values.dt, name)()
    if accessor == "str" and name in _STR_CASES and not args:
        return getattr(values.str, name)()
    if accessor is None and name == "astype" and len(args) == 1 and isinstance(args[0], ast.Name):
        return values.astype(str) if args[0].id == "str" else None
    return None


def _is_str(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _said(expression: ast.expr, compared: ast.expr, value: Any, values: Any) -> str:
    shown = ", ".join(repr(one) for one in values.dropna().drop_duplicates().head(_EXAMPLES).tolist())
    name = ast.unparse(compared)
    if isinstance(compared, ast.Constant):
        what, fix = repr(value), "Compare with a value written the way the column writes it."
    else:
        what, fix = f"{name} ({value!r})", f"`{name}` is none of them: compare with one of the column's own values."
    if converted := _as_the_other_kind(ast.unparse(expression), name, value, values):
        fix = converted
    return (
        f"Note: no row has {ast.unparse(expression)} == {what}, so that selection is empty: its values are like "
        f"{shown}. {fix}\n"
    )


def _as_the_other_kind(expression: str, name: str, value: Any, values: Any) -> str:
    """The comparison to write where the column and the value are one number written two ways: a key that is
    text in one frame ('085') and a number in another (85). "" where converting meets no row either."""
    import pandas as pd  # `values` is a pandas Series: pandas is loaded

    if isinstance(value, (int, float)) and values.dtype.kind not in "iuf":
        numbers = pd.to_numeric(values.astype("string").str.strip(), errors="coerce")
        if (numbers == value).any():
            line = f"pd.to_numeric({expression}, errors='coerce') == {name}"
            return f"The column holds text and {name} a number, so they never match: compare them as numbers: {line}"
    if isinstance(value, str) and values.dtype.kind in "iuf":
        number = pd.to_numeric(value.strip(), errors="coerce")
        if number == number and (values == number).any():  # NaN (no number) is not equal to itself
            whole = float(number).is_integer()
            as_number = (f"int({name})" if whole else f"float({name})") if name.isidentifier() else f"{number:g}"
            line = f"{expression} == {as_number}"
            return f"The column holds numbers and {name} text, so they never match: compare them as numbers: {line}"
    return ""
