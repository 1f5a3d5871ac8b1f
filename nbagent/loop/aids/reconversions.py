"""A column cleaned as text again after an earlier step made it numbers.

A small model writes its whole program again at each step, its conversion first
(`orders['amount'] = orders['amount'].str.replace('$', '').astype(float)`). Once one step converted the
column in the frame itself, every later program fails on its first line: `.str` raises on a column of numbers
(or dates), whatever follows. Told so, the 1.5B model converted again in 3 of the next 5 steps of a measured run.
Where the notebook's frame already holds the column as numbers or dates, and nothing earlier in the code made it
text again, the text cleaning (`.str.replace(...)`, `.str.strip()`, …) is run as the column itself and the step
says so; what follows it (`.astype(float)`, `pd.to_numeric(..., errors='coerce')`) leaves numbers as they are.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from .bindings import last_assignment
from .code_checks import CodeFix, Edit, fixed, frame_column, is_method_call, is_text
from .data_card import value_kind

__all__ = ["TEXT_CLEANINGS", "column_assigned_before", "fix_reconversions", "notebook_column"]

# `.str` methods that clean text on the way to a number or a date (not `.str.contains`: a test, not a cleaning)
TEXT_CLEANINGS = frozenset({"replace", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix"})
_NOT_TEXT_KINDS = frozenset("biufcmM")  # numpy dtype kinds: bool, ints, floats, complex, timedeltas, datetimes
# methods whose result keeps the frame's columns and their types (rows selected, reordered or copied)
_ROW_SELECTIONS = frozenset(
    {"drop_duplicates", "dropna", "copy", "reset_index", "sort_values", "sort_index", "head", "tail", "query", "sample"}
)
_HOPS = 3  # selections followed back to a notebook frame: once = orders.drop_duplicates(); big = once[...]


def fix_reconversions(code: str, namespace: dict[str, Any]) -> CodeFix:
    """`code` with each text cleaning of a notebook frame's column that already holds numbers or dates run as
    the column itself (said in the fix's notes)."""
    return fixed(code, lambda tree: _reconversion_edits(tree, namespace))


def _reconversion_edits(tree: ast.Module, namespace: dict[str, Any]) -> Iterator[Edit]:
    for node in ast.walk(tree):  # outermost first: a chain's longest cleaning is met before its parts
        column = _cleaned_column(node)
        dtype = _held_dtype(column, tree, namespace) if column is not None else ""
        if dtype:
            source = ast.unparse(column)
            yield (
                node,
                source,
                f"{source} already holds {dtype}, not text: .str is for text, and it is already converted.",
            )


def _cleaned_column(node: ast.AST) -> ast.Subscript | None:
    """The `frame['col']` at the root of `frame['col'].str.replace(...).str.strip()` (only cleanings), else None."""
    steps = 0
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in TEXT_CLEANINGS
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "str"
    ):
        node, steps = node.func.value.value, steps + 1
    return node if steps and frame_column(node) is not None else None


def _held_dtype(column: ast.Subscript, tree: ast.Module, namespace: dict[str, Any]) -> str:
    """The dtype the column holds when the code reaches it, when that is known and not text, else "": a notebook
    frame's column, also through rows of it the code selected (`once = orders.drop_duplicates()`), unless the code
    assigned the column before."""
    frame_name, name = frame_column(column) or ("", "")
    frame = _notebook_rows(frame_name, column, tree, namespace, _HOPS)
    if frame is None or name not in frame.columns:
        return ""
    dtype = frame[name].dtype
    return str(dtype) if getattr(dtype, "kind", "O") in _NOT_TEXT_KINDS else ""


