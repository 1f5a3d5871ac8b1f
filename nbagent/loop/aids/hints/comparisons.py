"""Comparison mistakes: & and | without parentheses, text compared with a number (or numbers with text).

A text column compared with a number holds text: the comparison fails on its types, or selects nothing
and a later `.iloc[0]` fails; either way the hint says what the column holds and how to compare it.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..error_keys import compared_types, error_line
from ..selections import empty_selection_lines
from .code_names import UNKNOWN, series_of
from .failure import Failure, parsed, segment
from .values import NUMBER, all_whole_numbers, as_number, examples, values_kind

__all__ = ["mask_precedence", "compared_types_hint", "nothing_found"]


_MASK_PRECEDENCE = re.compile(r"unsupported operand type\(s\) for [&|]|Cannot perform '(rand|ror|and|or)_'")


_NOTHING_FOUND = re.compile(r"out-of-bounds|out of bounds|empty sequence|empty|division by zero")


def mask_precedence(found: Failure) -> str:
    if _MASK_PRECEDENCE.search(found.message) and re.search(r"[=<>]=?[^()]*[&|]", found.source):
        return (
            "Hint: & and | bind before == and <: put each comparison in parentheses, "
            'df[(df["a"] == x) & (df["b"] == y)].'
        )
    return ""


_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def compared_types_hint(found: Failure) -> str:
    """A comparison that failed on its types (text with a number): the column's values, said."""
    if found.cause != "TypeError" or not compared_types(found.message):
        return ""
    return _mismatched_comparison(found.statement, found.namespace)


def nothing_found(found: Failure) -> str:
    """An empty selection failed later (`.iloc[0]` out of bounds): a filter that compares text with a number, or
    with a value the column never takes."""
    if not _NOTHING_FOUND.search(error_line(found.message)):
        return ""
    said = _mismatched_comparison(found.code, found.namespace)
    if said:
        return said.replace("Hint: ", "Hint: nothing was selected: ", 1)
    empty = empty_selection_lines(found.code, found.namespace)
    return empty[0].replace("Note: ", "Hint: nothing was selected: ", 1).rstrip("\n") if empty else ""


def _mismatched_comparison(code: str, namespace: dict[str, Any]) -> str:
    text = code.strip()
    tree = parsed(text)
    for node in ast.walk(tree) if tree else ():
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPERATORS):
            continue
        operator = _OPERATORS[type(node.ops[0])]
        for column, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            series = series_of(column, namespace)
            value = other.value if isinstance(other, ast.Constant) else UNKNOWN
            said = _mismatch(segment(text, column), series, value, operator) if series is not None else ""
            if said:
                return said
    return ""


def _mismatch(shown: str, series: Any, value: Any, operator: str) -> str:
    """One line when a column of one kind (text, numbers, dates) is compared with a value of another, else ""."""
    kind = values_kind(series)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "text" and number:
        fix = (
            f"convert it first: {shown}.astype(int) {operator} {value!r}"
            if all_whole_numbers(series)
            else "compare it with text written as the column writes it"
        )
        return (
            f"Hint: `{shown}` holds text ({examples(series)}), the code compares it with the number {value!r}: {fix}."
        )
    if kind == "number" and isinstance(value, str):
        fix = (
            f"write the number without quotes: {shown} {operator} {as_number(value.strip())}"
            if NUMBER.fullmatch(value.strip())
            else "compare it with a number"
        )
        return f"Hint: `{shown}` holds numbers ({series.dtype}), the code compares it with the text {value!r}: {fix}."
    if kind == "date" and number:
        return (
            f"Hint: `{shown}` holds dates ({examples(series, 2)}), the code compares it with the number {value!r}: "
            f"compare it with a date, or a part of it ({shown}.dt.month {operator} {value!r}, .dt.year, .dt.day)."
        )
    return ""
