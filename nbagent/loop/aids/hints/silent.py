"""A silent step: what a small model reads after code that printed nothing.

A 1.5B model reads "printed nothing" as "it failed" and does it again; shown the variable its last line
made (as a notebook would show it), it goes on to use it.
"""

from __future__ import annotations

import ast
from typing import Any

from ..data_card import describe_value

__all__ = ["NOTHING_PRINTED", "silent_step_observation"]


NOTHING_PRINTED = "The code ran and printed nothing. Print the values you need to see, or call final_answer.\n"


def silent_step_observation(code: str, namespace: dict[str, Any]) -> str:
    """What a small model reads after code that printed nothing: the variable its last line made or changed.

    A 1.5B model that merges two tables into a variable without printing it reads "printed
    nothing" as "the merge failed" and merges again; shown the new variable's schema (as a
    notebook would show it), it goes on to use its columns.
    """
    name = _last_assigned_name(code)
    if name is None or name not in namespace:
        return NOTHING_PRINTED
    # without the last line the small model answered a merge it was shown with final_answer(None) (2 of 24 clean)
    return (
        f"The code ran and printed nothing. `{name}` is now:\n{describe_value(name, namespace[name])}\n"
        f"Now compute what the task asks from `{name}`.\n"
    )


def _last_assigned_name(code: str) -> str | None:
    """The variable the code's last line made or changed: `x = ...`, `x += ...`, `x['col'] = ...`, `x.attr = ...`
    or `x.method(..., inplace=True)`. After an in-place change a 1.5B model shown only "printed nothing" answered
    with nothing at all (7 of 7 empty replies in the messy benchmark); shown the changed frame, it goes on."""
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    if isinstance(last, ast.Assign):
        targets = last.targets
    elif isinstance(last, (ast.AnnAssign, ast.AugAssign)):
        targets = [last.target]
    elif isinstance(last, ast.Expr) and _changes_in_place(last.value):
        targets = [last.value.func.value]  # type: ignore[attr-defined]  # checked by _changes_in_place
    else:
        targets = []
    names = [name for name in map(_root_name, targets) if name]
    return names[-1] if names else None


def _root_name(target: ast.expr) -> str | None:
    """`orders` for `orders`, `orders['amount']`, `orders.loc[mask, 'amount']` or `orders.columns`."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _changes_in_place(call: ast.expr) -> bool:
    """`frame.method(..., inplace=True)` (e.g. `orders.drop_duplicates(inplace=True)`)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return False
    return any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
    )
