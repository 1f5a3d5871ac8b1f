"""The task's frames keep their rows and columns for the whole run: code that would take some out is not run.

A small model cleans in place: `orders.dropna(inplace=True)`, `clients = clients.drop('segment', axis=1)`. What is
taken out is gone for every later step, and the later steps are the model's second tries: measured on messy
notebook data, a net revenue whose rows a `dropna(inplace=True)` had lost could no longer come out right however
the model fixed its sign, and a "which segment" question answered from a segment column the model made up after it
had dropped the real one. Said before the code runs, with the line that keeps the frame (a new variable), nothing is
lost. Not said where the question asks to change the data (drop, remove, clean…), for what takes out nothing (a
`dropna` of a frame without gaps), or for `drop_duplicates` (an exact repeat holds nothing the first row does not,
and the questions ask to count each row once) unless the question is about the repeats themselves.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from .code_checks import in_place, is_method_call
from .data_card import value_kind

__all__ = ["frame_losses"]

_CHANGE_ASKED = re.compile(r"\b(drop|remov|delet|clean|filter|dedup|overwrit|modif|updat|in.place)\w*", re.IGNORECASE)
_REPEATS_ASKED = re.compile(r"\b(duplicat|repeat)\w*", re.IGNORECASE)
_SKIP_GAPS = ("sum", "mean", "median", "max", "min", "std")
_LOSSY = ("dropna", "drop", "query", "drop_duplicates", "pop")


def frame_losses(code: str, question: str, namespace: dict[str, Any], task_names: list[str]) -> str:
    """Why `code` must not run as written (it takes rows or columns out of a frame the task named), or ""."""
    if _CHANGE_ASKED.search(question):
        return ""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    frames = {name for name in task_names if value_kind(namespace.get(name)) == "DataFrame"}
    for statement in ast.walk(tree):
        found = _loss(statement, frames, namespace, question)
        if found:
            name, what = found
            line = ast.get_source_segment(code, statement) or ast.unparse(statement)
            return (
                f"Line {statement.lineno}: `{line}` would take {what} out of `{name}`, the data the task gave, for "
                f"the rest of the run. Leave `{name}` as it is: put what you need into a new variable (a name of "
                f"your own, e.g. `kept = {name}...`){_gaps_skipped(statement, tree)}. The code did not run."
            )
    return ""


def _gaps_skipped(statement: ast.AST, tree: ast.Module) -> str:
    """A dropna before a total or a mean: pandas skips the gaps there on its own (the messy run, refused its
    `orders.dropna(inplace=True)` before `orders['amount'].sum()`, went off to merge and count rows instead)."""
    dropped = any(is_method_call(node, "dropna") for node in ast.walk(statement))
    reduced = sorted({node.func.attr for node in ast.walk(tree) if is_method_call(node, *_SKIP_GAPS)})
    if not dropped or not reduced:
        return ""
    return f"; or leave the line out: .{reduced[0]}() skips the gaps on its own"


def _loss(statement: ast.AST, frames: set[str], namespace: dict[str, Any], question: str) -> tuple[str, str] | None:
    """(frame name, what goes) for a statement that changes a task frame in place or rebinds its name to less."""
    if isinstance(statement, ast.Delete):
        for target in statement.targets:
            if isinstance(target, ast.Subscript) and _named(target.value) in frames:
                return _named(target.value), "a column"
        return None
    if isinstance(statement, ast.Expr) and is_method_call(statement.value, *_LOSSY):
        call = statement.value
        name = _named(call.func.value)
        changes = call.func.attr == "pop" or in_place(call)
        return _taken(name, call, namespace, question) if changes and name in frames else None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        name = _named(statement.targets[0])
        if name not in frames:
            return None
        value = statement.value
        if is_method_call(value, *_LOSSY) and _named(value.func.value) == name:
            return _taken(name, value, namespace, question)
        if isinstance(value, ast.Subscript) and _selects_from(value, name):
            return name, "rows or columns"
    return None


def _taken(name: str, call: ast.Call, namespace: dict[str, Any], question: str) -> tuple[str, str] | None:
    """What the call takes out of the frame `name`, or None when it takes nothing the question needs."""
    method = call.func.attr
    frame = namespace[name]
    if method == "drop_duplicates":
        return (name, "its repeated rows") if _REPEATS_ASKED.search(question) else None
    if method == "dropna":
        return _gap_rows(name, call, frame)
    if method == "pop":
        return name, "a column"
    if method == "drop" and _drops_columns(call):
        return name, "columns"
    return name, "rows"


def _gap_rows(name: str, call: ast.Call, frame: Any) -> tuple[str, str] | None:
    """The rows `dropna` would take: those with a gap in any column (or in its `subset=`); None if there are none."""
    subset = next((k.value for k in call.keywords if k.arg == "subset"), None)
    columns = _texts(subset) if subset is not None else list(frame.columns)
    columns = [column for column in columns if column in frame.columns]
    gaps = frame[columns].isna() if columns else frame.isna()
    rows = int(gaps.any(axis=1).sum())
    if not rows:
        return None
    counted = ", ".join(f"{column} {int(count)}" for column, count in gaps.sum().items() if count)
    return name, f"the {rows} rows with a gap ({counted}), and their values in the other columns"


def _drops_columns(call: ast.Call) -> bool:
    keywords = {k.arg: k.value for k in call.keywords}
    axis = keywords.get("axis")
    by_axis = isinstance(axis, ast.Constant) and axis.value in (1, "columns")
    positional_axis = len(call.args) > 1 and isinstance(call.args[1], ast.Constant) and call.args[1].value == 1
    return "columns" in keywords or by_axis or positional_axis


def _selects_from(node: ast.Subscript, name: str) -> bool:
    """`name[...]` or `name.loc[...]`/`name.iloc[...]`: a selection of the frame's own rows or columns."""
    value = node.value
    if isinstance(value, ast.Attribute) and value.attr in ("loc", "iloc"):
        value = value.value
    return _named(value) == name


def _texts(node: ast.AST) -> list[str]:
    items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    return [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]


def _named(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else ""
