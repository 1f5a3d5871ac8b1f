"""A text test that selects rows, on a column with gaps, leaves the gaps out instead of failing.

Measured on messy notebook data: "How many clients signed up in 2023?" was answered first with
`clients[clients["signup_date"].str.contains("2023")]`, and the column's blanks made it fail ("Cannot mask with
non-boolean array containing NA / NaN values": `.str.contains` gives NaN for a gap). The 1.5B model then read a
`clients.csv` that never existed, rebound `clients`, and took six steps. A row whose text is missing does not
contain the text, so before a step runs each `.str.contains/startswith/endswith/match/fullmatch` of a notebook
frame's text column with gaps that selects rows (inside `[...]`, alone or joined with `&`, `|`, `~`) gets
`na=False`, and the step says so. Nothing of the model's runs on the data to decide it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from .code_checks import CodeFix, Edit, fixed, frame_column
from .reconversions import notebook_column

__all__ = ["fix_text_masks"]

_TESTS = {"contains", "startswith", "endswith", "match", "fullmatch"}


def fix_text_masks(code: str, namespace: dict[str, Any]) -> CodeFix:
    """`code` with each text test of a notebook frame's column with gaps that selects rows given `na=False` (a
    keyword of pandas' own: nothing is written with `pd`)."""
    return fixed(code, lambda tree: _mask_edits(tree, namespace))


def _mask_edits(tree: ast.Module, namespace: dict[str, Any]) -> Iterator[Edit]:
    for subscript in (node for node in ast.walk(tree) if isinstance(node, ast.Subscript)):
        for test in _selecting_tests(subscript.slice):
            why = _gaps(test, tree, namespace)
            if why:
                given = ast.Call(
                    test.func, test.args, [*test.keywords, ast.keyword(arg="na", value=ast.Constant(False))]
                )
                yield test, ast.unparse(given), why


def _selecting_tests(selection: ast.AST) -> list[ast.Call]:
    """The text tests without `na=` that `selection` (a subscript's slice) selects rows with: the slice itself, the
    rows part of `.loc[rows, cols]`, and the operands of `&`, `|`, `~` and parentheses within them."""
    if isinstance(selection, ast.Tuple) and selection.elts:
        selection = selection.elts[0]
    if isinstance(selection, ast.BinOp) and isinstance(selection.op, (ast.BitAnd, ast.BitOr)):
        return _selecting_tests(selection.left) + _selecting_tests(selection.right)
    if isinstance(selection, ast.UnaryOp) and isinstance(selection.op, ast.Invert):
        return _selecting_tests(selection.operand)
    if _text_test(selection):
        return [selection]  # type: ignore[list-item]
    return []


def _text_test(node: ast.AST) -> bool:
    """`frame["col"].str.<test>(...)` with no `na=` of its own."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _TESTS
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "str"
        and frame_column(node.func.value.value) is not None
        and all(keyword.arg != "na" for keyword in node.keywords)
    )


def _tests_give_gaps(dtype: Any) -> bool:
    """Whether a text test gives a gap for a gap: on Python objects and pandas' NA strings, not on pandas 3's `str`
    (False there)."""
    import pandas as pd  # loaded: the values are a frame's

    if isinstance(dtype, pd.StringDtype):
        return dtype.na_value is pd.NA
    return getattr(dtype, "kind", "") == "O"


def _gaps(test: ast.Call, tree: ast.Module, namespace: dict[str, Any]) -> str:
    """Why the test must be given `na=False`, or "" when its column is no notebook frame's text column with gaps as
    the code finds it."""
    column_read = test.func.value.value  # type: ignore[attr-defined]
    frame_name, column = frame_column(column_read)  # type: ignore[misc]
    values = notebook_column(column_read, tree, namespace)
    if values is None or not _tests_give_gaps(values.dtype):
        return ""
    gaps = int(values.isna().sum())
    if not gaps:
        return ""
    test_name = test.func.attr  # type: ignore[attr-defined]
    return (
        f"{frame_name}[{column!r}] has {gaps} missing value{'s' if gaps > 1 else ''}, where .str.{test_name} gives "
        "NaN, and NaN cannot select rows; na=False leaves those rows out"
    )
