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
from typing import Any

from .code_checks import CodeFix, apply_edits, frame_column
from .data_card import value_kind

__all__ = ["fix_reconversions"]

# `.str` methods that clean text on the way to a number or a date (not `.str.contains`: a test, not a cleaning)
_CLEANING = frozenset({"replace", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix"})
_NOT_TEXT_KINDS = frozenset("biufcmM")  # numpy dtype kinds: bool, ints, floats, complex, timedeltas, datetimes


def fix_reconversions(code: str, namespace: dict[str, Any]) -> CodeFix:
    """`code` with each text cleaning of a notebook frame's column that already holds numbers or dates run as
    the column itself (said in the fix's notes)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return CodeFix(code)
    edits: list[tuple[ast.AST, str]] = []
    dtypes: dict[ast.AST, str] = {}
    for node in ast.walk(tree):  # outermost first: a chain's longest cleaning is met before its parts
        column = _cleaned_column(node)
        if column is None or any(node in set(ast.walk(edited)) for edited, _ in edits):
            continue
        dtype = _held_dtype(column, tree, namespace)
        if dtype:
            edits.append((node, ast.unparse(column)))
            dtypes[node] = f"{ast.unparse(column)} already holds {dtype}, not text"
    return apply_edits(code, edits, lambda node: f"{dtypes[node]}: .str is for text, and it is already converted.")


def _cleaned_column(node: ast.AST) -> ast.Subscript | None:
    """The `frame['col']` at the root of `frame['col'].str.replace(...).str.strip()` (only cleanings), else None."""
    steps = 0
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CLEANING
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "str"
    ):
        node, steps = node.func.value.value, steps + 1
    return node if steps and frame_column(node) is not None else None


def _held_dtype(column: ast.Subscript, tree: ast.Module, namespace: dict[str, Any]) -> str:
    """The dtype of the notebook frame's column when it is not text and the code did not bind the frame or the
    column before this use, else ""."""
    frame_name, name = frame_column(column) or ("", "")
    frame = namespace.get(frame_name)
    if value_kind(frame) != "DataFrame" or name not in frame.columns or _bound_before(column, tree):
        return ""
    dtype = frame[name].dtype
    return str(dtype) if getattr(dtype, "kind", "O") in _NOT_TEXT_KINDS else ""


def _bound_before(column: ast.Subscript, tree: ast.Module) -> bool:
    """Whether a statement ended ahead of `column` assigns its frame's name or the column itself (it may be text
    again): `orders['amount'] = orders['amount'].str.replace(...)` reads the column before it assigns it."""
    use = (column.lineno, column.col_offset)
    frame, spelled = ast.unparse(column.value), ast.unparse(column)
    for statement in ast.walk(tree):
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For)):
            continue
        if (statement.end_lineno or 0, statement.end_col_offset or 0) > use and not isinstance(statement, ast.For):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for node in (node for target in targets for node in ast.walk(target)):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == frame:
                return True
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and ast.unparse(node) == spelled:
                return True
    return False
