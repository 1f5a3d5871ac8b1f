"""What a name was bound to in the model's code: the checks read an answer back through the assignments that made
it (`best = per.idxmax(); final_answer(best)`), so they share one reading of "the value last assigned"."""

from __future__ import annotations

import ast


def assignments(name: str, tree: ast.Module) -> list[ast.Assign]:
    """The statements that assign a value to `name` itself (`name = …`, `a = name = …`; not `name, b = …`), in
    the order they come in the code."""
    found = [
        statement
        for statement in ast.walk(tree)
        if isinstance(statement, ast.Assign)
        and any(isinstance(target, ast.Name) and target.id == name for target in statement.targets)
    ]
    return sorted(found, key=lambda statement: (statement.lineno, statement.col_offset))


def last_assignment(name: str, tree: ast.Module, before: ast.AST | None = None) -> ast.AST | None:
    """The value `name` was last assigned in the code, or, with `before`, the one last assigned ahead of that
    node (`d = d.round(2)` reads the earlier `d`); None when the code never assigns it."""
    statements = assignments(name, tree)
    if before is not None:
        use = (before.lineno, before.col_offset)
        statements = [s for s in statements if (s.end_lineno or 0, s.end_col_offset or 0) <= use]
    return statements[-1].value if statements else None


def bound_value(node: ast.AST, tree: ast.Module, hops: int = 5) -> ast.AST:
    """`node`, or for a name the value it was last assigned, followed a few hops (`a = b; b = total`)."""
    for _ in range(hops):
        if not isinstance(node, ast.Name) or (value := last_assignment(node.id, tree)) is None:
            break
        node = value
    return node


def through_wrappers(node: ast.AST, tree: ast.Module, hops: int = 6) -> ast.AST:
    """`node` through `int(...)`, `str(...)`, `float(...)` and `round(...)` and, for a name, its last assignment in
    the code, a few hops (`best = per.idxmax(); answer = int(best)`)."""
    for _ in range(hops):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _WRAPPERS:
            node = node.args[0] if node.args else node
        elif isinstance(node, ast.Name) and (value := last_assignment(node.id, tree)) is not None:
            node = value
        else:
            break
    return node


_WRAPPERS = ("int", "str", "float", "round")


def root_name(target: ast.AST) -> str | None:
    """`orders` for `orders`, `orders['amount']`, `orders.loc[mask, 'amount']` or `orders.columns`."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None
