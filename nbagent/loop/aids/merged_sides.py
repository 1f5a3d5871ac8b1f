"""A column both frames of a merge have, read from the side the question does not ask about.

`refunds.merge(orders, on="order_id")` holds `amount_x` (the refunds') and `amount_y` (the orders'). The messy
run, asked "how much was refunded … on orders from the West region", totalled `amount_y`: the orders' amounts,
a number of the right kind, and wrong. Which side a question asks about is read from its words: the first word
that is a frame's name or a form of it ("refunded", "orders") names the side. A doubt, not a proof: the
words may mislead, so a model that sends the same answer again is believed.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .code_checks import is_method_call, is_text
from .data_card import value_kind

__all__ = ["other_side_read"]

_WORD = re.compile(r"[A-Za-z_]\w*")
_SUFFIXES = {"_x": 0, "_y": 1}  # pandas' default suffixes: the left frame's, the right frame's


def other_side_read(question: str, variables: list[str], tree: ast.Module, namespace: dict[str, Any]) -> list[str]:
    """Why the code's `<merged>['<column>_y']` (or `_x`) is the other frame's column, or []. `variables`: the
    frames the question points at; a side named after one (`refunds_clean`) is that frame's."""
    asked = _first_frame_named(question, variables)
    if asked is None:
        return []
    for merged, sides in _merges(tree, namespace).items():
        origins = [_origin(side, variables) for side in sides]
        shared = _shared_columns(*(namespace[side] for side in sides))
        for column, suffix in _suffixed_reads(tree, shared):
            side = _SUFFIXES[suffix]
            if asked in origins and origins[side] != asked:
                other = "_y" if suffix == "_x" else "_x"
                return [
                    f"the question asks about `{asked}`, but the code reads {merged}[{column + suffix!r}], which is "
                    f"`{sides[side]}`'s {column!r} after the merge ({merged} = {sides[0]}.merge({sides[1]}, …)): "
                    f"`{sides[1 - side]}`'s is {merged}[{column + other!r}]"
                ]
    return []


def _origin(side: str, variables: list[str]) -> str:
    """The question's frame a merged frame is named after (`refunds_clean` → `refunds`), or the name itself."""
    return next((name for name in variables if side == name or side.startswith(name)), side)


def _first_frame_named(question: str, frames: list[str]) -> str | None:
    """The frame whose name, or a form of it, comes first in the question ("refunded" for `refunds`)."""
    stems = {frame: frame.lower().removesuffix("s") for frame in frames}
    for word in _WORD.findall(question.lower()):
        for frame, stem in stems.items():
            if len(stem) >= 4 and word.startswith(stem):
                return frame
    return None


def _merges(tree: ast.Module, namespace: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """{merged name: (left frame, right frame)} for `m = a.merge(b, …)` and `m = pd.merge(a, b, …)` of the
    namespace's frames, with pandas' default suffixes."""
    found: dict[str, tuple[str, str]] = {}
    for statement in tree.body:
        if not (isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name)):
            continue
        call = statement.value
        if not is_method_call(call, "merge") or any(keyword.arg == "suffixes" for keyword in call.keywords):
            continue
        operands = [call.func.value, *call.args] if not _is_pandas(call.func.value) else list(call.args)
        names = [operand.id for operand in operands[:2] if isinstance(operand, ast.Name)]
        if len(names) == 2 and all(value_kind(namespace.get(name)) == "DataFrame" for name in names):
            found[statement.targets[0].id] = (names[0], names[1])
    return found


def _is_pandas(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("pd", "pandas")


def _shared_columns(left: Any, right: Any) -> set[str]:
    return {str(column) for column in left.columns} & {str(column) for column in right.columns}


def _suffixed_reads(tree: ast.Module, shared: set[str]) -> list[tuple[str, str]]:
    """(column, suffix) of each `['amount_y']` the code reads of a column both sides have."""
    reads = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and is_text(node.slice):
            text = node.slice.value
            for suffix in _SUFFIXES:
                if text.endswith(suffix) and text.removesuffix(suffix) in shared:
                    reads.append((text.removesuffix(suffix), suffix))
    return reads
