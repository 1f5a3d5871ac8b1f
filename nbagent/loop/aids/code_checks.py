"""Checks of a small model's code before it runs: a total of products written as a product of totals.

For "the revenue, units × unit_price", a 1.5B model writes `df["units"] * df["unit_price"].sum()`
(`*` binds after the call, so every value is multiplied by the total of the other column), and
told so, rewrites it as `df["units"].sum() * df["unit_price"].sum()`. Measured on the data
questions benchmark: after a warning it recovered 2 times in 19. So where the meaning is
certain (two columns of the same rows, a `sum`), the line is run as the total of the products
and the step says so (`fix_totals`); the model's own code is kept beside it, as for a person's
edit. What cannot be fixed surely (a `groupby`, a `mean`) is not run (`code_warning`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CodeFix",
    "apply_edits",
    "code_warning",
    "fix_totals",
    "fixed",
    "frame_column",
    "in_place",
    "inside_an_edit",
    "is_method_call",
    "is_text",
]

_TOTALS = frozenset({"sum", "mean"})
# a name used like this after `name = a * b` was meant as the per-row product, not its total
_PER_ROW_USES = frozenset(
    {"groupby", "idxmax", "idxmin", "nlargest", "nsmallest", "rolling", "resample", "sort_values", "head", "tail"}
)


@dataclass
class CodeFix:
    """`code` with its products of totals rewritten, and one note per rewritten expression."""

    code: str
    notes: list[str] = field(default_factory=list)

    def observation(self) -> str:
        return "".join(f"{note}\n" for note in self.notes)

    def then(self, fix: Callable[[str], CodeFix]) -> CodeFix:
        """This fix followed by another on its code, with the notes of both."""
        after = fix(self.code)
        return CodeFix(after.code, self.notes + after.notes)


def fix_totals(code: str) -> CodeFix:
    """`code` with each product of totals of two columns of the same rows run as the total of the products.

    `df["a"] * df["b"].sum()`, `df["a"].sum() * df["b"]` and `df["a"].sum() * df["b"].sum()` (also
    through names the code assigned, `ta = df["a"].sum()`) become `(df["a"] * df["b"]).sum()`, with
    any calls after the total kept (`.round(2)`); when the code assigns the product to a name and
    later groups, sorts or arg-maxes it, the per-row product `df["a"] * df["b"]` is what it meant.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return CodeFix(code)
    totals = _named_totals(tree)
    edits: list[tuple[ast.AST, str]] = []
    for statement in tree.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and not inside_an_edit(node, edits):
                columns = _product_columns(node, totals)
                if columns:
                    edits.append((node, _replacement(code, node, columns, _per_row_name(tree, statement, node))))
    return _apply(code, edits)


def _named_totals(tree: ast.Module) -> dict[str, ast.AST]:
    """The names the code assigns a column's sum to (`ta = df["a"].sum()`), with that total."""
    named: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if _is_column_total(node.value, "sum"):
                named[node.targets[0].id] = node.value
            else:
                named.pop(node.targets[0].id, None)
    return named


def _product_columns(node: ast.BinOp, totals: dict[str, ast.AST]) -> tuple[ast.AST, ast.AST, ast.AST] | None:
    """(column a, column b, the total whose trailing calls are kept) of a fixable product, else None."""
    left, right = (_resolve(side, totals) for side in (node.left, node.right))
    left_total, right_total = _is_column_total(left, "sum"), _is_column_total(right, "sum")
    if (
        not (left_total or right_total)
        or _mentions_groupby(node)
        or _mentions_groupby(left)
        or _mentions_groupby(right)
    ):
        return None
    a = _total_call(left).func.value if left_total else left
    b = _total_call(right).func.value if right_total else right
    if not (_is_column(a) and _is_column(b)) or _rows_of(a) != _rows_of(b):
        return None
    return a, b, right if right_total else left


def _resolve(node: ast.AST, totals: dict[str, ast.AST]) -> ast.AST:
    return totals.get(node.id, node) if isinstance(node, ast.Name) else node


def _replacement(code: str, node: ast.BinOp, columns: tuple[ast.AST, ast.AST, ast.AST], per_row: bool) -> str:
    a, b, total = columns
    product = f"{_source(code, a)} * {_source(code, b)}"
    if per_row:
        return product
    return f"({product}).sum(){_after_total(code, total)}"


