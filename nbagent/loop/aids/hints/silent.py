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
    """What a small model reads after code that printed nothing: the variable its last line made, described.

    A 1.5B model that merges two tables into a variable without printing it reads "printed
    nothing" as "the merge failed" and merges again; shown the new variable's schema (as a
    notebook would show it), it goes on to use its columns.
    """
    name = _last_assigned_name(code)
    if name is None or name not in namespace:
        return NOTHING_PRINTED
    return f"The code ran and printed nothing. `{name}` is now:\n{describe_value(name, namespace[name])}\n"


def _last_assigned_name(code: str) -> str | None:
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return None
    last = body[-1] if body else None
    targets = last.targets if isinstance(last, ast.Assign) else [last.target] if isinstance(last, ast.AnnAssign) else []
    names = [target.id for target in targets if isinstance(target, ast.Name)]
    return names[-1] if names else None
