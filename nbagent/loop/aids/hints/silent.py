"""A silent step: what a small model reads after code that printed nothing.

A 1.5B model reads "printed nothing" as "it failed" and does it again; shown the variable its last line
made (as a notebook would show it), it goes on to use it.
"""

from __future__ import annotations

import ast
from typing import Any

from ..bindings import root_name
from ..code_checks import in_place
from ..data_card import describe_value
from .failure import parsed
from .grouping import column_picked

__all__ = ["NOTHING_PRINTED", "silent_step_observation"]


_SHOWN_PAIRS = 3  # columns both frames have, named with the frame each suffix stands for
_FEW = 20  # items of a dict or list that can be an answer as it is (a total per group)

NOTHING_PRINTED = "The code ran and printed nothing. Print the values you need to see, or call final_answer.\n"


def silent_step_observation(code: str, namespace: dict[str, Any], task: str = "") -> str:
    """What a small model reads after code that printed nothing: the variable its last line made or changed.

    A 1.5B model that merges two tables into a variable without printing it reads "printed
    nothing" as "the merge failed" and merges again; shown the new variable's schema (as a
    notebook would show it), it goes on to use its columns.
    """
    tree = parsed(code)
    last = tree.body[-1] if tree and tree.body else None
    name = _last_assigned_name(last)
    if name is None or name not in namespace:
        return NOTHING_PRINTED
    # without the last line the small model answered a merge it was shown with final_answer(None) (2 of 24 clean)
    value = namespace[name]
    then = (
        f"If `{name}` is what the task asks for, call final_answer({name}); if not, compute it from `{name}`."
        if _answer_shaped(value)
        else f"Now compute what the task asks from `{name}`."
    )
    described = (
        describe_value(name, value) + _suffixes_said(last, value) + _every_column_totalled(last, code, namespace, task)
    )
    return f"The code ran and printed nothing. `{name}` is now:\n{described}\n{then}\n"


def _every_column_totalled(last: ast.stmt, code: str, namespace: dict[str, Any], task: str) -> str:
    """The line that totals one column, after a last line that totalled a whole table per group.

    The messy run's `merged.groupby(key).sum().round(2).to_dict()` gave a dict of every column's totals, the dates
    and names joined; told only to compute the task from it, it converted the keys to text, then ran out of steps."""
    if not isinstance(last, ast.Assign):
        return ""
    line = ast.get_source_segment(code, last.value) or ""
    fixed = column_picked(line, code, namespace, task) if "\n" not in line else ""
    return (
        f"\n  (that is the total of every column, the text ones joined: pick the column first: {fixed})"
        if fixed
        else ""
    )


def _suffixes_said(last: ast.stmt, value: Any) -> str:
    """Which frame each `_x`/`_y` column of a merge the code's last line made came from.

    Shown `amount_x` and `amount_y` after `refunds.merge(orders, …)`, the messy run's 1.5B model totalled the
    orders' amounts for "how much was refunded"."""
    sides = _merged_frames(last)
    columns = [str(column) for column in getattr(value, "columns", [])]
    pairs = [c[:-2] for c in columns if c.endswith("_x") and f"{c[:-2]}_y" in columns]
    if sides is None or not pairs:
        return ""
    left, right = sides
    said = "; ".join(f"`{c}_x` is `{left}`'s {c!r}, `{c}_y` is `{right}`'s" for c in pairs[:_SHOWN_PAIRS])
    return f"\n  ({said}: the merge's suffixes)"


def _merged_frames(last: ast.stmt) -> tuple[str, str] | None:
    """(left, right) frame names of `x = left.merge(right, …)` or `x = pd.merge(left, right, …)`, the last line."""
    call = last.value if isinstance(last, ast.Assign) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "merge"):
        return None
    frames = [call.func.value, *call.args[:1]] if call.args else []
    if isinstance(call.func.value, ast.Name) and call.func.value.id in ("pd", "pandas"):
        frames = call.args[:2]
    names = [frame.id for frame in frames if isinstance(frame, ast.Name)]
    return (names[0], names[1]) if len(names) == 2 else None


def _answer_shaped(value: Any) -> bool:
    """A value that can be an answer as it is: a number or text, or a few of them (a dict from group to total).

    Shown a dict of the totals asked for and told to "compute what the task asks from it", the messy run's 1.5B
    model printed it, then replied with one of its numbers and no code, and ran out of steps."""
    if isinstance(value, (dict, list, tuple)):
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
        return 0 < len(value) <= _FEW and all(_is_scalar(item) for item in items)
    return _is_scalar(value)


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, str)) or type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0


def _last_assigned_name(last: ast.stmt | None) -> str | None:
    """The variable the code's last line made or changed: `x = ...`, `x += ...`, `x['col'] = ...`, `x.attr = ...`
    or `x.method(..., inplace=True)`. After an in-place change a 1.5B model shown only "printed nothing" answered
    with nothing at all (7 of 7 empty replies in the messy benchmark); shown the changed frame, it goes on."""
    if isinstance(last, ast.Assign):
        targets = last.targets
    elif isinstance(last, (ast.AnnAssign, ast.AugAssign)):
        targets = [last.target]
    elif isinstance(last, ast.Expr) and in_place(last.value):
        targets = [last.value.func.value]  # type: ignore[attr-defined]  # checked by in_place
    else:
        targets = []
    names = [name for name in map(root_name, targets) if name]
    return names[-1] if names else None
