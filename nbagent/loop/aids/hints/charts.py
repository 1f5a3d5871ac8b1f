"""A chart call that failed on what it was given: Period values matplotlib cannot place, totals that joined texts.

The messy run grouped `orders` by `order_date.dt.to_period("M")`, totalled `amount` (numbers written as text, so the
total joined the texts) and passed both to `plt.bar`: "the dtypes of parameters x (object) and width (float64) are
incompatible", twice, then a chart of an empty frame. Neither half of the mistake is in matplotlib's words.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..coercions import number_conversion
from ..data_card import filled_text
from .code_names import series_of
from .conversions import numbers_columns_named
from .failure import Failure, parsed, segment
from .values import examples, first_values

__all__ = ["chart_arguments"]

_PLOTS = frozenset({"bar", "barh", "plot", "scatter", "step", "stem", "fill_between", "stackplot", "hist", "pie"})
_DATA_KEYWORDS = frozenset({"x", "y", "height", "width", "left", "bottom", "y1", "y2"})
_NUMBERS_AS_TEXT = re.compile(r"(?:-?[$€£(]?-?\d[\d,]*(?:\.\d+)?\)?)+")
_SHOWN = 40  # characters of a text total shown


def chart_arguments(found: Failure) -> str:
    """The hint for a matplotlib call that failed on Period values or on a total that joined texts, or ""."""
    statement = found.statement or found.source
    tree = parsed(statement)
    call = next((node for node in ast.walk(tree) if _is_plot_call(node)), None) if tree else None
    if call is None:
        return ""
    nodes = [*call.args, *(keyword.value for keyword in call.keywords if keyword.arg in _DATA_KEYWORDS)]
    periods, joined = [], []
    for node in nodes:
        values = series_of(node, found.namespace)
        if values is None:
            continue
        if _holds_periods(values):
            periods.append((segment(statement, node), values))
        elif _joined_texts(values):
            joined.append((segment(statement, node), values))
    said = [
        f"{ref} holds Period values ({examples(values, 2)}), which matplotlib cannot place on an axis: "
        f"pass {ref}.astype(str)"
        for ref, values in periods
    ]
    said += [
        f"{ref} holds text, not numbers ({_start(values)}…): a total of numbers written as text joins the texts. "
        f"Convert the column to numbers before you total it, into a new variable: {_conversion(found)}"
        for ref, values in joined
    ]
    return f"Hint: {'; and '.join(said)}." if said else ""


def _is_plot_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PLOTS


def _holds_periods(values: Any) -> bool:
    if str(values.dtype).startswith("period"):
        return True
    shown = [value for value in first_values(values, 20) if value == value]
    return bool(shown) and all(type(value).__name__ == "Period" for value in shown)


def _joined_texts(values: Any) -> bool:
    """Numbers written as text, one per value or joined by a total ('$315.92$1,891.37…'), in every filled value."""
    texts = filled_text(values.iloc[:200])
    return bool(texts) and all(_NUMBERS_AS_TEXT.fullmatch(text.strip()) for text in texts)


def _start(values: Any) -> str:
    return repr(str(next(iter(filled_text(values.iloc[:20])), ""))[:_SHOWN])


def _conversion(found: Failure) -> str:
    """The conversion of the notebook frame's column the code totalled, when the code names exactly one such column."""
    columns = numbers_columns_named(found)
    if len(columns) == 1:
        return number_conversion(f"{columns[0][0]}[{columns[0][1]!r}]")
    return number_conversion("<column>")
