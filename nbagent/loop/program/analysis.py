"""What one top-level statement of a step does, read from its AST: the names it reads, binds or may change.

The program of a run (loop/program) is a backward slice over these facts, so they lean to keeping: a name is
"read" wherever it is loaded outside a scope that binds it, and a bare call `f(df)` or `df.m()` may change `df`
(kept when `df` is needed), unless the method is one of pandas' or Python's that only look (`head`, `describe`,
`info`, …). Only a plain assignment, an import, a `def` or a `class` at the top level *surely* rebinds a name
(`kills`): an earlier binding of it is then not needed for what follows.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["Facts", "facts_of", "free_names", "is_answer_call", "ANSWER_TOOL", "SHOW_FUNCTIONS", "LOOK_METHODS"]

ANSWER_TOOL = "final_answer"
SHOW_FUNCTIONS = frozenset({"print", "display", "pprint"})
# Methods whose result is all they give: a bare call of one is exploration (its value is shown, then dropped).
LOOK_METHODS = frozenset(
    {
        "head", "tail", "describe", "info", "sample", "value_counts", "unique", "nunique", "isna", "isnull",
        "notna", "notnull", "count", "sum", "mean", "median", "min", "max", "std", "var", "mode", "corr", "cov",
        "groupby", "agg", "aggregate", "apply", "sort_values", "sort_index", "nlargest", "nsmallest", "to_string",
        "to_markdown", "memory_usage", "duplicated", "idxmax", "idxmin", "quantile", "round", "copy", "items",
        "keys", "values", "get", "astype", "query", "filter", "pivot_table", "crosstab", "plot", "hist",
        "select_dtypes", "drop_duplicates", "dropna", "fillna", "reset_index", "set_index", "rename", "merge",
        "join", "rank", "cumsum", "diff", "pct_change", "startswith", "endswith", "lower", "upper", "strip",
        "split", "format", "tolist", "to_list", "to_dict", "to_numpy", "transpose", "any", "all",
    }
)  # fmt: skip


@dataclass
class Facts:
    """What a statement does to names: `uses` (reads), `defines` (may bind or change), `kills` (surely rebinds),
    `calls` (the names it calls), and whether it only shows something (`shows`: print, display, a bare expression)."""

    uses: set[str] = field(default_factory=set)
    defines: set[str] = field(default_factory=set)
    kills: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)
    shows: bool = False


def is_answer_call(node: ast.AST) -> bool:
    """`final_answer(x)`, the call that ends a run with its answer."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == ANSWER_TOOL


def facts_of(stmt: ast.stmt) -> Facts:
    """The facts of one top-level statement."""
    facts = Facts(uses=free_names(stmt), calls=_called_names(stmt))
    if isinstance(stmt, ast.Expr):
        _expression_facts(stmt.value, facts)
    elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            _target_facts(target, facts, sure=not isinstance(stmt, ast.AugAssign))
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            facts.uses.add(stmt.target.id)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        names = {(a.asname or a.name.split(".")[0]) for a in stmt.names if a.name != "*"}
        facts.defines |= names
        facts.kills |= names
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        facts.defines.add(stmt.name)
        facts.kills.add(stmt.name)
    elif isinstance(stmt, (ast.Global, ast.Nonlocal, ast.Pass)):
        facts.shows = True  # nothing a program needs
    else:  # if / for / while / with / try / del …: whatever they bind anywhere, maybe
        facts.defines |= _bound_anywhere(stmt)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Expr) and not _only_shows(node.value):
                facts.defines |= _changed_by_call(node.value)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                facts.defines |= {_root(t) for t in targets} - {None}  # type: ignore[operator]
    facts.defines |= {n.target.id for n in ast.walk(stmt) if isinstance(n, ast.NamedExpr)}
    return facts


def _expression_facts(value: ast.expr, facts: Facts) -> None:
    if _only_shows(value):
        facts.shows = True
        return
    facts.defines |= _changed_by_call(value)


def _only_shows(value: ast.expr) -> bool:
    """A bare expression kept for its look only: `print(...)`, `df.head()`, `df.shape`, `x`."""
    if any(isinstance(n, ast.NamedExpr) for n in ast.walk(value)) or is_answer_call(value):
        return False
    if not isinstance(value, ast.Call):
        return True
    func = value.func
    if isinstance(func, ast.Name) and func.id in SHOW_FUNCTIONS:
        return True
    inplace = any(k.arg == "inplace" and not _false(k.value) for k in value.keywords)
    return isinstance(func, ast.Attribute) and func.attr in LOOK_METHODS and not inplace


def _false(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not node.value


def _changed_by_call(value: ast.expr) -> set[str]:
    """The names a bare call may change: its receiver's root (`df.pop(...)`, `np.random.seed(0)`) and the roots of
    its arguments (`shuffle(rows)`)."""
    if not isinstance(value, ast.Call):
        return set()
    roots = {_root(value.func)} if isinstance(value.func, ast.Attribute) else set()
    roots |= {_root(arg) for arg in [*value.args, *(k.value for k in value.keywords)]}
    return {root for root in roots if root}


def _target_facts(target: ast.expr, facts: Facts, sure: bool) -> None:
    if isinstance(target, ast.Name):
        facts.defines.add(target.id)
        if sure:
            facts.kills.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            _target_facts(element, facts, sure)
    elif isinstance(target, ast.Starred):
        _target_facts(target.value, facts, sure)
    else:  # df["x"] = …, obj.attr = …: a change of df / obj, which it also reads
        root = _root(target)
        if root:
            facts.defines.add(root)
            facts.uses.add(root)


def _root(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (`df` for `df.loc[0, "a"]`), or None."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound_anywhere(stmt: ast.stmt) -> set[str]:
    """Names bound anywhere in a compound statement, outside the functions and classes it defines' bodies."""
    bound: set[str] = set()
    for node in _walk_scope(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*"}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk` that does not enter function, lambda, class or comprehension bodies (their own scopes)."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if current is not node and isinstance(current, _SCOPES):
            continue
        todo.extend(ast.iter_child_nodes(current))


_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp,
)  # fmt: skip


def _called_names(stmt: ast.stmt) -> set[str]:
    return {n.func.id for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def free_names(node: ast.AST) -> set[str]:
    """The names `node` reads that it does not bind in a scope of its own (a function's parameters and locals, a
    comprehension's targets, a loop's target)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        outer = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            outer += node.decorator_list
        body = node.body if isinstance(node.body, list) else [node.body]
        params = {a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]}
        params |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
        inner: set[str] = set().union(*(free_names(s) for s in body)) if body else set()
        local = set().union(*(_bound_anywhere(s) for s in body if isinstance(s, ast.stmt))) if body else set()
        return _union(outer) | (inner - params - local)
    if isinstance(node, ast.ClassDef):
        outer = [*node.bases, *(k.value for k in node.keywords), *node.decorator_list]
        inner = set().union(*(free_names(s) for s in node.body)) if node.body else set()
        local = set().union(*(_bound_anywhere(s) for s in node.body))
        return _union(outer) | (inner - local)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        targets = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        first = free_names(node.generators[0].iter)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        parts += [g.iter for g in node.generators[1:]] + [c for g in node.generators for c in g.ifs]
        return first | (_union(parts) - targets)
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        rest = [c for c in ast.iter_child_nodes(node) if c is not node.target]
        return free_names(node.iter) | (_union(rest) - targets)
    return _union(ast.iter_child_nodes(node))


def _union(nodes: Iterable[ast.AST]) -> set[str]:
    names: set[str] = set()
    for child in nodes:
        names |= free_names(child)
    return names
