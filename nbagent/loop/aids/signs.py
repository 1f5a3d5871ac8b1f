"""Money given back written as negative amounts, then subtracted: the total minus a negative total adds it.

Measured on messy notebook data: "our net revenue: the total amount of `orders` minus the money given back in
`refunds`", where every refund is written '-$157.68', was answered with `orders_total - refunds_total`: the
refunds counted twice the wrong way (347,306 where 170,342 was right). Where the question asks to take
something away and the code subtracts the total of a column whose values are all zero or below, the doubt names
the column and its sign. Nothing is said where the code takes the absolute value or the column holds any
positive amount: a doubt must be certain.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from .bindings import bound_value
from .code_checks import frame_column
from .data_card import is_number, value_kind
from .doubts import Mended

__all__ = ["negative_total_subtracted"]

_TAKEN_AWAY = re.compile(r"\b(minus|less|net|subtract\w*|deduct\w*|take away|taking away|after)\b", re.IGNORECASE)
_MONEY_MARKS = re.compile(r"[$€£,\s]")
_HOPS = 5  # names followed back to what they were bound to: total = refunds['amount'].sum(); net = a - total


def negative_total_subtracted(
    question: str, tree: ast.Module, namespace: dict[str, Any], answer: Any = None
) -> list[str]:
    """The code subtracts the total of a column that holds only amounts of zero or below, where the question
    asks to take it away — unless the answer is what adding them gives (the subtraction sits in a branch that did not
    run: the messy run's `if total_refunds < 0: final_answer(a + b) else: final_answer(a - b)` was refused)."""
    if not _TAKEN_AWAY.search(question):
        return []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)) or _answer_adds(node, answer, namespace):
            continue
        subtracted = bound_value(node.right, tree, _HOPS)
        if not _is_total(subtracted) or _takes_absolute(subtracted):
            continue
        for frame_name, column in _columns_read(subtracted):
            examples = _negative_only(namespace.get(frame_name), column)
            if examples:
                added = ast.unparse(ast.BinOp(left=node.left, op=ast.Add(), right=node.right))
                said = (
                    f"{frame_name}[{column!r}] holds amounts of zero or below ({examples}), so subtracting its total "
                    f"adds it back: {ast.unparse(node)} counts it the wrong way. Its total is already negative: "
                    f"add it, {added}"
                )
                return [Mended(said, (ast.unparse(node), added))]
    return []


def _answer_adds(node: ast.BinOp, answer: Any, namespace: dict[str, Any]) -> bool:
    """Whether `answer` is `left + right` and not `left - right`, for the numbers the two names hold."""
    sides = [namespace.get(side.id) if isinstance(side, ast.Name) else None for side in (node.left, node.right)]
    if not all(is_number(value) for value in (*sides, answer)):
        return False
    left, right, got = (float(value) for value in (*sides, answer))
    return math.isclose(got, left + right, rel_tol=1e-6) and not math.isclose(got, left - right, rel_tol=1e-6)


def _is_total(node: ast.AST) -> bool:
    return _calls(node, "sum")


def _takes_absolute(node: ast.AST) -> bool:
    negated = any(isinstance(op, ast.UnaryOp) and isinstance(op.op, ast.USub) for op in ast.walk(node))
    return negated or _calls(node, "abs")


def _calls(node: ast.AST, name: str) -> bool:
    """Whether `node` calls `name`, as a method (`x.sum()`) or a builtin (`sum(x)`)."""
    return any(
        isinstance(call, ast.Call)
        and (
            (isinstance(call.func, ast.Attribute) and call.func.attr == name)
            or (isinstance(call.func, ast.Name) and call.func.id == name)
        )
        for call in ast.walk(node)
    )


def _columns_read(node: ast.AST) -> list[tuple[str, str]]:
    """The `frame['column']` subscripts in `node`, in order."""
    return [read for sub in ast.walk(node) if (read := frame_column(sub)) is not None]


def _negative_only(frame: Any, column: str) -> str:
    """A few of the column's values, when all its amounts are zero or below and some below; "" otherwise."""
    if value_kind(frame) != "DataFrame" or column not in getattr(frame, "columns", ()):
        return ""
    import pandas as pd  # the frame is a pandas one: pandas is there

    values = frame[column]
    raw = values.dropna()
    if values.dtype.kind not in "iuf":
        values = pd.to_numeric(
            values.astype("string").str.replace(_MONEY_MARKS.pattern, "", regex=True), errors="coerce"
        )
    amounts = values.dropna()
    if amounts.empty or (amounts > 0).any() or not (amounts < 0).any():
        return ""
    return ", ".join(repr(value) if isinstance(value, str) else f"{value:g}" for value in raw.head(2).tolist())