def _after_total(code: str, total: ast.AST) -> str:
    """The calls after the total, `.round(2)` of `df["b"].sum().round(2)`."""
    whole, call = _source(code, total), _source(code, _total_call(total))
    return whole[len(call) :] if whole.startswith(call) else ""


def _per_row_name(tree: ast.Module, statement: ast.stmt, node: ast.BinOp) -> bool:
    """True if `statement` is `name = <node>` and later code groups, sorts or indexes `name` per row."""
    if not (isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1):
        return False
    target = statement.targets[0]
    if not isinstance(target, ast.Name):
        return False
    return any(
        getattr(later, "lineno", 0) > statement.end_lineno and _uses_per_row(later, target.id)
        for later in ast.walk(tree)
    )


def _uses_per_row(node: ast.AST, name: str) -> bool:
    """`name[...]` or `name.groupby(...)`-like (see `_PER_ROW_USES`)."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and node.value.id == name
    return is_method_call(node, *_PER_ROW_USES) and isinstance(node.func.value, ast.Name) and node.func.value.id == name


_PRODUCT_WHY = "the total of a product is (a * b).sum(), not a * b.sum() nor a.sum() * b.sum()."


def _apply(code: str, edits: list[tuple[ast.AST, str]]) -> CodeFix:
    return apply_edits(code, edits, lambda _node: _PRODUCT_WHY)


#: A fixer's proposal: a node of the code, the source that runs in its place, and why (said in the step's notes).
Edit = tuple[ast.AST, str, str]


def fixed(code: str, edits_of: Callable[[ast.Module], Iterable[Edit]]) -> CodeFix:
    """`code` with the edits `edits_of(its tree)` proposes, outermost first: one inside an edit already taken (or a
    node proposed again) is dropped. Code that does not parse is left as it is."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return CodeFix(code)
    edits: list[tuple[ast.AST, str]] = []
    said: dict[ast.AST, str] = {}
    for node, text, why in edits_of(tree):
        if node not in said and not inside_an_edit(node, edits):
            edits.append((node, text))
            said[node] = why
    return apply_edits(code, edits, said.__getitem__)


def apply_edits(code: str, edits: list[tuple[ast.AST, str]], why: Callable[[ast.AST], str]) -> CodeFix:
    """`code` with each node's source replaced (offsets are UTF-8 bytes, as `ast` gives them), one note per edit
    saying what ran instead and `why(node)`."""
    if not edits:
        return CodeFix(code)
    raw = code.encode()
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode()))
    notes = []
    for node, text in sorted(edits, key=lambda edit: (edit[0].lineno, edit[0].col_offset), reverse=True):
        begin = starts[node.lineno - 1] + node.col_offset
        end = starts[node.end_lineno - 1] + node.end_col_offset
        notes.append(f"nbagent ran `{raw[begin:end].decode()}` (line {node.lineno}) as `{text}`: {why(node)}")
        raw = raw[:begin] + text.encode() + raw[end:]
    return CodeFix(raw.decode(), notes[::-1])


def rewritten(code: str, rewrites: dict[str, str]) -> str:
    """`code` with each expression whose `ast.unparse` is a key of `rewrites` written as its value ("" when `code`
    does not parse)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    edits: list[tuple[ast.AST, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and not inside_an_edit(node, edits):
            written = rewrites.get(ast.unparse(node))
            if written is not None:
                edits.append((node, written))
    return apply_edits(code, edits, lambda node: "").code


def inside_an_edit(node: ast.AST, edits: list[tuple[ast.AST, str]]) -> bool:
    """Whether `node` is part of an expression an edit already replaces."""
    return any(node in set(ast.walk(edited)) for edited, _ in edits)


def _mentions_groupby(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "groupby" for n in ast.walk(node))


def _rows_of(column: ast.AST) -> str:
    """What selects the rows of a column expression: `df[mask]` of `df[mask]["a"]`, `df` + `mask` of `df.loc[mask, "a"]`."""
    if isinstance(column, ast.Subscript) and isinstance(column.slice, ast.Tuple) and column.slice.elts:
        return ast.unparse(column.value) + ast.unparse(column.slice.elts[0])
    return ast.unparse(column.value)


def _source(code: str, node: ast.AST) -> str:
    return ast.get_source_segment(code, node) or ast.unparse(node)


# ---------------------------------------------------------------------------------------------- what is not fixed


def code_warning(code: str) -> str:
    """A reason not to run `code`, for a small model, or "": a column times another's total, or two totals multiplied.

    What `fix_totals` leaves (a `groupby` in the product, a `mean`, columns of different rows).
    Said before running, with the corrected line to copy, it is fixed more often than after a
    wrong answer.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            warning = _product_warning(code, node)
            if warning:
                return f"Line {node.lineno}: `{ast.get_source_segment(code, node)}` {warning} The code did not run."
    return ""


