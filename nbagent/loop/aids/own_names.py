"""A name the notebook keeps, bound by agent code: the code runs with a name of its own instead.

The sandbox never lets agent code rebind a notebook variable the task did not give it (`customers`, when only
`sales` was given): the notebook stays the user's. A 1.5B model picks the natural name anyway — a clean run's
`customers = sales["customer_id"].unique()` was refused four times in four shapes, and the run ended with no
answer. For a small model, a name the code binds that the notebook keeps is given a free name of its own for the
rest of the task (`customers_`), every use of it renamed in each later step too, and the step says so. The
notebook's variable is never read or changed: a name the code only reads stays as written (and is refused).
"""

from __future__ import annotations

import ast
from collections.abc import Collection

from .code_checks import CodeFix, apply_edits

__all__ = ["rename_kept_names"]


def rename_kept_names(code: str, kept: Collection[str], renamed: dict[str, str], taken: Collection[str]) -> CodeFix:
    """`code` with each name it binds that is in `kept` (and each name `renamed` before, in this task) written as
    the free name `renamed` gives it; `renamed` gains the new ones. `taken`: names already in use."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return CodeFix(code)
    names = [node for node in ast.walk(tree) if isinstance(node, ast.Name)]
    for node in names:
        if isinstance(node.ctx, ast.Store) and node.id in kept and node.id not in renamed:
            renamed[node.id] = _free(node.id, {*taken, *kept, *renamed.values()})
    edits: list[tuple[ast.AST, str]] = [(node, renamed[node.id]) for node in names if node.id in renamed]
    if not edits or any(ast.get_source_segment(code, node) != node.id for node, _ in edits):
        return CodeFix(code)  # (a position Python reports oddly, inside an f-string: run as written)
    fixed = apply_edits(code, edits, lambda _node: "")
    said = sorted({node.id for node, _ in edits})
    return CodeFix(fixed.code, [_note(said, renamed)])


def _free(name: str, taken: set[str]) -> str:
    candidate = f"{name}_"
    while candidate in taken:
        candidate += "_"
    return candidate


def _note(names: list[str], renamed: dict[str, str]) -> str:
    pairs = ", ".join(f"`{name}` as `{renamed[name]}`" for name in names)
    which = ", ".join(f"`{name}`" for name in names)
    return (
        f"nbagent ran your code with {pairs}: {which} is one of the notebook's variables the task did not give, so "
        f"your code keeps its own value under the new name (write either name from now on)."
    )