def _notebook_rows(name: str, use: ast.expr, tree: ast.Module, namespace: dict[str, Any], hops: int) -> Any:
    """The notebook frame whose columns `name` has at `use`: the frame itself when the code did not bind the name
    before, the one a selection of rows was taken from (`once = orders.drop_duplicates()`, `big =
    orders[orders['amount'] > 10]`), or the side of a merge that has the column; None when the code binds it
    otherwise, in a loop, or assigns the column."""
    column = getattr(use, "slice", None)
    if _looped(name, tree) or (is_text(column) and column_assigned_before(name, column.value, use, tree)):
        return None
    value = last_assignment(name, tree, before=use)
    if value is None:
        frame = namespace.get(name)
        return frame if value_kind(frame) == "DataFrame" else None
    if hops == 0:
        return None
    roots = [root] if (root := _rows_taken_from(value)) is not None else _merged_from(value)
    for root in roots:  # a merge's column is its left frame's, else its right one's
        at = ast.Subscript(value=root, slice=column) if is_text(column) else root
        ast.copy_location(at, value)  # read where the value is made: `x = x.drop_duplicates()` reads the x before
        frame = _notebook_rows(root.id, at, tree, namespace, hops - 1)
        if frame is not None and (not is_text(column) or column.value in frame.columns or len(roots) == 1):
            return frame
    return None


def _rows_taken_from(value: ast.expr) -> ast.Name | None:
    """`orders` of `orders.drop_duplicates()`, `orders[mask]`, `orders.loc[mask].copy()`: a selection of rows (or
    columns) that keeps the columns' types; None for anything else."""
    node = value
    while True:
        if is_method_call(node, *_ROW_SELECTIONS):
            node = node.func.value
        elif isinstance(node, ast.Subscript) and not is_text(node.slice):
            node = node.value
        elif isinstance(node, ast.Attribute) and node.attr in ("loc", "iloc"):
            node = node.value
        else:
            break
    return node if isinstance(node, ast.Name) and node is not value else None


def _merged_from(value: ast.expr) -> list[ast.Name]:
    """The frames of `a.merge(b, ...)` or `pd.merge(a, b, ...)`, each a name or a selection of one's rows
    (`orders[['order_id', 'amount']].drop_duplicates()`); [] for anything else."""
    if not (is_method_call(value, "merge") and value.args):
        return []
    owner = value.func.value
    sides = value.args[:2] if isinstance(owner, ast.Name) and owner.id in ("pd", "pandas") else [owner, value.args[0]]
    names = [side if isinstance(side, ast.Name) else _rows_taken_from(side) for side in sides]
    return [name for name in names if name is not None]


def _looped(name: str, tree: ast.Module) -> bool:
    """Whether a `for` binds `name` (its value at a use cannot be read from the code alone)."""
    return any(
        isinstance(node, ast.Name) and node.id == name
        for loop in ast.walk(tree)
        if isinstance(loop, (ast.For, ast.comprehension))
        for node in ast.walk(loop.target)
    )


def column_assigned_before(frame: str, column: str, use: ast.expr, tree: ast.Module) -> bool:
    """Whether a statement that ended ahead of `use` assigns `frame[column]` (it may be text again):
    `orders['amount'] = orders['amount'].str.replace(...)` reads the column before it assigns it."""
    at = (use.lineno, use.col_offset)
    for statement in ast.walk(tree):
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            continue
        if (statement.end_lineno or 0, statement.end_col_offset or 0) > at:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if any(frame_column(target) == (frame, column) for target in targets):
            return True
    return False


def notebook_column(read: ast.expr, tree: ast.Module, namespace: dict[str, Any]) -> Any:
    """The column `read` (`frame["col"]`) names as the notebook holds it, or None: when it names no frame's column,
    or the code changed the frame or the column before it (its values are then not the notebook's)."""
    frame_name, column = frame_column(read) or ("", "")
    frame = namespace.get(frame_name)
    if value_kind(frame) != "DataFrame" or column not in frame.columns:
        return None
    if last_assignment(frame_name, tree, before=read) is not None or column_assigned_before(
        frame_name, column, read, tree
    ):
        return None
    return frame[column]
