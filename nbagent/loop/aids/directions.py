"""A direction the question asks for ("improved the most", "grew", "biggest drop") against the sign the code computed.

Users saw "Who improved the most?" answered with the student who fell the most: the code took `idxmin()` of
`after - before`. Where the code shows which way its difference runs — `after - before`, `end - start`, `new - old`,
`2024 - 2023`, `June - May`, `.iloc[-1] - .iloc[0]`, `.diff()`, `.pct_change()` (later minus earlier), or the
other way round — the pick (`idxmax`/`idxmin`, `nlargest`/`nsmallest`, `max`/`min`) and the answer's sign are
checked against the direction asked. Nothing is said where the code does not show the way (a difference of two
columns named without a time order, an `abs()`): a doubt must be certain.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

from .bindings import last_assignment
from .code_checks import is_method_call
from .data_card import is_number, value_kind

__all__ = ["direction_problems"]

_UP_MOST = re.compile(
    r"\b(?:most\s+improved|improved\s+(?:the\s+)?most|(?:grew|rose|increased|gained|climbed|improved)\s+(?:the\s+)?"
    r"(?:most|fastest)|(?:biggest|largest|greatest|highest|most|strongest|fastest)\s+(?:improvement|increase|growth|"
    r"gain|rise|jump|climb))\b",
    re.I,
)
_DOWN_MOST = re.compile(
    r"\b(?:(?:fell|dropped|declined|decreased|shrank|sank|lost)\s+(?:the\s+)?most|(?:biggest|largest|greatest|"
    r"steepest|sharpest|most|worst)\s+(?:drop|decline|decrease|fall|loss|reduction|dip|slump))\b",
    re.I,
)
_UP = re.compile(r"\b(?:improv(?:ed|e|es|ement)|increas(?:ed|e|es)|grew|grown|grows?|rose|gained|climbed)\b", re.I)
_DOWN = re.compile(r"\b(?:fell|fallen|dropped|drop|declined|decreased|decrease|shrank|sank)\b", re.I)
_WHICH = re.compile(r"\b(?:which|who|whose)\b", re.I)
_PICKS = {"idxmax": 1, "idxmin": -1, "nlargest": 1, "nsmallest": -1, "max": 1, "min": -1, "argmax": 1, "argmin": -1}
_KEEPS_SIGN = frozenset(
    {"round", "sort_values", "sort_index", "dropna", "fillna", "astype", "rename", "copy", "squeeze", "head", "tail"}
)
_AGGREGATES = frozenset({"agg", "aggregate", "apply", "transform"})
# (later, earlier): the words a difference's two sides are told apart by
_CUES = (
    ("after", "before"),
    ("end", "start"),
    ("end", "begin"),
    ("ending", "starting"),
    ("new", "old"),
    ("newer", "older"),
    ("last", "first"),
    ("latest", "earliest"),
    ("post", "pre"),
    ("final", "initial"),
    ("current", "previous"),
    ("current", "prev"),
    ("current", "prior"),
    ("now", "then"),
    ("tail", "head"),
)
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_MONTH_WORDS = {
    **{name: number for number, name in enumerate(_MONTHS, start=1)},
    **{
        name: number
        for number, name in enumerate(
            "january february march april may june july august september october november december".split(), start=1
        )
    },
}


def direction_problems(
    answer: Any, question: str, tree: ast.Module, argument: ast.AST | None, namespace: dict
) -> list[str]:
    """Why the answer goes the other way than the question asks ([] when it does not, or the code does not tell).

    `tree`: the code that ran; `argument`: what it gave `final_answer` (None if unknown)."""
    up_most, down_most = bool(_UP_MOST.search(question)), bool(_DOWN_MOST.search(question))
    if up_most and down_most:
        return []
    if up_most or down_most:
        wanted = 1 if up_most else -1
        picked = _wrong_pick(argument, tree, wanted) if argument is not None else ""
        return [picked] if picked else _wrong_sign(answer, tree, namespace, wanted, superlative=True)
    up, down = bool(_UP.search(question)), bool(_DOWN.search(question))
    if up == down or not _WHICH.search(question):  # "which products grew?": each one named must have grown
        return []
    return _wrong_sign(answer, tree, namespace, 1 if up else -1, superlative=False)


# ---------------------------------------------------------------------------------------------- the pick


def _wrong_pick(argument: ast.AST, tree: ast.Module, wanted: int) -> str:
    """`d.idxmin()` of `d = after - before` answering "improved the most" (or idxmax of it for "biggest drop")."""
    for call in _picks(argument, tree):
        way = _orientation(call.func.value, tree)
        if way is None:
            continue
        extreme = _PICKS[call.func.attr]
        if extreme * way != wanted:
            name = ast.unparse(call.func.value)
            asked = "the largest increase" if wanted > 0 else "the largest decrease"
            got = (
                "the largest rise (or the smallest fall)"
                if extreme * way > 0
                else "the largest fall (or the smallest rise)"
            )
            other = "smallest" if extreme > 0 else "largest"
            return (
                f"the question asks for {asked}, but the code picks the {'largest' if extreme > 0 else 'smallest'} "
                f"value of `{name}`{_difference_text(call.func.value, tree)} ({call.func.attr}), which is {got}. "
                f"Pick the {other} instead, or compute the change the other way round"
            )
    return ""


def _picks(node: ast.AST, tree: ast.Module, depth: int = 0) -> list[ast.Call]:
    """The idxmax/idxmin/nlargest/… calls the answer is made of, through the names it uses (a few hops)."""
    found: list[ast.Call] = []
    for inner in ast.walk(node):
        if is_method_call(inner, *_PICKS):
            found.append(inner)
        elif isinstance(inner, ast.Name) and depth < 4:
            value = last_assignment(inner.id, tree, before=inner)
            if value is not None and value is not node:
                found += _picks(value, tree, depth + 1)
    return found


def _difference_text(node: ast.AST, tree: ast.Module) -> str:
    value = last_assignment(node.id, tree, before=node) if isinstance(node, ast.Name) else None
    return f" = {_clipped(ast.unparse(value))}" if value is not None else ""


def _clipped(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------- the sign


def _wrong_sign(answer: Any, tree: ast.Module, namespace: dict, wanted: int, superlative: bool) -> list[str]:
    """The answer names a row of a difference the code computed whose sign goes the other way, while the other
    way is there (a superlative: some went the way asked; a list: each named must have gone that way)."""
    for name, way in _differences(tree):
        series = namespace.get(name)
        if value_kind(series) != "Series" or getattr(series.dtype, "kind", "-") not in ("i", "u", "f"):
            continue
        changes = series.dropna() * way
        if not len(changes):
            continue
        for label, change in _answered_changes(answer, changes):
            wrong = change * wanted < 0
            if superlative and wrong and (changes * wanted).max() > 0 or not superlative and wrong:
                went = "fell" if change < 0 else "rose"
                asked = ("the largest " if superlative else "") + ("increase" if wanted > 0 else "decrease")
                asked = asked if superlative else f"an {asked}" if wanted > 0 else f"a {asked}"
                return [
                    f"the question asks for {asked}, but the answer's {label} {went} in `{name}` (its change is "
                    f"{change:+.4g}): it goes the other way. Check which way `{name}` is computed and pick again"
                ]
    return []


def _differences(tree: ast.Module) -> list[tuple[str, int]]:
    """(name, +1) for `name = later - earlier` (or `.diff()`), (name, -1) for `earlier - later`, in the code."""
    found = []
    for statement in ast.walk(tree):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            way = _orientation(statement.value, tree)
            if way is not None:
                found.append((statement.targets[0].id, way))
    return found


def _answered_changes(answer: Any, changes: Any) -> list[tuple[str, float]]:
    parts = _parts(answer)
    found = []
    index = changes.index
    numbers = [float(v) for v in changes.values]
    for part in parts:
        try:
            if not is_number(part) and part in index:
                value = changes.loc[part]
                if is_number(value):
                    found.append((repr(part) if isinstance(part, str) else str(part), float(value)))
                continue
        except (TypeError, ValueError):
            continue
        if is_number(part) and not math.isnan(float(part)):
            for number in numbers:
                if math.isclose(abs(float(part)), abs(number), rel_tol=1e-6, abs_tol=0.006):
                    if float(part) * number != 0 and math.copysign(1, float(part)) != math.copysign(1, number):
                        break  # the same size with the sign turned: a change given as a size
                    found.append((f"value {part}", number))
                    break
    return found


def _parts(answer: Any) -> list[Any]:
    if isinstance(answer, dict):
        return [part for item in list(answer.items())[:50] for part in item]
    if value_kind(answer) == "Series":
        return list(answer.index[:50])
    if isinstance(answer, (list, tuple, set)):
        return list(answer)[:50]
    return [answer]


# ---------------------------------------------------------------------------------------------- which way


def _orientation(node: ast.AST, tree: ast.Module, depth: int = 0) -> int | None:
    """+1 when `node` is a later value minus an earlier one, -1 the other way round, None when the code cannot tell."""
    if depth > 6:
        return None
    if isinstance(node, ast.Name):
        value = last_assignment(node.id, tree, before=node)
        return _orientation(value, tree, depth + 1) if value is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return _time_order(ast.unparse(node.left), ast.unparse(node.right))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):  # (b - a) / a * 100
        if any(_negative(side) for side in (node.left, node.right)):  # -1 * (b - a): turned round, not read
            return None
        ways = {_orientation(side, tree, depth + 1) for side in (node.left, node.right)} - {None}
        return ways.pop() if len(ways) == 1 else None
    if isinstance(node, ast.Subscript):  # rows or columns of a difference: frame.diff()["score"], d.iloc[-1], d[d > 0]
        inner = node.value
        if isinstance(inner, ast.Attribute) and inner.attr in ("loc", "iloc", "at", "iat"):
            inner = inner.value
        return _orientation(inner, tree, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        method = node.func.attr
        if method in ("diff", "pct_change"):
            periods = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "periods"), None)
            if periods is None:
                return 1
            if isinstance(periods, ast.Constant) and isinstance(periods.value, int):
                return 1 if periods.value > 0 else -1
            if isinstance(periods, ast.UnaryOp) and isinstance(periods.op, ast.USub):
                return -1
            return None
        if method in _KEEPS_SIGN:
            return _orientation(node.func.value, tree, depth + 1)
        if method in _AGGREGATES:
            bodies = [arg.body for arg in node.args if isinstance(arg, ast.Lambda)]
            return _orientation(bodies[0], tree, depth + 1) if len(bodies) == 1 else None
    return None


def _negative(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and node.value < 0


def _time_order(left: str, right: str) -> int | None:
    """+1 when `left` reads as the later of the two, -1 as the earlier, None when they do not tell."""
    for way in (_cue_order(left, right), _number_order(left, right), _position_order(left, right)):
        if way is not None:
            return way
    return None


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+|\d+", text.lower())


def _cue_order(left: str, right: str) -> int | None:
    lw, rw = set(_words(left)), set(_words(right))
    for later, earlier in _CUES:
        if later in lw and earlier in rw and earlier not in lw and later not in rw:
            return 1
        if earlier in lw and later in rw and later not in lw and earlier not in rw:
            return -1
    months = [{_MONTH_WORDS[w] for w in side if w in _MONTH_WORDS} for side in (lw, rw)]
    if all(len(found) == 1 for found in months) and months[0] != months[1]:
        return 1 if max(months[0]) > max(months[1]) else -1
    quarters = [set(re.findall(r"(?<![a-z0-9])[qh]([1-4])(?!\d)", side.lower())) for side in (left, right)]
    if all(len(found) == 1 for found in quarters) and quarters[0] != quarters[1]:
        return 1 if max(quarters[0]) > max(quarters[1]) else -1
    return None


def _number_order(left: str, right: str) -> int | None:
    """`sales_2024 - sales_2023`, `score2 - score1`: the sides differ by one number only."""
    lw, rw = _words(left), _words(right)
    if len(lw) != len(rw):
        return None
    different = [(a, b) for a, b in zip(lw, rw) if a != b]
    if len(different) != 1 or not all(part.isdigit() for part in different[0]):
        return None
    a, b = (int(part) for part in different[0])
    return None if a == b else 1 if a > b else -1


def _position_order(left: str, right: str) -> int | None:
    """`s.iloc[-1] - s.iloc[0]`: the last row minus the first."""
    last, first = re.compile(r"\[\s*-\s*1\s*\]"), re.compile(r"\[\s*0\s*\]")
    if last.search(left) and first.search(right):
        return 1
    if first.search(left) and last.search(right):
        return -1
    return None
