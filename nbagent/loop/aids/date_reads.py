"""Dates written as text in several formats, read as dates where the code reads them as dates and would fail.

Measured on messy notebook data: the 1.5B model's first step read a column of text dates ('2024-01-01',
'01/02/2024', 'January 3, 2024') with `.dt` (5 questions of 20: "Can only use .dt accessor with datetimelike
values") or with `pd.to_datetime(column)` ("time data … doesn't match format"), and the next step wrote the
hint's line. Both fail whatever the data holds, so before a step runs each such read of a column of the notebook's
frames is written as the conversion that reads every format, `pd.to_datetime(column, format='mixed',
errors='coerce')`, and the step says so. Nothing of the model's runs on the data to decide it: nbagent's own
classifier (`nbagent.data.cleaning.date_format`) reads the column's distinct texts.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from .code_checks import CodeFix, Edit, fixed, frame_column
from .coercions import has_pandas
from .data_card import filled_text, text_kind
from .reconversions import notebook_column

__all__ = ["fix_date_reads", "date_conversion"]

_SHOWN = 3
_MAX_DISTINCT = 200_000


def date_conversion(column: str) -> str:
    """The line that reads a column of dates written in several formats (`column` as the code names it)."""
    return f"pd.to_datetime({column}, format='mixed', errors='coerce')"


def fix_date_reads(code: str, namespace: dict[str, Any]) -> CodeFix:
    """`code` with each `frame[col].dt` and `pd.to_datetime(frame[col])` (no format, no options but `errors`) of a
    notebook frame's column of dates written as text in several formats read through `date_conversion`."""
    if not has_pandas(code, namespace):
        return CodeFix(code)
    return fixed(code, lambda tree: _date_edits(tree, namespace))


def _date_edits(tree: ast.Module, namespace: dict[str, Any]) -> Iterator[Edit]:
    for node in ast.walk(tree):
        read = _date_read(node)
        why = _text_dates(read, tree, namespace, _how_it_fails(node)) if read is not None else ""
        if why:
            yield (node if isinstance(node, ast.Call) else read), date_conversion(ast.unparse(read)), why


def _date_read(node: ast.AST) -> ast.Subscript | None:
    """The `frame["col"]` that `node` reads as dates: `frame["col"].dt`, or `pd.to_datetime(frame["col"])` with no
    option but `errors`; None otherwise."""
    if isinstance(node, ast.Attribute) and node.attr == "dt" and frame_column(node.value):
        return node.value
    if (
        isinstance(node, ast.Call)
        and ast.unparse(node.func) == "pd.to_datetime"
        and len(node.args) == 1
        and frame_column(node.args[0])
        and all(keyword.arg == "errors" for keyword in node.keywords)
    ):
        return node.args[0]
    return None


def _how_it_fails(node: ast.AST) -> str:
    if not isinstance(node, ast.Call):
        return ".dt reads only dates"
    if node.keywords:  # errors=: the only option a rewritten call has
        return "pd.to_datetime without format='mixed' reads the dates not in its first format as missing (NaT)"
    return "pd.to_datetime without format='mixed' fails on them"


def _text_dates(read: ast.Subscript, tree: ast.Module, namespace: dict[str, Any], fails: str) -> str:
    """Why the column `read` names must be read as `date_conversion` (`fails`: what the code's read would do), or
    "" when it is not a notebook frame's column of dates written as text as the code finds it: in any format for
    `.dt`, in several for `pd.to_datetime` (one format it reads)."""
    accessor = fails.startswith(".dt")
    frame_name, column = frame_column(read)
    values = notebook_column(read, tree, namespace)
    if values is None or values.dtype.kind in "biufcmM":
        return ""
    written = filled_text(values)
    if len(written) > _MAX_DISTINCT or text_kind(written) != "dates":
        return ""
    from nbagent.data.cleaning import date_format  # pandas is loaded: the values are a frame's

    formats = {date_format(text) for text in written} - {None}
    if len(formats) < (1 if accessor else 2):
        return ""
    shown = ", ".join(repr(text) for text in _one_of_each(written, date_format))
    several = f" in {len(formats)} formats" if len(formats) > 1 else ""
    return (
        f"{frame_name}[{column!r}] holds dates written as text{several} ({shown}), and {fails}; this reads every "
        "format (a blank, or a text that is no date, becomes NaT)"
    )


def _one_of_each(written: Any, date_format: Any) -> list[str]:
    """A text of each format, in the order the column first writes them."""
    seen: dict[str, str] = {}
    for text in written:
        seen.setdefault(date_format(text) or "", text)
    return [text for kind, text in seen.items() if kind][:_SHOWN]
