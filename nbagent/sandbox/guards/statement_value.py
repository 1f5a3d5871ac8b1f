"""smolagents' "value of the code": the last statement's, also when it is an assignment.

nbagent's executors return the value of a trailing *expression*, like a notebook cell. smolagents' interpreter
returns the value of the last statement, so `result = 2 + 2` gives 4 there. `with_last_statement_value(code)`
appends a line that reads back what a trailing assignment bound, so the executors give the same value; the
agent loop does not use it (a notebook cell's rule stays the agent's rule).
"""

from __future__ import annotations

import ast

__all__ = ["readable_again", "with_last_statement_value"]


def with_last_statement_value(code: str) -> str:
    """`code` plus a last line naming what its trailing assignment bound (unchanged if there is nothing to read)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code  # the executor reports it
    if not tree.body:
        return code
    target = _assigned(tree.body[-1])
    if target is None:
        return code
    return f"{code.rstrip()}\n{ast.unparse(target)}\n"


def _assigned(statement: ast.stmt) -> ast.expr | None:
    if isinstance(statement, ast.Assign):
        target = statement.targets[-1]
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
        target = statement.target
    else:
        return None
    return target if readable_again(target) else None


def readable_again(target: ast.expr) -> bool:
    """Reading the target back runs no code twice: names, tuples of them, attributes of names."""
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return bool(target.elts) and all(readable_again(element) for element in target.elts)
    if isinstance(target, ast.Attribute):
        return isinstance(target.value, ast.Name)
    if isinstance(target, ast.Subscript):
        return isinstance(target.value, ast.Name) and isinstance(target.slice, (ast.Constant, ast.Name))
    return False
