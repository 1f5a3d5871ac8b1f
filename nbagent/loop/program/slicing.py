"""The backward slice: which statements of the run the answer (and the names the task asked for) depend on.

Walking the statements from the last to the first, a statement is kept when it may bind or change a name still
needed; then the names it surely rebinds are no longer needed from earlier statements, and the names it reads are.
Statements that only show something (`print`, `df.head()`, a bare name) are never kept; inside a kept `if` or `for`
their calls are taken out (`pass` where a body would be empty).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from .analysis import Facts, facts_of, is_answer_call
from .same import same_value

__all__ = [
    "Statement",
    "backward_slice",
    "strip_shows",
    "answer_assignment",
    "answer_code",
    "code_with_sources",
    "ANSWER",
]

ANSWER = "answer"


@dataclass
class Statement:
    """One top-level statement of a step, as it will be written (`text`) and what it does (`facts`)."""

    node: ast.stmt
    text: str
    step: int
    facts: Facts = field(init=False)

    def __post_init__(self) -> None:
        self.facts = facts_of(self.node)


def backward_slice(statements: list[Statement], outputs: set[str]) -> list[Statement]:
    """The statements needed for `answer` and `outputs`, in their order."""
    needed = {ANSWER, *outputs}
    kept: list[Statement] = []
    for statement in reversed(statements):
        facts = statement.facts
        if facts.shows or not facts.defines & needed:
            continue
        kept.append(statement)
        needed = (needed - facts.kills) | facts.uses
    return kept[::-1]


def answer_code(
    earlier: list[str], answering: str, namespace: dict[str, Any] | None = None, printed: list[str] | None = None
) -> str | None:
    """The code an answer comes from: the statements of the earlier steps' code (`earlier`, code that ran) and of
    the answering code that its `final_answer(...)` depends on, as written (the call stays a call); None when the
    code cannot be read as Python or gives no answer.

    The answer checks read this, not all the code that ran: an earlier step's `march = orders[...]` is no selection
    of March for an answer that counts every row (the messy run's 330 for "orders placed in March 2024").

    An answer written out as a number or text (`final_answer(116286.42)`, copied from a printed variable) comes from
    the code of the variable of `namespace` that an earlier step assigned and that holds it: read as nothing at all,
    the checks said the question's frames were never used, and the model recomputed the same total twice. One no
    variable holds that an earlier step printed (`printed`: what each earlier step showed, `print(d.sum())`) comes
    from code the slice cannot name: None, so the checks read all of it."""
    answering = _literal_as_name(earlier, answering, namespace or {})
    literal = _written_out(answering)
    if literal is not None and any(_shows(text, literal) for text in printed or []):
        return None
    statements = _statements([*earlier, answering], answering=len(earlier))
    kept = backward_slice(statements, set()) if statements is not None else []
    if not any(ANSWER in statement.facts.defines for statement in kept):
        return None
    return "\n".join(statement.text for statement in kept)


def code_with_sources(earlier: list[str], code: str) -> str:
    """`code` after the statements of the earlier steps' code (`earlier`, code that ran) that made the names it
    reads: a failing step's `merged['amount'].sum()` comes with the earlier `merged = orders.merge(...)`, so that
    the same code on cleaned frames rebuilds `merged` from them (offered alone, it read the raw `merged`). `code`
    as it is when nothing earlier made what it reads, or when some code cannot be read as Python."""
    mine = _statements([code], answering=-1)
    statements = _statements(earlier, answering=-1)
    if not mine or not statements:
        return code
    needed: set[str] = set()
    for statement in reversed(mine):
        needed = (needed - statement.facts.kills) | statement.facts.uses
    sources = backward_slice(statements, needed - {ANSWER})
    return "\n".join([*(statement.text for statement in sources), code])


def _statements(codes: list[str], answering: int) -> list[Statement] | None:
    """The top-level statements of `codes`, show calls taken out (`final_answer` made `answer = x` in the code at
    index `answering`, taken out elsewhere); None when a code cannot be read as Python."""
    statements: list[Statement] = []
    for number, code in enumerate(codes):
        try:
            tree = ast.parse(code)
        except SyntaxError:
            return None
        for node in tree.body:
            shown, _ = strip_shows(node, answer=number == answering)
            if not isinstance(shown, ast.Pass):
                statements.append(Statement(shown, ast.get_source_segment(code, node) or "", number))
    return statements


def _literal_as_name(earlier: list[str], answering: str, namespace: dict[str, Any]) -> str:
    """`answering` with a written-out `final_answer(<literal>)` as `final_answer(<name>)`, the last name the earlier
    code assigned whose value in `namespace` equals the literal; else `answering` as it is."""
    literal = _written_out(answering)
    if literal is None:
        return answering
    for name in reversed(_assigned_names(earlier)):
        if name in namespace and same_value(namespace[name], literal):
            return f"final_answer({name})"
    return answering


def _written_out(answering: str) -> int | float | str | None:
    """The number or text of a `final_answer(<literal>)` that is all of `answering`, else None."""
    try:
        body = ast.parse(answering).body
    except SyntaxError:
        return None
    if not (len(body) == 1 and isinstance(body[0], ast.Expr) and is_answer_call(body[0].value)):
        return None
    arguments = body[0].value.args  # type: ignore[attr-defined]  # an answer call
    if len(arguments) != 1 or not isinstance(arguments[0], ast.Constant):
        return None
    literal = arguments[0].value
    return literal if isinstance(literal, (int, float, str)) and not isinstance(literal, bool) else None


def _shows(text: str, literal: int | float | str) -> bool:
    """Whether printed `text` shows `literal` as a whole number or word (16 in "16\n", not in "160" or "1.16")."""
    written = re.escape(str(literal))
    return bool(literal != "" and re.search(rf"(?<![\w.]){written}(?![\w]|\.\d)", text))


def _assigned_names(codes: list[str]) -> list[str]:
    names: list[str] = []
    for code in codes:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.append(node.id)
    return names


class _DropShows(ast.NodeTransformer):
    """Takes bare show calls (`print(...)`, `df.head()`) and `final_answer(...)` calls out of nested bodies."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer  # True: `final_answer(x)` becomes `answer = x`; False: it goes

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if is_answer_call(node.value):
            return answer_assignment(node.value) if self.answer else None
        probe = facts_of(node)
        return None if probe.shows else node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and not body and name == "body":
                body.append(ast.Pass())
        if isinstance(node, ast.Try):
            for handler in node.handlers:
                if not handler.body:
                    handler.body.append(ast.Pass())
        return node


def strip_shows(node: ast.stmt, answer: bool) -> tuple[ast.stmt, bool]:
    """`node` without the show calls of its nested bodies (and with its `final_answer` calls made `answer = x`, or
    taken out); True when something changed."""
    before = ast.dump(node)
    if isinstance(node, ast.Expr) and is_answer_call(node.value):
        return (answer_assignment(node.value), True) if answer else (ast.Pass(), True)
    if not isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
        if answer and any(is_answer_call(n) for n in ast.walk(node)):
            return _AnswerInExpression().visit(node), True
        return node, False
    changed = _DropShows(answer).visit(node)
    ast.fix_missing_locations(changed)
    return changed, ast.dump(changed) != before


def answer_assignment(call: ast.Call) -> ast.stmt:
    """`final_answer(x)` as `answer = x` (`answer = None` for a call without an argument)."""
    value = call.args[0] if call.args else (call.keywords[0].value if call.keywords else ast.Constant(None))
    return ast.fix_missing_locations(ast.copy_location(ast.Assign([ast.Name(ANSWER, ast.Store())], value), call))


class _AnswerInExpression(ast.NodeTransformer):
    """`final_answer(x)` inside an expression: `(answer := x)`."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not is_answer_call(node):
            return node
        value = node.args[0] if node.args else ast.Constant(None)
        return ast.copy_location(ast.NamedExpr(ast.Name(ANSWER, ast.Store()), value), node)
