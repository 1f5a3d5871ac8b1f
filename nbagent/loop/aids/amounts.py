"""An amount asked, a count given: "What is our net revenue …?" answered by counting rows.

The messy run's net revenue question ended with `orders['order_id'].count() - merged['refund_id'].count()`: a
difference of two row counts, accepted as the revenue (0) once the refusal budget was spent. How many rows there are
is never how much money they hold: an answer the code reached by counting only, with no total, mean or other
reduction of values anywhere, is proved wrong for a question that asks how much (an amount, revenue, a price), unless
the question also asks how many (a count, a number of, a share).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .bindings import through_wrappers
from .code_checks import frame_column, is_method_call, is_text
from .data_card import value_kind

__all__ = ["counted_for_an_amount", "label_for_an_amount", "mean_over_gaps"]

_AMOUNT_ASKED = re.compile(
    r"\b(?:amount|revenue|money|spent|spend|sales|prices?|costs?|refunded|paid|income|profit|how\s+much)\b",
    re.IGNORECASE,
)
_COUNT_ASKED = re.compile(
    r"\bhow\s+many\b|\bnumber\s+of\b|\bcounts?\b|\bpercent|\bshare\b|\brate\b|\bratio\b|\bproportion\b|"
    r"\bfraction\b|\bhow\s+often\b|\btimes\b",
    re.IGNORECASE,
)
_THING_ASKED = re.compile(r"\b(?:which|who|whose)\b", re.IGNORECASE)  # a thing, not an amount (answer_labels)
_NAMED = re.compile(r"`[^`]*`")
# "What was the revenue …?", "How much …?": the question opens by asking an amount
_OPENS_WITH_AN_AMOUNT = re.compile(
    r"^\s*(?:what\s+(?:was|is|were|are)\s+(?:the\s+|our\s+)?(?:total\s+|net\s+|gross\s+|average\s+|mean\s+)?"
    r"(?:amount|revenue|money|spend|sales|price|cost|income|profit)\b|how\s+much\b)",
    re.IGNORECASE,
)
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")
_COUNTING = frozenset({"count", "size", "nunique", "value_counts"})
_COUNTING_ATTRIBUTES = frozenset({"shape", "size"})
_REDUCING = frozenset(
    "sum mean median max min agg aggregate std var prod cumsum quantile describe apply transform nlargest "
    "nsmallest idxmax idxmin dot mode pivot_table".split()
)
_REDUCING_BUILTINS = frozenset({"sum", "max", "min"})


def counted_for_an_amount(question: str, tree: ast.Module) -> list[str]:
    """Why the answer code (`tree`, the statements the answer depends on) counts rows for an amount ([] if not)."""
    words = _NAMED.sub(" ", question)  # `sales` is a frame's name, not a word of the question
    if not _AMOUNT_ASKED.search(words) or _COUNT_ASKED.search(words) or _THING_ASKED.search(words):
        return []
    counted = _counting(tree)
    if not counted or _reduces_values(tree):
        return []
    word = _AMOUNT_ASKED.search(words).group(0).lower()
    return [
        f"the question asks how much ({word}), but the answer is a count of rows ({counted}): how many rows there "
        "are is not how much they hold. Total the values instead (the numbers of the amount column, .sum()), "
        "and answer with that"
    ]


def label_for_an_amount(question: str, answer: Any) -> list[str]:
    """A question that opens by asking an amount ("What was the revenue of …?") answered with a word ("West"):
    text without a digit is never an amount (the clean run printed the revenue per region and answered with the
    top region's name)."""
    if not isinstance(answer, str) or _DIGIT.search(answer) or not _LETTER.search(answer):
        return []
    words = _NAMED.sub(" ", question)
    asked = _OPENS_WITH_AN_AMOUNT.search(words)
    if not asked or _THING_ASKED.search(words):
        return []
    return [
        f"the question asks {asked.group(0).strip().lower()}, an amount, but the answer is a label ({answer!r}): "
        "answer with the number itself"
    ]


def _counting(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in _COUNTING:
                return f".{node.func.attr}()"
            if isinstance(node.func, ast.Name) and node.func.id == "len":
                return "len()"
        if isinstance(node, ast.Attribute) and node.attr in _COUNTING_ATTRIBUTES and isinstance(node.ctx, ast.Load):
            return f".{node.attr}"
    return ""


def _reduces_values(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCING:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in _REDUCING_BUILTINS:
            return True
    return False


def mean_over_gaps(tree: ast.Module, namespace: dict[str, Any]) -> list[str]:
    """An average written by hand, `frame['col'].sum() / <a count of frame's rows>`, where the column has gaps: the
    total skips them and the count does not (the messy run's Laptop average, 3270.0 for 3415.33, after its amounts
    were read as numbers and two blanks became gaps). pandas' `.mean()` skips them in both. Also a mean of group sums
    where some groups hold only gaps (`_group_sums_averaged`)."""
    for node in ast.walk(tree):
        if said := _group_sums_averaged(node, tree, namespace):
            return [said]
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
            continue
        total = through_wrappers(node.left, tree)
        if not (isinstance(total, ast.Call) and isinstance(total.func, ast.Attribute) and total.func.attr == "sum"):
            continue
        column = total.func.value
        values = _column_values(column, namespace)  # read, never evaluated: the code is the model's
        if values is None or not _counts_rows(through_wrappers(node.right, tree), column):
            continue
        gaps = int(values.isna().sum())
        if gaps:
            shown = ast.unparse(column)
            return [
                f"{ast.unparse(node)} divides {shown}.sum(), which skips the {gaps} gaps of {shown}, by a count "
                f"of rows that includes them: the average of the values there are is {shown}.mean(), so write "
                f"{shown}.mean() where the code has {ast.unparse(node)}"
            ]
    return []


def _group_sums_averaged(node: ast.AST, tree: ast.Module, namespace: dict[str, Any]) -> str:
    """`frame.groupby('key')['col'].sum().mean()`, where some groups hold only gaps of `col`: their sum is 0, and the
    mean counts those zeros (the messy run's Laptop average again, 3269.99 for 3415.33, per order_id)."""
    if not is_method_call(node, "mean"):
        return ""
    summed = through_wrappers(node.func.value, tree)
    if not is_method_call(summed, "sum") or summed.args or summed.keywords:
        return ""
    column = summed.func.value
    if not (isinstance(column, ast.Subscript) and is_text(column.slice)):
        return ""
    grouped = through_wrappers(column.value, tree)
    if not (is_method_call(grouped, "groupby") and isinstance(grouped.func.value, ast.Name) and grouped.args):
        return ""
    frame, key, name = namespace.get(grouped.func.value.id), grouped.args[0], column.slice.value
    if value_kind(frame) != "DataFrame" or not is_text(key) or {key.value, name} - set(frame.columns):
        return ""
    empty = int(frame.groupby(key.value)[name].sum(min_count=1).isna().sum())
    if not empty:
        return ""
    written = ast.unparse(summed)
    return (
        f"{written} gives 0 for the {empty} {key.value} groups whose {name} is missing, and .mean() counts those "
        f"zeros as values: write {written.removesuffix('()')}(min_count=1).mean(), which leaves them out"
    )


def _column_values(column: ast.AST, namespace: dict[str, Any]) -> Any:
    """The values of `frame['col']` for a frame of the namespace, or None for any other shape."""
    named = frame_column(column)
    frame = namespace.get(named[0]) if named else None
    if value_kind(frame) != "DataFrame" or named[1] not in frame.columns:
        return None
    return frame[named[1]]


def _counts_rows(node: ast.AST, column: ast.AST) -> bool:
    """`len(frame)`, `frame.shape[0]`, `frame.index.size`, or `frame['other'].nunique()` / `.count()`: how many rows
    (or orders), gaps of `column` or not (`column.count()` skips them)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        return True
    if is_method_call(node, "nunique", "count"):
        return ast.dump(node.func.value) != ast.dump(column)
    return isinstance(node, ast.Attribute) and node.attr == "size" or is_method_call(node, "size")
