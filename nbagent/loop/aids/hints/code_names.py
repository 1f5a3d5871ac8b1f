"""What code names: the frame, the column or the Series a piece of the failing code stands for.

The hints read the failing code's own names against the namespace (`frame["c"]`, `frame.c`, `s[mask]`,
`sales.dropna()`), so the lines they show are built from the code, never from a literal to paste.
"""

from __future__ import annotations

import ast
from typing import Any

from ..code_checks import is_method_call, is_text
from ..data_card import value_kind
from .failure import segment

__all__ = ["known_value", "column_of", "series_of", "is_series_code", "frame_code", "texts", "after_call", "UNKNOWN"]


UNKNOWN = object()


def known_value(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The value a literal or a variable of the namespace stands for, else `UNKNOWN`."""
    if isinstance(node, ast.Name):
        return namespace.get(node.id, UNKNOWN)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNKNOWN


def column_of(node: ast.AST, namespace: dict[str, Any]) -> tuple[str, Any, str] | None:
    """(the frame's name, the frame, the column) for `frame["c"]`, `frame.c` or `frame.loc[…, "c"]`, else None."""
    if isinstance(node, ast.Subscript):
        base, key = node.value, node.slice
        if isinstance(base, ast.Attribute) and base.attr in ("loc", "at") and isinstance(key, ast.Tuple):
            base, key = base.value, key.elts[-1]
        if isinstance(base, ast.Name) and is_text(key):
            frame = namespace.get(base.id)
            if value_kind(frame) == "DataFrame" and key.value in map(str, frame.columns):
                return base.id, frame, key.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        frame = namespace.get(node.value.id)
        if value_kind(frame) == "DataFrame" and node.attr in map(str, frame.columns):
            return node.value.id, frame, node.attr
    return None


def series_of(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The Series a variable or a frame's column names (`s`, `df["c"]`, `df.c`), else None."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) == "Series" else None
    column = column_of(node, namespace)
    return column[1][column[2]] if column else None


_FRAME_MAKERS = {"to_frame", "reset_index", "unstack", "agg", "aggregate", "describe", "value_counts"}


def is_series_code(node: ast.AST, namespace: dict[str, Any]) -> bool:
    """Whether code makes a Series, as far as its form tells: a column, arithmetic on one, a method of one."""
    if series_of(node, namespace) is not None:
        return True
    if isinstance(node, ast.BinOp):
        return is_series_code(node.left, namespace) or is_series_code(node.right, namespace)
    if isinstance(node, ast.UnaryOp):
        return is_series_code(node.operand, namespace)
    if isinstance(node, ast.Subscript):  # s[mask], table[mask]["c"]
        return is_series_code(node.value, namespace) or (
            is_text(node.slice) and frame_code(node.value, namespace) is not None
        )
    if is_method_call(node) and node.func.attr not in _FRAME_MAKERS:
        return is_series_code(node.func.value, namespace)
    return False


_ROW_KEEPERS = {"query", "dropna", "copy", "sort_values", "head", "tail", "drop_duplicates", "fillna", "assign"}


def frame_code(node: ast.AST, namespace: dict[str, Any]) -> Any:
    """The frame code stands for when it keeps a frame's columns (`sales`, `sales[mask]`, `sales.dropna()`), else None."""
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        return value if value_kind(value) == "DataFrame" else None
    if isinstance(node, ast.Subscript) and not texts(node.slice):
        return frame_code(node.value, namespace)
    if is_method_call(node) and node.func.attr in _ROW_KEEPERS:
        return frame_code(node.func.value, namespace)
    return None


def texts(node: ast.AST) -> list[str]:
    """The column names of a text or a list of texts, else []."""
    if is_text(node):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(is_text(item) for item in node.elts):
        return [item.value for item in node.elts]
    return []


def after_call(tree: ast.AST, call: ast.AST, text: str) -> str:
    """What the code does to a call's result right after it: `.sum()` in `….groupby("a").sum()`, or ""."""
    for node in ast.walk(tree):
        if is_method_call(node) and node.func.value is call:
            inner, outer = segment(text, call), segment(text, node)
            return outer[len(inner) :] if outer.startswith(inner) else ""
    return ""
