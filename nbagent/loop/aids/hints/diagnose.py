"""`execution_hint`: after a failed step, the first rule that names the mistake speaks.

It reads the error (`error_keys` reads pandas' and numpy's wordings) and the code's failing statement
against the namespace, and says the diagnosis, not the symptom. The rules are tried in a fixed order; a
rule that fails on the data a notebook holds says nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .charts import chart_arguments
from .code_errors import final_answer_arguments, long_code, undefined_name
from .comparisons import compared_types_hint, mask_precedence, nothing_found
from .conversions import already_converted, text_conversion, whole_frame_converted
from .failure import Failure, failing_line, failing_statement
from .grouping import column_of_a_grouped_series, grouped_total, product_grouped, series_grouped_by_name, table_total
from .lookups import missing_attribute_hint, missing_key, row_numbers, tuple_subset
from .merges import merge_hint
from .shapes import numpy_hint

__all__ = ["execution_hint"]


def execution_hint(failure: Any, code: str, namespace: dict[str, Any], task: str, earlier_code: str = "") -> str:
    """One or two lines that help the next step recover from `failure` (an `ExecutionError`), or "".

    The first rule that applies speaks: a missed row label gets the index's kind and labels; a misspelled
    method the close method names; a missing column the columns of the frames the code uses; a merge key
    the columns that match it; a comparison of text with a number the column's values; an unknown name
    the variables the task describes (or that the earlier step that assigns it did not run); a
    `SyntaxError` in long code a reminder to use variables instead of typing data.
    """
    message = str(failure)
    source = failing_line(message)
    found = Failure(
        cause=getattr(failure, "cause_type", "") or "",
        message=message,
        source=source,
        statement=failing_statement(message, code) or source.strip(),
        code=code,
        namespace=namespace,
        task=task,
        earlier_code=earlier_code,
    )
    for rule in _RULES:
        try:
            hint = rule(found)
        except Exception:  # advice over any data a notebook holds: a rule that fails says nothing
            hint = ""
        if hint:
            return hint
    return ""


_RULES: tuple[Callable[[Failure], str], ...] = (
    final_answer_arguments,
    product_grouped,
    series_grouped_by_name,
    column_of_a_grouped_series,
    mask_precedence,
    merge_hint,
    compared_types_hint,
    whole_frame_converted,
    chart_arguments,
    text_conversion,
    already_converted,
    grouped_total,
    table_total,
    row_numbers,
    tuple_subset,
    missing_attribute_hint,
    missing_key,
    numpy_hint,
    undefined_name,
    long_code,
    nothing_found,
)