def _product_warning(code: str, node: ast.BinOp) -> str:
    left, right = node.left, node.right
    if _is_column_total(left, "sum") and _is_column_total(right, "sum"):
        fixed = f"({_total_column(code, left)} * {_total_column(code, right)}).sum()"
        return f"multiplies two totals; the total of the products is {fixed}."
    total = right if _is_column_total(right) else left if _is_column_total(left) else None
    other = left if total is right else right
    if total is None or not _is_column(other):
        return ""
    fixed = f"({ast.get_source_segment(code, other)} * {_total_column(code, total)}).sum()"
    if ".groupby(" in fixed:
        fixed = _grouped_product(code, other, total) or "value = a * b first, then value.groupby(df['key']).sum()"
    return (
        "multiplies every value of one column by the total of the other (a * b.sum() is a * (b.sum())). "
        f"For the total of the products write {fixed}."
    )


def _grouped_product(code: str, grouped: ast.AST, total: ast.AST) -> str:
    """`value = df["a"] * df["b"]`, then `value.groupby(df["key"]).sum()`, for `df.groupby("key")["a"] * df["b"].sum()`."""
    if not (isinstance(grouped, ast.Subscript) and is_method_call(grouped.value, "groupby")):
        return ""
    frame, keys = grouped.value.func.value, grouped.value.args
    if not (isinstance(frame, ast.Name) and len(keys) == 1):
        return ""
    key = f"{frame.id}[{_source(code, keys[0])}]" if is_text(keys[0]) else _source(code, keys[0])
    column = f"{frame.id}[{_source(code, grouped.slice)}]"
    return f"value = {column} * {_total_column(code, total)} first, then value.groupby({key}).sum()"


def is_text(node: ast.AST) -> bool:
    """A string literal."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def frame_column(node: ast.AST) -> tuple[str, str] | None:
    """(frame name, column) of a `frame["column"]` subscript, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and is_text(node.slice):
        return node.value.id, node.slice.value
    return None


def _total_column(code: str, node: ast.AST) -> str:
    """The column a total is taken of: `df["b"]` in `df["b"].sum().round(2)`."""
    return ast.get_source_segment(code, _total_call(node).func.value) or "b"


def _total_call(node: ast.AST) -> ast.AST:
    """`df["b"].sum()` out of `df["b"].sum().round(2).to_dict()`: the calls after the total left out."""
    while is_method_call(node) and node.func.attr not in _TOTALS:
        node = node.func.value
    return node


def _is_column_total(node: ast.AST, *totals: str) -> bool:
    """`df["b"].sum()` (or another of `totals`), also followed by more calls (`.sum().round(2).to_dict()`)."""
    totals = totals or tuple(_TOTALS)
    node = _total_call(node)
    return (
        isinstance(node, ast.Call)
        and not node.args
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in totals
        and _is_column(node.func.value)
    )


def is_method_call(node: Any, *methods: str) -> bool:
    """`obj.method(...)`, with `method` one of `methods` if any are given."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in (methods or (node.func.attr,))
    )


def in_place(call: Any) -> bool:
    """`frame.method(..., inplace=True)`: the call changes the frame it is called on."""
    return is_method_call(call) and any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords
    )


def _is_column(node: ast.AST) -> bool:
    """`df["a"]`, `df[mask]["a"]`, `df.loc[mask, "a"]` or `df.a`-like: a subscript or attribute of a name."""
    return isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name))
